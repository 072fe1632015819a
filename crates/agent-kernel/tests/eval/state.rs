//! After an interrupted, killed or crashed cell the result says exactly what survived (issue 14).

use crate::common::*;
use agent_kernel::KernelConfig;
use serde_json::json;
use std::time::Duration;

fn tight() -> KernelConfig {
    KernelConfig {
        inactivity_budget: Duration::from_millis(1500),
        interrupt_grace: Duration::from_secs(2),
        ..Default::default()
    }
}

fn structured(out: &agent_tier::ToolOutput, key: &str) -> serde_json::Value {
    out.structured.as_ref().expect("structured")[key].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_interrupt_names_what_the_cell_defined() {
    let kit = Kit::new(tight());
    ok(&kit.py("old = 0\nkeep = 'same'").await, "(no output)");
    let out = kit.py("a = 1\nold = 2\nwhile True:\n    pass").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    contains(
        &out,
        &[
            "the python kernel is alive and keeps every name from earlier cells",
            "names this cell bound before the interrupt (kept): old, a —",
        ],
    );
    assert_eq!(structured(&out, "defined"), json!(["old", "a"]));
    assert_eq!(kernel_field(&out, "state_lost"), json!(false));
    ok(&kit.py("(a, old, keep)").await, "(1, 2, 'same')");

    // an interrupted cell that bound nothing says so
    let out = kit.py("while True:\n    pass").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    contains(
        &out,
        &["this cell bound no top-level name before the interrupt"],
    );

    // a cell that kills its kernel: every name is gone, and the next cell sees that
    let out = kit.py("b = 2\nimport os\nos._exit(3)").await;
    assert_eq!(status(&out), "died", "{}", out.text);
    contains(
        &out,
        &[
            "it exited with status 3",
            "; it was restarted — every name (variables, imports) from this and earlier cells is gone]",
        ],
    );
    assert_eq!(kernel_field(&out, "state_lost"), json!(true));
    let (old, new) = (
        kernel_field(&out, "pid"),
        kernel_field(&out, "restarted_pid"),
    );
    assert!(new.is_u64() && new != old, "{old} {new}");
    let out = kit.py("'a' in globals(), 'b' in globals()").await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        kernel_field(&out, "pid"),
        new,
        "the restarted kernel runs the next cell"
    );
    assert_eq!(kernel_field(&out, "fresh"), json!(true));
    assert!(out.text.ends_with("(False, False)"), "{}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_interrupt_names_what_the_cell_defined() {
    require_node();
    let kit = Kit::new(tight());
    ok(&kit.js("let keep = 'same'").await, "(no output)");
    let out = kit
        .js("let a = 1\nfunction f() { return a }\nwhile (true) {}")
        .await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    contains(
        &out,
        &[
            "the javascript kernel is alive",
            "names this cell bound before the interrupt (kept): ",
        ],
    );
    let defined = structured(&out, "defined");
    for name in ["a", "f"] {
        assert!(
            defined.as_array().is_some_and(|d| d.contains(&json!(name))),
            "{defined}"
        );
    }
    ok(&kit.js("[a, f(), keep]").await, "[ 1, 1, 'same' ]");

    // in an async cell: bindings made before the awaited forever (not node's lazy globals)
    let out = kit
        .js("const c = 3\nnew TextEncoder(); atob('YQ==')\nawait new Promise(() => {})")
        .await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    assert_eq!(structured(&out, "defined"), json!(["c"]));

    let out = kit.js("process.exit(4)").await;
    assert_eq!(status(&out), "died", "{}", out.text);
    contains(
        &out,
        &["it was restarted — every name (variables, imports) from this and earlier cells is gone"],
    );
    let out = kit.js("typeof a").await;
    contains(&out, &["'undefined'"]);
}
