use crate::common::{Fixture, config, filters, require};
use agent_dap::DapConfig;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

const MAIN_DART: &str = "void main() {\n  var count = 0;\n  count += 1;\n  print(count);\n  count += 2;\n  print('hello from dart');\n}\n";

/// A directory holding the scripted fake `dart` (kept alive as long as the returned guard).
fn fake_dart_dir() -> tempfile::TempDir {
    require("python3");
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("dart");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake_dart.py"),
        &script,
    )
    .expect("copy fake dart");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn dart_fixture(bin: &tempfile::TempDir) -> Fixture {
    let mut f = Fixture::new(
        &[
            ("pubspec.yaml", "name: demo\n"),
            ("bin/main.dart", MAIN_DART),
        ],
        DapConfig {
            extra_bin_dirs: vec![bin.path().to_path_buf()],
            ..config()
        },
    );
    f.redact
        .push((bin.path().display().to_string(), "[bin]".into()));
    f
}

/// The whole operation table against the scripted Dart adapter, including the reverse requests
/// it sends (runInTerminal declined, startDebugging refused), unverified breakpoints, capped
/// variables and values, and clear errors for unknown ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dart_fake_adapter_session() {
    let bin = fake_dart_dir();
    let mut f = dart_fixture(&bin);
    f.structured = true;
    f.ok(json!({"op": "adapters"})).await;
    f.ok(json!({"op": "status"})).await;
    f.err(json!({"op": "stack"})).await;
    f.ok(json!({"op": "breakpoints", "file": "bin/main.dart", "lines": [5, 3, 99]}))
        .await;
    let launched = f
        .ok(json!({"op": "launch", "program": "bin/main.dart"}))
        .await;
    assert!(
        launched.text.contains("not verified (no code at line 99)"),
        "{}",
        launched.text
    );
    assert!(
        launched.text.contains("at main (bin/main.dart:3)"),
        "{}",
        launched.text
    );
    f.ok(json!({"op": "threads"})).await;
    f.ok(json!({"op": "stack"})).await;
    // An adapter that does not advertise function breakpoints, in a run without a language
    // server to place them: not placed, and the result says why and what to do instead.
    let nofn = f
        .ok(json!({"op": "breakpoints", "function": ["main"]}))
        .await;
    assert!(
        nofn.text.contains(
            "- function main: not verified (the dart adapter has no function breakpoints and this run has no language server to find `main`; set `file` and `lines` instead)"
        ),
        "{}",
        nofn.text
    );
    f.err(json!({"op": "scopes", "frame_id": 424242})).await;
    f.err(json!({"op": "variables", "reference": 777})).await;
    f.err(json!({"op": "stack", "thread_id": 99})).await;
    f.err(json!({"op": "evaluate"})).await;
    let scopes = f.ok(json!({"op": "scopes", "frame_id": 1003})).await;
    assert!(
        scopes.text.contains("Locals: reference 10"),
        "{}",
        scopes.text
    );
    let vars = f.ok(json!({"op": "variables", "reference": 10})).await;
    assert!(vars.text.contains("(202 more characters)"), "{}", vars.text);
    let items = f.ok(json!({"op": "variables", "reference": 11})).await;
    assert!(items.text.contains("… 10 more not shown"), "{}", items.text);
    f.ok(json!({"op": "evaluate", "expression": "count + 1"}))
        .await;
    f.ok(json!({"op": "step_in"})).await;
    f.ok(json!({"op": "pause"})).await;
    let second = f.ok(json!({"op": "continue"})).await;
    assert!(second.text.contains("(bin/main.dart:5)"), "{}", second.text);
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(done.text.contains("exited with code 3"), "{}", done.text);
    let out = f.ok(json!({"op": "output"})).await;
    assert!(
        out.text
            .contains("reverse runInTerminal: success=False message=runInTerminal is declined"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("reverse startDebugging: success=False message=startDebugging is refused"),
        "{}",
        out.text
    );
    f.ok(json!({"op": "status"})).await;
    f.err(json!({"op": "continue"})).await;
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// `terminate` in the middle of a session kills the adapter and the debuggee's own process
/// group (the fake starts a `sleep` in a new session as its debuggee).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_kills_adapter_and_debuggee_groups() {
    let bin = fake_dart_dir();
    let mut f = dart_fixture(&bin);
    f.ok(json!({"op": "breakpoints", "file": "bin/main.dart", "lines": [3]}))
        .await;
    let launched = f
        .ok(json!({"op": "launch", "program": "bin/main.dart"}))
        .await;
    let s = launched.structured.clone().unwrap();
    assert!(s["debuggee_pid"].as_u64().is_some(), "{s}");
    let term = f.ok(json!({"op": "terminate"})).await;
    assert!(
        term.text
            .contains("terminated; the adapter and the debuggee were killed"),
        "{}",
        term.text
    );
    crate::common::assert_gone(&f.pids).await;
    let again = f.err(json!({"op": "threads"})).await;
    assert!(
        again.text.contains("ended: terminated on request"),
        "{}",
        again.text
    );
}
