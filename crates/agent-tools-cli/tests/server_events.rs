//! A language server's life as the host reports it (issue 13), against the scripted fake Dart
//! server of agent-lsp's tests (`crates/agent-lsp/tests/support/fake_dart_lsp.py`: any request
//! on the word `crash` makes it exit with status 3):
//!
//! - the log (`AGENT_TOOLS_LOG=info`, `--log-file`) has the server's start (agent-proc's line,
//!   labelled with the supervisor's purpose, and the supervisor's own) and the crash line;
//! - the MCP client gets the crash as `notifications/message` at `warning` (logger = target,
//!   data naming the server), nothing below `notice` by default, and after
//!   `logging/setLevel info` the restart's `notice` and the new start's `info` too.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Kill `serve` (by its pid) if the test is still waiting after `secs`: a missing notification
/// then fails the read ("serve closed stdout") instead of hanging the run.
fn watchdog(pid: u32, secs: u64) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let until = std::time::Instant::now() + Duration::from_secs(secs);
        while std::time::Instant::now() < until {
            if d.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    });
    done
}

/// The next `notifications/message`'s params.
fn next_message(c: &mut Client) -> Value {
    c.until_method("notifications/message")["params"].clone()
}

/// The params of the `notifications/message` among `notes`.
fn messages(notes: Vec<Value>) -> Vec<Value> {
    notes
        .into_iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| n["params"].clone())
        .collect()
}

fn text(m: &Value) -> String {
    m["data"].to_string()
}

#[test]
fn a_server_crash_is_logged_and_sent_to_the_client() {
    agent_testkit::require("python3");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("pubspec.yaml"), "name: t\n").unwrap();
    std::fs::write(root.join("lib/main.dart"), "void main() {\n  crash();\n}\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../agent-lsp/tests/support/fake_dart_lsp.py")
        .canonicalize()
        .unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    std::fs::write(
        config.join("agent-tools/lsp.json"),
        json!({"servers": {"dart": {"commands": [["python3", script]]}}}).to_string(),
    )
    .unwrap();
    let log = dir.path().join("host.log");

    let mut c = Client::start_with(
        &root,
        &["--log-file", log.to_str().unwrap()],
        &[
            ("XDG_CONFIG_HOME", &config),
            ("AGENT_TOOLS_LOG", Path::new("info")),
        ],
    );
    let done = watchdog(c.child.id(), 120);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // The server dies mid-request: the call fails, and the client hears why.
    let crash = json!({"name": "lsp", "arguments": {"operation": "hover", "file": "lib/main.dart", "line": 2, "symbol": "crash"}});
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": crash}));
    let (reply, notes) = c.until(2);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let mut seen = messages(notes).into_iter();
    // Nothing below `notice` reaches a client that set no level (the start was `info`).
    let warning = loop {
        let m = seen.next().unwrap_or_else(|| next_message(&mut c));
        assert!(
            m["level"] != "info" && m["level"] != "debug",
            "below the default level: {m}"
        );
        if m["level"] == "warning" && text(&m).contains("exited unexpectedly") {
            break m;
        }
    };
    assert_eq!(warning["logger"], "agent_proc", "{warning}");
    let t = text(&warning);
    assert!(t.contains("language server dart for"), "{t}");
    assert!(t.contains("exited with status 3"), "{t}");
    assert!(
        !t.contains("\"stderr_tail_bytes\":0"),
        "the tail holds the last words: {t}"
    );

    // With `logging/setLevel info` the restart (a notice) and the new start (info) come too.
    let set = c.rpc(3, "logging/setLevel", json!({"level": "info"}));
    assert!(set["result"].is_object(), "{set}");
    let again =
        json!({"name": "lsp", "arguments": {"operation": "symbols", "file": "lib/main.dart"}});
    c.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": again}));
    let (reply, notes) = c.until(4);
    assert!(reply["result"].is_object(), "{reply}");
    let mut seen = messages(notes);
    let has = |seen: &[Value], level: &str, part: &str| {
        seen.iter()
            .any(|m| m["level"] == level && text(m).contains(part))
    };
    while !(has(&seen, "notice", "restarting language server dart")
        && has(&seen, "info", "started a child"))
    {
        seen.push(next_message(&mut c));
    }
    done.store(true, Ordering::SeqCst);
    drop(c);

    let log = std::fs::read_to_string(&log).unwrap();
    let line = |parts: &[&str]| log.lines().any(|l| parts.iter().all(|p| l.contains(p)));
    assert!(
        line(&[
            " INFO ",
            "agent_proc",
            "started a child",
            "language server dart for",
            "pid="
        ]),
        "{log}"
    );
    assert!(
        line(&[
            " INFO ",
            "agent_lsp::supervisor",
            "language server dart started for"
        ]),
        "{log}"
    );
    assert!(
        line(&[
            " WARN ",
            "agent_proc",
            "exited unexpectedly",
            "language server dart for",
            "exited with status 3",
            "stderr_tail_bytes="
        ]),
        "{log}"
    );
    assert!(
        line(&[
            " INFO ",
            "agent_lsp::supervisor",
            "restarting language server dart"
        ]),
        "{log}"
    );
}
