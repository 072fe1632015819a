//! Name-only addressing against real servers: `symbol` without `line` resolves to its one
//! declaration (in `path`, or in the workspace), a name path (`Class.method`, `mod::f`) is
//! matched against the container chain, an ambiguous name is refused with the candidates and
//! the exact next call, and `lsp_rename` never acts on anything but a unique resolution.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

/// A second class with a method named like `Greeter.greet`.
const OTHER: &str = "class Other:\n    def greet(self) -> str:\n        return \"other\"\n";

fn snap(name: &str, text: &str) {
    insta::assert_snapshot!(name, text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_addresses_symbols_by_name() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));

    // A unique name, no `path`: found in the workspace.
    let out = fx
        .lsp(json!({"operation": "references", "symbol": "make_greeter"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.starts_with("resolved `make_greeter` to lib.py:12 function make_greeter (the only declaration in the workspace)\n"),
        "{text}"
    );
    assert!(
        text.contains("main.py:4:") && text.contains("main.py:9:12: return make_greeter()"),
        "{text}"
    );
    assert_eq!(
        out.structured.as_ref().unwrap()["resolved"],
        json!(
            "resolved `make_greeter` to lib.py:12 function make_greeter (the only declaration in the workspace)"
        )
    );

    // A module path: `lib.make_greeter`.
    let out = fx
        .lsp(json!({"operation": "definition", "symbol": "lib.make_greeter"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("lib.py:12:5: def make_greeter() -> Greeter:"),
        "{}",
        out.text
    );

    // A file that only imports the name: the workspace declares it once.
    let out = fx
        .lsp(json!({"operation": "definition", "path": "main.py", "symbol": "make_greeter"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.starts_with("resolved `make_greeter` to lib.py:12 function make_greeter (the only declaration in the workspace; `main.py` declares none)\n"),
        "{text}"
    );
    assert!(
        text.contains("lib.py:12:5: def make_greeter() -> Greeter:"),
        "{text}"
    );

    // A name path, in its file: `Greeter.greet`.
    let out = fx
        .lsp(json!({"operation": "hover", "path": "lib.py", "symbol": "Greeter.greet"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.starts_with(
            "resolved `Greeter.greet` to lib.py:7 method greet (the only declaration in `lib.py`)\n"
        ),
        "{text}"
    );
    assert!(text.contains("Return a greeting for"), "{text}");

    // The old argument name `file` still works.
    let out = fx
        .lsp(json!({"operation": "definition", "file": "lib.py", "symbol": "Greeter"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("lib.py:4:7: class Greeter:"),
        "{}",
        out.text
    );

    // Two classes with a method `greet`: refused, with both candidates and the next call.
    fx.write("other.py", OTHER).await;
    let before = [fx.read("lib.py"), fx.read("main.py"), fx.read("other.py")];
    let out = fx
        .lsp(json!({"operation": "references", "symbol": "greet"}))
        .await;
    assert!(out.is_error, "{}", out.text);
    snap("ambiguous_references", &fx.red(&out.text));

    // Qualified, it is one again.
    let out = fx
        .lsp(json!({"operation": "definition", "symbol": "Other.greet"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.starts_with("resolved `Other.greet` to other.py:2 method greet"),
        "{text}"
    );
    assert!(
        text.contains("other.py:2:9: def greet(self) -> str:"),
        "{text}"
    );

    // A rename of the ambiguous name is refused, and nothing is written.
    let out = fx
        .call(
            "lsp_rename",
            json!({"symbol": "greet", "new_name": "salute"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    snap("ambiguous_rename", &fx.red(&out.text));
    assert_eq!(
        [fx.read("lib.py"), fx.read("main.py"), fx.read("other.py")],
        before
    );

    // Not found: says so and how to look.
    let out = fx
        .lsp(json!({"operation": "references", "symbol": "make_grater"}))
        .await;
    assert!(out.is_error, "{}", out.text);
    snap("not_found", &fx.red(&out.text));
    let out = fx
        .call(
            "lsp_rename",
            json!({"path": "main.py", "symbol": "make_grater", "new_name": "x"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    snap("rename_not_found", &fx.red(&out.text));
    assert_eq!(
        [fx.read("lib.py"), fx.read("main.py"), fx.read("other.py")],
        before
    );

    // A unique name, renamed by name alone, everywhere.
    let out = fx
        .call(
            "lsp_rename",
            json!({"symbol": "make_greeter", "new_name": "build_greeter"}),
        )
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.starts_with("resolved `make_greeter` to lib.py:12 function make_greeter (the only declaration in the workspace)\nrenamed `make_greeter` to `build_greeter`"),
        "{text}"
    );
    assert!(
        fx.read("lib.py")
            .contains("def build_greeter() -> Greeter:")
    );
    assert!(fx.read("main.py").contains("    return build_greeter()"));

    // `Class.method` renamed by name: only that class's method.
    let out = fx
        .call(
            "lsp_rename",
            json!({"symbol": "Other.greet", "new_name": "wave"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(fx.read("other.py").contains("def wave(self)"));
    assert!(fx.read("lib.py").contains("def greet(self, name: str)"));
}

/// Rust module paths (`extra::f`, `crate::extra::f`, `Greet::greet`) against real
/// rust-analyzer; the trait method and its impl are two declarations of `greet`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_resolves_module_paths() {
    require("rust-analyzer");
    require("cargo");
    let fx = fixture("rust", config("rust", "rust-analyzer"));
    check_all(
        &fx,
        &[
            ok(
                json!({"operation": "references", "symbol": "extra::f"}),
                &[
                    "resolved `extra::f` to src/extra.rs:1 function f (the only declaration in the workspace)",
                    "src/extra.rs:1:8: pub fn f() -> i32 {",
                ],
            ),
            ok(
                json!({"operation": "definition", "symbol": "crate::extra::f"}),
                &["resolved `crate::extra::f` to src/extra.rs:1 function f"],
            ),
            ok(
                json!({"operation": "hover", "path": "src/lib.rs", "symbol": "Greeter"}),
                &[
                    "resolved `Greeter` to src/lib.rs:6 struct Greeter (the only declaration in `src/lib.rs`)",
                    "A greeter.",
                ],
            ),
            err(
                json!({"operation": "references", "symbol": "greet"}),
                &[
                    "`greet` names 2 declarations in the workspace (rust-analyzer)",
                    "- src/lib.rs:13 function greet (in Greet)",
                    "- src/lib.rs:17 function greet (in Greeter)",
                    r#"{"operation": "references", "path": "src/lib.rs", "line": 13, "symbol": "greet"}"#,
                ],
            ),
            ok(
                json!({"operation": "references", "symbol": "Greet::greet"}),
                &[
                    "resolved `Greet::greet` to src/lib.rs:13 function greet",
                    "src/lib.rs:17:8: fn greet(&self) -> String {",
                    "src/lib.rs:29:28: format!(\"{label}{}\", g.greet())",
                ],
            ),
        ],
    )
    .await;
}

/// Go `pkg.Func` (the package clause's name) and `Type.Method` against real gopls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gopls_resolves_package_paths() {
    require("gopls");
    require("go");
    let fx = fixture("go", config("go", "gopls"));
    check_all(
        &fx,
        &[
            ok(
                json!({"operation": "references", "symbol": "main.MakeGreeter"}),
                &[
                    "resolved `main.MakeGreeter` to lib.go:19 function MakeGreeter (the only declaration in the workspace)",
                    "main.go:13:9: return MakeGreeter()",
                ],
            ),
            ok(
                json!({"operation": "definition", "symbol": "Greeter.Greet"}),
                &["lib.go:14:18: func (g Greeter) Greet() string {"],
            ),
            ok(
                json!({"operation": "hover", "path": "lib.go", "symbol": "Greeter.Greet"}),
                &[
                    "(the only declaration in `lib.go`)",
                    "Greet returns a greeting.",
                ],
            ),
            err(
                json!({"operation": "references", "symbol": "Greet"}),
                &[
                    "`Greet` names 3 declarations in the workspace (gopls)",
                    "- lib.go:9 interface Greet",
                    "- lib.go:14 method Greeter.Greet",
                ],
            ),
        ],
    )
    .await;
}
