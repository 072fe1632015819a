//! The Python cases, shared by pyright, basedpyright, ty and pylsp.
use crate::common::*;
use serde_json::json;

/// `lints`: whether the server reports undefined names (pylsp does only with pyflakes installed).
pub async fn run(server: &str, program: &str, lints: bool) {
    require(program);
    let fx = fixture("python", config("python", server));
    let cases = vec![
        // First call on a fresh server: diagnostics must not race its (dynamic) pull registration.
        ok(
            json!({"operation": "diagnostics", "file": "main.py"}),
            &["no errors or warnings in `main.py`"],
        ),
        ok(
            json!({"operation": "definition", "file": "main.py", "line": 4, "symbol": "make_greeter"}),
            &["lib.py:12:5: def make_greeter() -> Greeter:"],
        ),
        ok(
            json!({"operation": "definition", "file": "main.py", "line": 5, "symbol": "greet"}),
            &["lib.py:7:9: def greet(self, name: str) -> str:"],
        ),
        ok(
            json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter"}),
            &["make_greeter", "Build a greeter."],
        ),
        ok(
            json!({"operation": "references", "file": "lib.py", "line": 12, "symbol": "make_greeter"}),
            &["main.py:4:", "main.py:9:12: return make_greeter()"],
        ),
        ok(
            json!({"operation": "symbols", "file": "lib.py"}),
            &["class Greeter", "greet", "make_greeter"],
        ),
    ];
    check_all(&fx, &cases).await;
    if !lints {
        // No linter: a write still syncs and gets the (empty) diagnostics of the new content.
        let out = fx.write("broken.py", "value = make_greeter_typo()\n").await;
        assert_eq!(out.text, "wrote broken.py");
        rename(&fx).await;
        return;
    }
    check_write_ledger(
        &fx,
        "broken.py",
        "from lib import make_greeter\n\nvalue = make_greeter()\n",
        "from lib import make_greeter\n\nvalue = make_greeter_typo()\n",
        "make_greeter_typo",
    )
    .await;
    rename(&fx).await;
}

/// Rename `make_greeter` everywhere, then navigate with the new name.
pub async fn rename(fx: &Fx) {
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "main.py", "line": 4, "symbol": "make_greeter", "new_name": "build_greeter"}),
        )
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    // Servers differ in edit granularity (pylsp sends one whole-file edit per file).
    // (broken.py, written by the ledger cases, imports it too: some servers rename there.)
    assert!(text.contains("- lib.py: "), "{text}");
    assert!(text.contains("- main.py: "), "{text}");
    assert!(
        fx.read("lib.py")
            .contains("def build_greeter() -> Greeter:")
    );
    assert!(!fx.read("main.py").contains("make_greeter"));
    assert_eq!(fx.read("main.py").matches("build_greeter").count(), 3);
    check(
        fx,
        &ok(
            json!({"operation": "definition", "file": "main.py", "line": 9, "symbol": "build_greeter"}),
            &["lib.py:12:5: def build_greeter() -> Greeter:"],
        ),
    )
    .await;
}
