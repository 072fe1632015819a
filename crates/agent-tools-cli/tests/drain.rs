//! End of input is not the end of the calls: when stdin closes while a call runs, its reply is
//! still written (within the bounded drain, 10 s: longer than the 5 s rmcp itself waits) before
//! the host exits.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

#[cfg(feature = "vibe")]
#[test]
fn a_call_running_when_stdin_closes_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let worker = dir.path().join("worker.sh");
    std::fs::write(&worker, "#!/bin/sh\nsleep 7\necho finished the slow job\n").unwrap();
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--vibe", "--root"])
        .arg(dir.path())
        .env("AGENT_TOOLS_VIBE_FAST", &worker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = || {
        let mut line = String::new();
        (stdout.read_line(&mut line).unwrap() > 0)
            .then(|| serde_json::from_str::<Value>(&line).unwrap())
    };
    for msg in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "vibe_spawn", "arguments": {"brief": "be slow", "label": "slow"}}}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
        let reply = next().unwrap();
        assert!(reply.get("result").is_some(), "{reply}");
    }
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "vibe_wait", "arguments": {"worker_id": "w1", "timeout_seconds": 60}}})).unwrap();
    drop(stdin);
    let mut answered = None;
    while let Some(msg) = next() {
        if msg["id"] == 3 {
            answered = Some(msg);
        }
    }
    let answered = answered.expect("the running call got no reply after stdin closed");
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    assert!(
        answered["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("finished the slow job"),
        "{answered}"
    );
    assert!(child.wait().unwrap().success());
}
