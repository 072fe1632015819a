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

/// Issue 41: a `go.mod` line gopls cannot parse keeps it from ever becoming ready, and every
/// `lsp` call on a `.go` file answered after 303 s (five sequential 60 s ready waits in one
/// call). Now a call waits at most one ready bound in all (here 8 s); a server that used up a
/// whole call's bound is remembered (status says so) and the next call answers without waiting
/// for it again until a file it serves is opened or changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_becomes_ready_costs_one_ready_bound_per_call_and_is_remembered() {
    require("gopls");
    require("go");
    let mut cfg = config("go", "gopls");
    cfg.ready_timeout_ms = Some(8_000);
    let fx = fixture("go", cfg);
    std::fs::write(
        fx.root.join("go.mod"),
        "module example.com/bad\n\ngo 1.21\n\nrequire this is not valid\n",
    )
    .unwrap();
    let hover =
        json!({"operation": "hover", "file": "main.go", "line": 6, "symbol": "MakeGreeter"});
    let first = fx.lsp(hover.clone()).await;
    assert!(
        first.text.contains("had not finished loading"),
        "{}",
        first.text
    );
    let status = fx.lsp(json!({"operation": "status"})).await;
    assert!(
        status
            .text
            .contains("a call waited its whole ready bound (8 s) in vain"),
        "{}",
        status.text
    );
    let second = fx.lsp(hover).await;
    assert!(
        second.text.contains("had not finished loading"),
        "{}",
        second.text
    );
}
