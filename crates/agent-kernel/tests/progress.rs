//! While a cell runs, its output so far reaches the call's progress sink (the tail, bounded),
//! before the result; without a listener the cell runs as before.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_kernel::KernelConfig;
use agent_tier::{Origin, ProgressSink, Registry, RunInfo, Surface};
use serde_json::json;
use std::time::Duration;

fn registry(dir: &std::path::Path) -> Registry {
    let r = Registry::new(RunInfo {
        root: dir.to_path_buf(),
        ..Default::default()
    });
    agent_kernel::attach(&r, KernelConfig::default());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_so_far_arrives_while_the_cell_runs() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path());
    let (sink, mut rx) = ProgressSink::channel();
    let code = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('x' * 5000)\nprint('second')";
    let call = tokio::spawn({
        let r = r.clone();
        async move {
            r.call_with_progress(
                "eval",
                json!({"code": code, "description": "print twice with a pause between"}),
                Surface::Full,
                Origin::Model,
                sink,
            )
            .await
        }
    });
    let mut messages = Vec::new();
    let mut first_before_done = false;
    while let Some(m) = tokio::time::timeout(Duration::from_secs(60), rx.next())
        .await
        .expect("a progress message or the end of the call")
    {
        if m.contains("first") && !call.is_finished() {
            first_before_done = true;
        }
        messages.push(m);
    }
    let out = call.await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("first") && out.text.contains("second"),
        "{}",
        out.text
    );
    assert!(first_before_done, "{messages:#?}");
    assert!(
        messages.iter().all(|m| m.len() <= 2048 + 100),
        "a message carries only the tail: {messages:#?}"
    );
    // The long line after the pause is cut to its tail.
    assert!(messages.iter().any(|m| m.contains("…xxx")), "{messages:#?}");
}

#[tokio::test]
async fn without_a_listener_the_cell_runs_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path());
    let out = r
        .call(
            "eval",
            json!({"code": "print('only')", "description": "print one line without progress"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error && out.text.contains("only"), "{}", out.text);
}
