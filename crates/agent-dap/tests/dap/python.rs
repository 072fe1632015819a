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
    f.structured = true;
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [4]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    // One answer shows the stop: file:line with its source, the frames, the locals; the
    // breakpoint echoes its line.
    for shown in [
        "- app.py:4: verified: `acc += i`",
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

/// The debuggee runs with `TCP_NODELAY` set on its sockets (a `sitecustomize` in a private
/// directory prepended to its `PYTHONPATH`) and the project's own `sitecustomize` still runs;
/// the project's files are left as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_debuggee_gets_nodelay_and_keeps_its_sitecustomize() {
    require("python3");
    let prog = "import builtins, socket\nprint('patched', socket.socket.connect.__name__ == '_connect')\nprint('project site', getattr(builtins, 'PROJECT_SITE', None))\n";
    let mut f = Fixture::new(
        &[
            ("requirements.txt", ""),
            (
                "site/sitecustomize.py",
                "import builtins\nbuiltins.PROJECT_SITE = 'ran'\n",
            ),
            ("prog.py", prog),
        ],
        config(),
    );
    f.link_venv();
    let before: Vec<_> = walk(f.root());
    let done = f
        .ok(json!({"op": "launch", "program": "prog.py", "env": {"PYTHONPATH": "site"}}))
        .await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("patched True"), "{}", out.text);
    assert!(out.text.contains("project site ran"), "{}", out.text);
    f.finish().await;
    assert_eq!(walk(f.root()), before, "the project's files changed");
}

/// Every path under `dir` (not following the `.venv` link).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        out.push(p.clone());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&p));
        }
    }
    out.sort();
    out
}

/// An uncaught exception stops the debuggee by default (debugpy's `uncaught` filter), and the
/// stop says so with the exception's type and message, where it was raised, and the locals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_uncaught_exception_stops_with_its_message() {
    require("python3");
    let prog = "def check(n):\n    limit = 3\n    if n > limit:\n        raise ValueError(f'n={n} is over the limit')\n    return n\n\n\ncheck(5)\n";
    let mut f = Fixture::new(&[("requirements.txt", ""), ("prog.py", prog)], config());
    f.link_venv();
    let stop = f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    for shown in [
        "exceptions: uncaught (filters uncaught)",
        "stopped (exception",
        "ValueError: n=5 is over the limit",
        "> 4 |         raise ValueError",
        "- limit: int = 3",
    ] {
        assert!(stop.text.contains(shown), "{shown}: {}", stop.text);
    }
    let snap = stop.structured.as_ref().unwrap();
    assert_eq!(snap["reason"], "exception", "{snap}");
    assert_eq!(snap["exception"]["id"], "ValueError", "{snap}");
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// With `exceptions: none` the same program runs to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_exceptions_none_runs_to_the_end() {
    require("python3");
    let prog = "raise ValueError('boom')\n";
    let mut f = Fixture::new(&[("requirements.txt", ""), ("prog.py", prog)], config());
    f.link_venv();
    let done = f
        .ok(json!({"op": "launch", "program": "prog.py", "exceptions": "none"}))
        .await;
    assert!(
        done.text.contains("exceptions: none (no adapter filter)"),
        "{}",
        done.text
    );
    assert!(done.text.contains("exited with code 1"), "{}", done.text);
    assert!(done.text.contains("ValueError: boom"), "{}", done.text);
    f.finish().await;
}

/// A breakpoint's `condition`, `hit_count` and `log_message` reach debugpy: the stop comes
/// when the condition holds, at the Nth hit, and a log point prints instead of stopping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_breakpoint_condition_hit_count_and_log_message() {
    require("python3");
    let mut f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("app.py", APP),
        ],
        config(),
    );
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [4], "condition": "i == 2"}))
        .await;
    let stop = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    assert!(stop.text.contains("- i: int = 2"), "{}", stop.text);
    f.ok(json!({"op": "terminate"})).await;
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [4], "hit_count": 2}))
        .await;
    let stop = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    assert!(stop.text.contains("- i: int = 1"), "{}", stop.text);
    f.ok(json!({"op": "terminate"})).await;
    f.ok(
        json!({"op": "breakpoints", "file": "app.py", "lines": [4], "log_message": "acc is {acc}"}),
    )
    .await;
    let done = f.ok(json!({"op": "launch", "program": "app.py"})).await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("acc is 1"), "{}", out.text);
    f.finish().await;
}

/// While `continue` waits for a stop, the call's progress says the debuggee is running (so a
/// client with a request timeout keeps the call alive), and the stop still answers the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_waiting_for_a_stop_reports_progress() {
    require("python3");
    let prog = "import time\n\ntime.sleep(2.5)\nx = 1\nprint(x)\n";
    let mut f = Fixture::new(&[("requirements.txt", ""), ("prog.py", prog)], config());
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": [4]}))
        .await;
    let (sink, mut rx) = agent_tier::ProgressSink::channel();
    let listener = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(m) = rx.next().await {
            got.push(m);
        }
        got
    });
    let stop = f
        .reg
        .call_with_progress(
            "debug",
            json!({"op": "launch", "program": "prog.py"}),
            agent_tier::Surface::Full,
            agent_tier::Origin::Model,
            sink,
        )
        .await;
    assert!(!stop.is_error, "{}", stop.text);
    assert!(stop.text.contains("prog.py:4"), "{}", stop.text);
    let messages = listener.await.expect("the listener");
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("the debuggee is running; waiting for it to stop (")),
        "{messages:#?}"
    );
    if let Some(s) = &stop.structured {
        for key in ["adapter_pid", "debuggee_pid"] {
            if let Some(p) = s.get(key).and_then(serde_json::Value::as_u64) {
                f.pids.push(p as u32);
            }
        }
    }
    f.finish().await;
}
