//! What `call` and `repl` print reaches a terminal as text: a file or a program's output holding
//! a window-title sequence, a clear screen, an OSC 52 clipboard write, a C1 control or a bidi
//! override is printed with those characters escaped visibly, and `--json` (the MCP result)
//! holds them escaped the same way, as every MCP result does. Each case printed them raw before.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::BIN;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// ESC ] 0 ; title BEL, ESC [ 2 J, OSC 52 (clipboard write), CSI as C1, DEL, U+202E, U+2066.
const EVIL: &str =
    "a\u{1b}]0;title\u{7}b\u{1b}[2Jc\u{1b}]52;c;aGVsbG8=\u{7}d\u{9b}2J\u{7f}\u{202e}e\u{2066}f";

/// What a terminal would act on or that reorders text, as the bytes printed.
fn raw_controls(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

fn evil_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("evil.txt"),
        format!("{EVIL}\nsecond line\n"),
    )
    .unwrap();
    dir
}

fn call(root: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("call")
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

const SHOWN: &str =
    "a\\x1b]0;title\\x07b\\x1b[2Jc\\x1b]52;c;aGVsbG8=\\x07d\\u{9b}2J\\x7f\\u{202e}e\\u{2066}f";

#[test]
fn call_read_prints_a_hostile_file_escaped() {
    let root = evil_root();
    let out = call(root.path(), &["read", r#"{"path":"evil.txt"}"#]);
    assert_eq!(raw_controls(&out), Vec::<char>::new(), "{out:?}");
    assert!(
        out.contains(&format!("1| {SHOWN}\n2| second line")),
        "{out}"
    );
}

#[test]
fn call_read_json_is_the_same_value_without_raw_controls() {
    let root = evil_root();
    let out = call(root.path(), &["read", r#"{"path":"evil.txt"}"#, "--json"]);
    assert_eq!(raw_controls(&out), Vec::<char>::new(), "{out:?}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // Escaped in the value itself (issue 41: every text over MCP is), not only by JSON.
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("1| {SHOWN}\n")), "{text:?}");
    assert_eq!(raw_controls(text), Vec::<char>::new(), "{text:?}");
}

#[test]
fn repl_prints_results_and_errors_escaped() {
    let root = evil_root();
    let mut child = Command::new(BIN)
        .args(["repl", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let missing = serde_json::json!({ "path": format!("no-{EVIL}.txt") });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("read {{\"path\":\"evil.txt\"}}\nread {missing}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert_eq!(raw_controls(&out), Vec::<char>::new(), "{out:?}");
    assert!(out.contains(&format!("1| {SHOWN}\n")), "{out}");
    assert!(
        out.contains(&format!("error: `path` = `no-{SHOWN}.txt`")),
        "{out}"
    );
}

/// A program's output (an `eval` cell's print) is program text too.
#[test]
fn call_eval_prints_program_output_escaped() {
    agent_testkit::require("python3");
    let root = tempfile::tempdir().unwrap();
    let code = format!("print({})", serde_json::to_string(EVIL).unwrap());
    let args = serde_json::json!({"description": "print hostile text", "language": "python", "code": code});
    let out = call(root.path(), &["eval", &args.to_string()]);
    assert_eq!(raw_controls(&out), Vec::<char>::new(), "{out:?}");
    assert!(out.contains(SHOWN), "{out}");
}
