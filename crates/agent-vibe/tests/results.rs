//! Every `vibe_*` result as a model and a client read it: the text, the structured content and
//! the error flag, across a worker's life (spawned, waited for, sent a message, killed, listed),
//! in one snapshot. Times are redacted.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface};
use agent_vibe::{VibeConfig, WorkerCommand, attach};
use serde_json::json;
use std::time::Duration;

const ECHO: &str =
    "#!/bin/sh\nbrief=$(cat)\nprintf 'worker %s read:\\n%s\\n' \"$VIBE_WORKER_ID\" \"$brief\"\n";

/// Silent until its brief says `finish`.
const SLOW: &str = "#!/bin/sh\nbrief=$(cat)\ncase \"$brief\" in\n  *finish*) echo 'finished after a message'; exit 0 ;;\nesac\nexec sleep 600\n";

#[tokio::test]
async fn every_result_text_and_structured() {
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        WorkerCommand::new(p.display().to_string(), [""; 0])
    };
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    attach(
        &registry,
        VibeConfig {
            vibe_mode: true,
            fast: Some(script("echo.sh", ECHO)),
            good: Some(script("slow.sh", SLOW)),
            stall_after: Duration::ZERO,
            ..Default::default()
        },
    );
    // (name, tool, arguments); no tool: let the workers run a moment
    let cases = [
        ("list, empty", "vibe_list", json!({})),
        (
            "spawn",
            "vibe_spawn",
            json!({"brief": "first task", "label": "echo"}),
        ),
        (
            "wait, ended",
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_s": 60}),
        ),
        (
            "wait again",
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_s": 60}),
        ),
        (
            "send, result read",
            "vibe_send",
            json!({"worker_id": "w1", "message": "second task"}),
        ),
        (
            "wait after the send",
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_s": 60}),
        ),
        (
            "spawn a silent worker",
            "vibe_spawn",
            json!({"brief": "wait", "label": "slow", "tier": "good"}),
        ),
        (
            "wait, still running",
            "vibe_wait",
            json!({"worker_id": "w2", "timeout_s": 0.3}),
        ),
        ("list, one running and stalled", "vibe_list", json!({})),
        (
            "send, run stopped",
            "vibe_send",
            json!({"worker_id": "w2", "message": "finish"}),
        ),
        (
            "wait for the rerun",
            "vibe_wait",
            json!({"worker_id": "w2", "timeout_s": 60}),
        ),
        (
            "spawn, not waited for",
            "vibe_spawn",
            json!({"brief": "third task", "label": "unread"}),
        ),
        ("pause", "", json!({})),
        ("list, a result unread", "vibe_list", json!({})),
        (
            "send, result unread",
            "vibe_send",
            json!({"worker_id": "w3", "message": "fourth task"}),
        ),
        (
            "spawn another",
            "vibe_spawn",
            json!({"brief": "wait", "label": "slow-2", "tier": "good"}),
        ),
        ("kill", "vibe_kill", json!({"worker_id": "w4"})),
        ("kill again", "vibe_kill", json!({"worker_id": "w4"})),
        (
            "wait for the killed",
            "vibe_wait",
            json!({"worker_id": "w4", "timeout_s": 60}),
        ),
        (
            "wait for w3",
            "vibe_wait",
            json!({"worker_id": "w3", "timeout_s": 60}),
        ),
        ("list, all", "vibe_list", json!({})),
    ];
    let mut report = String::new();
    for (name, tool, args) in cases {
        if tool.is_empty() {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            continue;
        }
        let out = registry.call(tool, args, Surface::ReadOnly).await;
        report.push_str(&format!(
            "## {name}\nis_error: {}\ntext:\n{}\nstructured: {}\n\n",
            out.is_error,
            out.text
                .replace(&dir.path().display().to_string(), "[ROOT]"),
            serde_json::to_string_pretty(&out.structured).unwrap()
        ));
    }
    insta::with_settings!({filters => vec![
        // agent_tier::display::duration: 850ms, 1.5s, 45s, 1m30s, 5m, 2h
        (r"\b(?:\d+ms|\d+h(?:\d+m)?(?:\d+s)?|\d+m(?:\d+s)?|\d+(?:\.\d)?s)\b", "[T]"),
        (r#""(elapsed_seconds|last_output_seconds_ago)": [0-9.e-]+"#, r#""$1": "[S]""#),
    ]}, {
        insta::assert_snapshot!("results", report);
    });
}
