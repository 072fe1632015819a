//! Line + symbol addressing against a real server (clangd): whole identifiers before substrings,
//! qualified names, the ambiguous rename refused with its candidates, and a missing symbol
//! pointing at the lines where it is.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

const SRC: &str = "\
static int add(int a, int b) { return a + b; }

struct point { int x; int x_y; };

int main(void) {
    int add_result = add(1, 2);
    struct point p = { 1, 2 };
    p.x_y = p.x + p.x;
    return add_result + p.x_y;
}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identifiers_are_whole_and_writes_never_guess() {
    require("clangd-19");
    let fx = fixture("", config("c", "clangd"));
    std::fs::write(fx.root.join("compile_flags.txt"), "-std=c11\n").unwrap();
    std::fs::write(fx.root.join("calc.c"), SRC).unwrap();

    // `add` on a line holding `add_result` first: the whole identifier `add` is meant.
    let out = fx
        .lsp(json!({"operation": "definition", "file": "calc.c", "line": 6, "symbol": "add"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("calc.c:6:22"), "{}", out.text);
    assert!(out.text.contains("calc.c:1:12"), "{}", out.text);
    assert!(
        out.text.contains("also inside: `add_result`"),
        "{}",
        out.text
    );

    // `x` on a line holding `x_y` and `x` twice: a read takes the first whole `x` and says so.
    let out = fx
        .lsp(json!({"operation": "definition", "file": "calc.c", "line": 8, "symbol": "x"}))
        .await;
    assert!(out.text.contains("calc.c:8:15"), "{}", out.text);
    assert!(out.text.contains("calc.c:3:20"), "{}", out.text);
    assert!(
        out.text.contains("`x` occurs 2 times on line 8"),
        "{}",
        out.text
    );

    // A qualified name resolves to its last segment where it is written out.
    let out = fx
        .lsp(json!({"operation": "definition", "file": "calc.c", "line": 9, "symbol": "p.x_y"}))
        .await;
    assert!(out.text.contains("calc.c:9:27"), "{}", out.text);
    assert!(out.text.contains("calc.c:3:27"), "{}", out.text);

    // The same ambiguity is refused for a rename, with the candidates, and nothing changes.
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "calc.c", "line": 8, "symbol": "x", "new_name": "px"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("occurrence 1 at column 15, occurrence 2 at column 21")
            && out.text.contains("never acts on a guess"),
        "{}",
        out.text
    );
    assert_eq!(fx.read("calc.c"), SRC);

    // The rename of `add` renames the function, not `add_result`.
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "calc.c", "line": 6, "symbol": "add", "new_name": "plus"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    let after = fx.read("calc.c");
    assert!(after.contains("static int plus(int a"), "{after}");
    assert!(after.contains("int add_result = plus(1, 2);"), "{after}");
    assert!(after.contains("return add_result + p.x_y;"), "{after}");

    // A symbol that is not on the line names the lines where it is.
    let out = fx
        .lsp(json!({"operation": "hover", "file": "calc.c", "line": 7, "symbol": "add_result"}))
        .await;
    assert!(out.is_error);
    assert!(
        out.text.contains("`add_result` does occur on line 6") && out.text.contains("line 9"),
        "{}",
        out.text
    );
}

/// `symbols` with only `query` on a fresh run starts the server the workspace calls for, instead
/// of failing with "no running language server".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_symbol_query_starts_the_servers() {
    require("gopls");
    require("go");
    let fx = fixture("go", config("go", "gopls"));
    let out = fx
        .lsp(json!({"operation": "symbols", "query": "MakeGreeter"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("function MakeGreeter") && out.text.contains("lib.go:19:6"),
        "{}",
        out.text
    );
}

/// With no file any server could serve, the error says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_symbol_query_without_servers_says_why() {
    let fx = fixture("", config("go", "gopls"));
    std::fs::write(fx.root.join("notes.txt"), "nothing to index\n").unwrap();
    let out = fx.lsp(json!({"operation": "symbols", "query": "x"})).await;
    assert!(out.is_error);
    assert!(
        out.text
            .contains("no file of the workspace has a configured language server"),
        "{}",
        out.text
    );
}
