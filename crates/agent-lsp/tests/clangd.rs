//! clangd (apt `clangd-19`, found by its versioned name) against the C fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd() {
    require("clangd-19");
    let fx = fixture("c", config("c", "clangd"));
    let cases = vec![
        // First call on a fresh server: diagnostics must not race its (dynamic) pull registration.
        ok(
            json!({"operation": "diagnostics", "file": "main.c"}),
            &["no errors or warnings in `main.c`"],
        ),
        // The declaration in lib.h or the definition in lib.c, depending on the index.
        ok(
            json!({"operation": "definition", "file": "main.c", "line": 5, "symbol": "make_greeter"}),
            &["struct greeter make_greeter(void)"],
        ),
        ok(
            json!({"operation": "type_definition", "file": "main.c", "line": 5, "symbol": "g ="}),
            &["lib.h:5:8: struct greeter {"],
        ),
        ok(
            json!({"operation": "references", "file": "main.c", "line": 5, "symbol": "make_greeter"}),
            &["main.c:5:", "main.c:11:12: return make_greeter();"],
        ),
        ok(
            json!({"operation": "hover", "file": "main.c", "line": 5, "symbol": "make_greeter"}),
            &["make_greeter", "Builds a greeter."],
        ),
        ok(
            json!({"operation": "symbols", "file": "main.c"}),
            &["function main", "function again"],
        ),
    ];
    check_all(&fx, &cases).await;
    check_write_ledger(
        &fx,
        "extra.c",
        "int f(void) { return 1; }\n",
        "int f(void) { return undefined_thing_xyz; }\n",
        "undefined_thing_xyz",
    )
    .await;
    check_rename(
        &fx,
        json!({"file": "main.c", "line": 5, "symbol": "label", "new_name": "caption"}),
        &["main.c"],
    )
    .await;
    assert_eq!(fx.read("main.c").matches("caption").count(), 2);
}
