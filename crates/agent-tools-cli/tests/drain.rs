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

/// Issue 41: a cell that never ends, running when stdin closes. Before, its call got no reply at
/// all, and the host exited 15 s after stdin closed (our 10 s drain, then rmcp's own 5 s wait
/// for the handler). Now, at the end of the drain, the call is answered with an error that says
/// it was cancelled because the input closed, and cancelled; the host then exits cleanly.
#[test]
fn a_call_still_running_after_the_drain_is_answered_as_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--root"])
        .arg(dir.path())
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
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})).unwrap();
    assert!(next().unwrap().get("result").is_some());
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "eval", "arguments": {"language": "python", "description": "a cell that never ends", "code": "print('started', flush=True)\nwhile True:\n    pass"}}})).unwrap();
    // Give the kernel time to start and the cell to run before the input closes (if it closed
    // earlier, the call would still be running at the end of the drain: the same case).
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(stdin);
    let mut answered = None;
    while let Some(msg) = next() {
        if msg["id"] == 2 {
            answered = Some(msg);
        }
    }
    let answered = answered.expect("the running call got no reply after stdin closed");
    let message = answered["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("input closed") && message.contains("cancelled"),
        "{answered}"
    );
    assert!(child.wait().unwrap().success());
}
