//! While `vibe_wait` waits, the call's progress carries the worker's state and its last output
//! line.

#![allow(clippy::unwrap_used)]

use agent_tier::{Origin, ProgressSink, Registry, RunInfo, Surface};
use agent_vibe::{VibeConfig, WorkerCommand, attach};
use serde_json::json;

const STEPS: &str = r#"#!/bin/sh
cat > /dev/null
echo "starting"
echo "working on step 2"
exec sleep 600
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_reports_the_workers_state_and_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("steps.sh");
    std::fs::write(&script, STEPS).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    attach(
        &registry,
        VibeConfig {
            fast: Some(WorkerCommand::new(script.display().to_string(), [""; 0])),
            vibe_mode: true,
            ..Default::default()
        },
    );
    let spawned = registry
        .call(
            "vibe_spawn",
            json!({"brief": "count the steps", "label": "steps"}),
            Surface::ReadOnly,
        )
        .await;
    assert!(!spawned.is_error, "{}", spawned.text);
    let id = spawned.structured.unwrap()["worker_id"]
        .as_str()
        .unwrap()
        .to_string();

    let (sink, mut rx) = ProgressSink::channel();
    let listener = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(m) = rx.next().await {
            got.push(m);
        }
        got
    });
    let out = registry
        .call_with_progress(
            "vibe_wait",
            json!({"worker_id": id, "timeout_seconds": 3}),
            Surface::ReadOnly,
            Origin::Model,
            sink,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("still running"), "{}", out.text);
    let messages = listener.await.unwrap();
    assert!(
        messages.iter().any(
            |m| m.starts_with(&format!("{id} (steps, fast tier): running"))
                && m.contains("ago: working on step 2")
        ),
        "{messages:#?}"
    );

    let killed = registry
        .call("vibe_kill", json!({"worker_id": id}), Surface::ReadOnly)
        .await;
    assert!(!killed.is_error, "{}", killed.text);
}
