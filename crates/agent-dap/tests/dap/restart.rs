//! Issue 42: `restart` runs the conversation's last launch again, its breakpoints kept, after
//! ending the running session (its debuggee gone); without a launch it says to launch first.

use crate::common::{Fixture, assert_gone, config, require};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_runs_the_last_launch_again_with_its_breakpoints() {
    require("python3");
    let mut f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("app.py", "x = 1\nprint(x, flush=True)\n"),
        ],
        config(),
    );
    f.link_venv();
    let none = f.err(json!({"op": "restart"})).await;
    assert!(
        none.text
            .contains("none was launched in this conversation to restart")
            && none.text.contains("`launch`"),
        "{}",
        none.text
    );
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [2]}))
        .await;
    let first = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    assert!(first.text.contains("(app.py:2)"), "{}", first.text);
    let pid = |out: &agent_tier::ToolOutput| {
        out.structured.as_ref().unwrap()["debuggee_pid"]
            .as_u64()
            .map(|p| p as u32)
    };
    let before = pid(&first);
    let again = f.ok(json!({"op": "restart"})).await;
    assert!(again.text.contains("(app.py:2)"), "{}", again.text);
    let after = pid(&again);
    assert!(
        before.is_some() && after.is_some() && before != after,
        "{before:?} {after:?}"
    );
    assert_gone(&[before.unwrap()]).await;
    f.finish().await;
}
