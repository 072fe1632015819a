//! What the host and the model see: registration, the schema, doctor, argument errors.

use agent_dap::DapConfig;
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

fn registry(conversation: Option<&str>, root: &std::path::Path) -> Registry {
    let reg = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_dap::attach(
        &reg,
        DapConfig {
            conversation_id: conversation.map(str::to_string),
            ..DapConfig::default()
        },
    );
    reg
}

#[test]
fn registered_only_with_a_conversation() {
    let dir = tempfile::tempdir().unwrap();
    assert!(registry(None, dir.path()).names().is_empty());
    let reg = registry(Some("c"), dir.path());
    assert_eq!(reg.names(), vec!["debug".to_string()]);
    // Exec tier: hidden from plan and read-only surfaces.
    assert!(reg.list(Surface::Plan).is_empty());
    let info = reg.list(Surface::Full).remove(0);
    assert!(!info.parallel_safe);
    insta::assert_json_snapshot!(info);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_name_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "").unwrap();
    let reg = registry(Some("c"), dir.path());
    let cases = [
        json!({"op": "jump"}),
        json!({"op": "status", "colour": 1}),
        json!({"op": "breakpoints", "file": "a.py"}),
        json!({"op": "breakpoints", "file": "../outside.py", "lines": [1]}),
        json!({"op": "breakpoints", "file": "a.py", "lines": [0]}),
        json!({"op": "launch"}),
        json!({"op": "launch", "program": "missing.py"}),
        json!({"op": "launch", "program": "a.py"}),
        json!({"op": "attach"}),
        json!({"op": "scopes"}),
        json!({"op": "variables"}),
        json!({"op": "continue"}),
        json!({"op": "output"}),
        json!({"op": "terminate"}),
        // The field names and their aliases: `operation`/`op`, `path`/`file`.
        json!({"operation": "breakpoints", "path": "a.py", "lines": [1]}),
        json!({"op": "breakpoints", "file": "a.py", "lines": []}),
        // Test launches that cannot be meant: each names the one fix.
        json!({"operation": "launch", "test": "test_y"}),
        json!({"operation": "launch", "test": "test_y", "program": "a.py", "module": "pytest"}),
        json!({"operation": "launch", "test": "test_y", "program": "notes.txt"}),
        json!({"operation": "launch", "test": "test_y", "program": "a.py", "adapter": "lldb"}),
    ];
    let mut transcript = String::new();
    for args in cases {
        let out = reg.call("debug", args.clone(), Surface::Full).await;
        transcript.push_str(&format!(
            "> {args}\n{}{}\n\n",
            if out.is_error { "ERROR: " } else { "" },
            out.text
        ));
    }
    let root = dir.path().canonicalize().unwrap().display().to_string();
    insta::assert_snapshot!(transcript.replace(&root, "[root]"));
}

#[test]
fn doctor_reports_each_adapter() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    let entries = agent_dap::doctor(dir.path());
    let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["dart", "debugpy", "lldb", "delve"]);
    let delve = &entries[3];
    assert!(
        delve.marker.is_some() && delve.binary.is_some(),
        "{}",
        delve.summary()
    );
    assert!(delve.usable());
    assert!(!entries[0].usable(), "{}", entries[0].summary());
}
