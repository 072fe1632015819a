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

/// Issue 42: breakpoints survive edits above them. A line breakpoint follows its line's text to
/// where it moved (saying so), and stays, saying why, when the text is gone or on several
/// lines; a function breakpoint follows its function by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoints_follow_their_lines_and_functions_across_edits() {
    require("python3");
    let app = "def work(n):\n    return n * 2\n\n\nx = work(1)\nprint(x, flush=True)\n";
    let mut f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("app.py", app),
        ],
        config(),
    );
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [6]}))
        .await;
    let first = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    assert!(first.text.contains("(app.py:6)"), "{}", first.text);
    // Three lines added above: the breakpoint follows `print(x, flush=True)` to line 9.
    let edited = format!("import os\nimport sys\n\n{app}");
    std::fs::write(f.root().join("app.py"), &edited).unwrap();
    let again = f.ok(json!({"op": "restart"})).await;
    assert!(
        again
            .text
            .contains("app.py:6 re-anchored to line 9: its line `print(x, flush=True)` moved"),
        "{}",
        again.text
    );
    assert!(again.text.contains("(app.py:9)"), "{}", again.text);
    // The line twice: it stays, and the answer says to set it again.
    std::fs::write(
        f.root().join("app.py"),
        format!("print(0, flush=True)\nprint(x, flush=True) if False else None\n{edited}\nprint(x, flush=True)\n"),
    )
    .unwrap();
    let twice = f.ok(json!({"op": "restart"})).await;
    assert!(
        twice.text.contains("is now on several lines") && twice.text.contains("stays at line 9"),
        "{}",
        twice.text
    );
    // A function breakpoint, then lines above the function: it still stops in `work`.
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": []}))
        .await;
    f.ok(json!({"op": "breakpoints", "function": ["work"]}))
        .await;
    std::fs::write(f.root().join("app.py"), format!("# a\n# b\n{app}")).unwrap();
    let by_name = f.ok(json!({"op": "restart"})).await;
    assert!(
        by_name.text.contains("at work (app.py:3)"),
        "{}",
        by_name.text
    );
    f.finish().await;
}
