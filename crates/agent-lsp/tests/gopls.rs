//! gopls (apt) against the Go fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gopls() {
    require("gopls");
    require("go");
    let fx = fixture("go", config("go", "gopls"));
    let cases = vec![
        // First call on a fresh server: diagnostics must not race its (dynamic) pull registration.
        ok(
            json!({"operation": "diagnostics", "file": "main.go"}),
            &["no errors or warnings in `main.go`"],
        ),
        ok(
            json!({"operation": "definition", "file": "main.go", "line": 6, "symbol": "MakeGreeter"}),
            &["lib.go:19:6: func MakeGreeter() Greeter {"],
        ),
        ok(
            json!({"operation": "type_definition", "file": "main.go", "line": 6, "symbol": "g ="}),
            &["lib.go:4:6: type Greeter struct {"],
        ),
        ok(
            json!({"operation": "implementation", "file": "lib.go", "line": 9, "symbol": "Greet"}),
            &["lib.go:4:6: type Greeter struct {"],
        ),
        ok(
            json!({"operation": "references", "file": "lib.go", "line": 19, "symbol": "MakeGreeter"}),
            &["main.go:6:", "main.go:13:9: return MakeGreeter()"],
        ),
        ok(
            json!({"operation": "hover", "file": "main.go", "line": 6, "symbol": "MakeGreeter"}),
            &[
                "func MakeGreeter() Greeter",
                "MakeGreeter builds a greeter.",
            ],
        ),
        ok(
            json!({"operation": "symbols", "file": "lib.go"}),
            &["struct Greeter", "function MakeGreeter"],
        ),
    ];
    check_all(&fx, &cases).await;
    // Without `file`: every running server is searched.
    check(
        &fx,
        &ok(
            json!({"operation": "symbols", "query": "MakeGreeter"}),
            &[
                "workspace symbols matching `MakeGreeter` (gopls):",
                "function MakeGreeter (in example.com/fixture) — lib.go:19:6",
            ],
        ),
    )
    .await;
    check_write_ledger(
        &fx,
        "extra.go",
        "package main\n\nvar n = 1\n",
        "package main\n\nvar n = undefinedThingXyz\n",
        "undefinedThingXyz",
    )
    .await;
    let text = check_rename(
        &fx,
        json!({"file": "main.go", "line": 6, "symbol": "MakeGreeter", "new_name": "BuildGreeter"}),
        &["lib.go", "main.go"],
    )
    .await;
    // gopls also renames the doc comment, which references never list: said, not hidden.
    assert!(
        text.contains("1 edit(s) in comments or strings were not checked"),
        "{text}"
    );
    assert!(fx.read("lib.go").contains("func BuildGreeter() Greeter {"));
}
