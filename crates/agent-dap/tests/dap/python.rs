use crate::common::{Fixture, config, filters, require};
use serde_json::json;

const APP: &str = r#"def total(n):
    acc = 0
    for i in range(n):
        acc += i
    return acc


data = {"name": "demo", "values": [1, 2, 3], "long": "x" * 1000}
print("start", flush=True)
result = total(3)
print("result", result)
"#;

/// Breakpoint, stack, scopes, variables, evaluate, step, continue to exit, output — debugpy
/// from the project's `.venv`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_session() {
    require("python3");
    let mut f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("app.py", APP),
        ],
        config(),
    );
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [4]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    // One answer shows the stop: file:line with its source, the frames, the locals.
    for shown in [
        "stopped (breakpoint) at total (app.py:4)",
        "app.py:4\n",
        "> 4 |         acc += i",
        ": <module> (app.py:10)",
        "- n: int = 3",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    let snap = launched.structured.as_ref().unwrap();
    assert_eq!(snap["line"], 4, "{snap}");
    assert_eq!(snap["locals"][2]["name"], "n", "{snap}");
    let stack = f.ok(json!({"op": "stack"})).await;
    let frames = stack.structured.as_ref().unwrap()["frames"]
        .as_array()
        .unwrap()
        .clone();
    let top = frames[0]["frame_id"].as_i64().unwrap();
    let module = frames[1]["frame_id"].as_i64().unwrap();
    f.locals(top).await;
    f.ok(json!({"op": "evaluate", "expression": "acc + n * 10"}))
        .await;
    // The module frame's own scope: `data` is visible there, with a long value truncated.
    let data = f
        .ok(json!({"op": "evaluate", "expression": "data", "frame_id": module}))
        .await;
    let data_ref = data.structured.as_ref().unwrap()["reference"]
        .as_i64()
        .unwrap();
    f.ok(json!({"op": "variables", "reference": data_ref}))
        .await;
    f.ok(json!({"op": "step_over"})).await;
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": []}))
        .await;
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(
        out.text.contains("start\n") && out.text.contains("result 3"),
        "{}",
        out.text
    );
    f.ok(json!({"op": "output"})).await;
    f.err(json!({"op": "stack"})).await;
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}
