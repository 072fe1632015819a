//! rust-analyzer (rustup component) against the Rust fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer() {
    require("rust-analyzer");
    require("cargo");
    let mut cfg = config("rust", "rust-analyzer");
    let fx_dir = tempfile::tempdir().unwrap();
    // Own target dir (not the test runner's) and no cargo check on save: the native
    // diagnostics are deterministic, the checker's arrive in their own time.
    patch(
        &mut cfg,
        "rust-analyzer",
        agent_lsp::ServerPatch {
            init_options: Some(json!({"checkOnSave": false, "cachePriming": {"enable": false}})),
            env: Some(
                [(
                    "CARGO_TARGET_DIR".to_string(),
                    fx_dir.path().display().to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        },
    );
    let fx = fixture("rust", cfg);
    let cases = vec![
        // First call on a fresh server: diagnostics must not race its (dynamic) pull registration.
        ok(
            json!({"operation": "diagnostics", "file": "src/lib.rs"}),
            &["no errors or warnings in `src/lib.rs`"],
        ),
        ok(
            json!({"operation": "definition", "file": "src/lib.rs", "line": 28, "symbol": "make_greeter"}),
            &["src/lib.rs:23:8: pub fn make_greeter() -> Greeter {"],
        ),
        ok(
            json!({"operation": "type_definition", "file": "src/lib.rs", "line": 28, "symbol": "g ="}),
            &["src/lib.rs:6:12: pub struct Greeter {"],
        ),
        ok(
            json!({"operation": "implementation", "file": "src/lib.rs", "line": 11, "symbol": "Greet"}),
            &["src/lib.rs:16:"],
        ),
        ok(
            json!({"operation": "references", "file": "src/lib.rs", "line": 23, "symbol": "make_greeter"}),
            &["src/lib.rs:28:", "src/lib.rs:33:5: make_greeter()"],
        ),
        ok(
            json!({"operation": "hover", "file": "src/lib.rs", "line": 28, "symbol": "make_greeter"}),
            &["pub fn make_greeter() -> Greeter", "Builds a greeter."],
        ),
        ok(
            json!({"operation": "symbols", "file": "src/lib.rs"}),
            &["struct Greeter", "function make_greeter"],
        ),
        ok(
            json!({"operation": "symbols", "file": "src/lib.rs", "query": "make_greeter"}),
            &["function make_greeter", "src/lib.rs:23:8"],
        ),
    ];
    check_all(&fx, &cases).await;
    check_write_ledger(
        &fx,
        "src/extra.rs",
        "pub fn f() -> i32 {\n    1\n}\n",
        "pub fn f() -> i32 {\n    1\n}\n\npub fn g() {\n    f(1);\n}\n",
        "expected 0 arguments, found 1",
    )
    .await;
    check_rename(
        &fx,
        json!({"file": "src/lib.rs", "line": 28, "symbol": "make_greeter", "new_name": "build_greeter"}),
        &["src/lib.rs"],
    )
    .await;
    assert_eq!(fx.read("src/lib.rs").matches("build_greeter").count(), 3);
}
