//! The call's progress: `diagnostics "*"` says which checker runs where; a positional operation
//! on a server still loading says what it waits for.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use agent_tier::{Origin, ProgressSink, Surface, ToolOutput};
use common::*;
use serde_json::{Value, json};

/// Call `lsp` with a listener; the result and every progress message seen.
async fn with_progress(fx: &Fx, args: Value) -> (ToolOutput, Vec<String>) {
    let (sink, mut rx) = ProgressSink::channel();
    let listener = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(m) = rx.next().await {
            got.push(m);
        }
        got
    });
    let out = fx
        .reg
        .call_with_progress("lsp", args, Surface::Full, Origin::Model, sink)
        .await;
    (out, listener.await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_checker_says_what_runs_where() {
    require("gcc");
    let fx = fixture("", config("c", "clangd"));
    let build = fx.root.join("build");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::write(fx.root.join("a.c"), "int f(void) { return 0; }\n").unwrap();
    let db = json!([{"directory": fx.root.display().to_string(), "file": "a.c",
                     "arguments": ["gcc", "-c", "a.c"]}]);
    std::fs::write(build.join("compile_commands.json"), db.to_string()).unwrap();
    let (out, messages) =
        with_progress(&fx, json!({"operation": "diagnostics", "file": "*"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(messages, ["running C/C++ -fsyntax-only in build"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loading_server_is_waited_for_out_loud() {
    require("clangd-19");
    let fx = fixture("c", config("c", "clangd"));
    let (out, messages) = with_progress(
        &fx,
        json!({"operation": "hover", "file": "main.c", "line": 5, "symbol": "make_greeter"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("waiting for clangd to finish indexing .")),
        "{messages:?}"
    );
}
