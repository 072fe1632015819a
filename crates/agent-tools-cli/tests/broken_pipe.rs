//! `agent-tools call … | head`: when the reader of stdout goes away the host stops writing
//! quietly — no panic, no message, the command's own exit status.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// Run `agent-tools ARGS --root ROOT` with `input` on stdin, its stdout's reader closed before it
/// writes anything: (exit status, stderr).
fn with_reader_gone(root: &Path, args: &[&str], input: &str) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away first: every write the host makes meets a broken pipe.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (1..=50_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    let cases: [(&[&str], &str, i32); 5] = [
        (&["call", "read", r#"{"path": "big.txt"}"#], "", 0),
        // A tool error keeps its status even when nobody reads the message.
        (&["call", "read", r#"{"path": "missing.txt"}"#], "", 1),
        (&["tools", "--json"], "", 0),
        (&["doctor"], "", 0),
        (&["repl"], "read {\"path\": \"big.txt\"}\ntools\n", 0),
    ];
    for (args, input, code) in cases {
        let (status, stderr) = with_reader_gone(dir.path(), args, input);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(status, Some(code), "{args:?}: {stderr}");
    }
}
