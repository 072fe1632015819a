//! Workers keep the caller's gate: a worker spawned from a plan-surface call runs with
//! `AGENT_TOOLS_SURFACE=plan`, and an `agent-tools` host it starts sees only read tools, whatever
//! `--surface` it is given.

#![allow(clippy::unwrap_used)]

mod common;

use common::{BIN, Client};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_worker_spawned_on_the_plan_surface_sees_only_read_tools() {
    let dir = tempfile::tempdir().unwrap();
    let worker = dir.path().join("worker.sh");
    // The worker asks for the full surface; its host must narrow it to the spawning call's gate.
    std::fs::write(
        &worker,
        format!(
            "#!/bin/sh\necho \"gate=$AGENT_TOOLS_SURFACE\"\nexec '{BIN}' tools --surface full --root \"$PWD\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Client::start_with(
        dir.path(),
        &["--vibe", "--surface", "plan"],
        &[("AGENT_TOOLS_VIBE_FAST", worker.as_path())],
    );
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let spawn = c.rpc(
        2,
        "tools/call",
        json!({"name": "vibe_spawn", "arguments": {"brief": "list your tools", "label": "gate"}}),
    );
    assert_eq!(spawn["result"]["isError"], false, "{spawn}");
    let wait = c.rpc(
        3,
        "tools/call",
        json!({"name": "vibe_wait", "arguments": {"worker_id": "w1", "timeout_seconds": 60}}),
    );
    let text = wait["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("gate=plan"), "{text}");
    assert!(text.contains("surface: plan"), "{text}");
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"read"), "{text}");
    for write_or_exec in ["write", "edit", "apply_patch", "eval", "debug", "ast_edit"] {
        assert!(!names.contains(&write_or_exec), "{write_or_exec} in {text}");
    }
}
