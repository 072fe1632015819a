//! The host's log: with `AGENT_TOOLS_LOG=info` a `serve` run writes one line per tool call (its
//! name, surface, origin and the time it took) to `--log-file`, or to stderr without it; stdout
//! carries MCP messages and nothing else; with the default level a normal run logs nothing.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// `serve` fed `initialize` and one `read` call, then end of input: (stdout, stderr).
fn serve(root: &Path, level: Option<&str>, extra: &[&str]) -> (String, String) {
    let input: String = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "a.txt"}}}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect();
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .args(extra)
        .arg("--root")
        .arg(root)
        .env_remove("AGENT_TOOLS_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(level) = level {
        cmd.env("AGENT_TOOLS_LOG", level);
    }
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    // Only protocol on stdout: every line a JSON-RPC message, the call answered.
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {l}")))
        .collect();
    assert!(replies.iter().all(|r| r["jsonrpc"] == "2.0"), "{stdout}");
    assert!(
        replies.iter().any(|r| r["id"] == 2
            && r["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("alpha"))),
        "{stdout}"
    );
    (stdout, String::from_utf8(out.stderr).unwrap())
}

/// The log line of the `read` call: the span with the tool's name, surface and origin, and the
/// time it took.
fn call_line(log: &str) -> Option<&str> {
    log.lines().find(|l| {
        [
            "tool_call{",
            "tool=\"read\"",
            "surface=full",
            "origin=",
            "time.busy=",
        ]
        .iter()
        .all(|part| l.contains(part))
    })
}

#[test]
fn a_call_is_logged_with_its_duration_to_the_log_file_or_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let log = dir.path().join("host.log");

    let (_, stderr) = serve(&root, Some("info"), &["--log-file", log.to_str().unwrap()]);
    assert_eq!(stderr, "", "the log went to the file, not stderr");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(call_line(&text).is_some(), "{text}");
    assert!(text.contains(" INFO "), "{text}");

    // Without --log-file the same lines go to stderr.
    let (_, stderr) = serve(&root, Some("info"), &[]);
    assert!(call_line(&stderr).is_some(), "{stderr}");

    // The default level (warn) logs nothing for a run that went well; an unreadable filter says
    // so once and falls back to it.
    let (_, stderr) = serve(&root, None, &[]);
    assert_eq!(stderr, "");
    let (_, stderr) = serve(&root, Some("info,=="), &[]);
    assert!(stderr.contains("AGENT_TOOLS_LOG"), "{stderr}");
    assert!(call_line(&stderr).is_none(), "{stderr}");
}

#[test]
fn a_log_file_that_cannot_be_opened_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["tools", "--log-file"])
        .arg(dir.path().join("no/such/dir/host.log"))
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--log-file"), "{stderr}");
    assert!(out.stdout.is_empty());
}
