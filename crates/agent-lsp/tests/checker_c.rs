//! The project checker (`diagnostics "*"`) for C/C++: each unit of `compile_commands.json`
//! compiled again with `-fsyntax-only` by the real compiler (gcc), writing no object file.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compile_commands_units_are_checked() {
    require("gcc");
    let fx = fixture("", config("c", "clangd"));
    let build = fx.root.join("build");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::create_dir_all(fx.root.join("src")).unwrap();
    std::fs::write(
        fx.root.join("src/a.c"),
        "int f(void) {\n    return nope;\n}\n",
    )
    .unwrap();
    std::fs::write(
        fx.root.join("src/b.c"),
        "int g(void) {\n    int unused = 1;\n    return 0;\n}\n",
    )
    .unwrap();
    let db = json!([
        {"directory": fx.root.display().to_string(), "file": "src/a.c",
         "command": "gcc -Wall -c -o build/a.o src/a.c"},
        {"directory": fx.root.display().to_string(), "file": "src/b.c",
         "arguments": ["gcc", "-Wall", "-c", "-o", "build/b.o", "src/b.c"]}
    ]);
    std::fs::write(build.join("compile_commands.json"), db.to_string()).unwrap();

    let out = fx
        .lsp(json!({"operation": "diagnostics", "file": "*"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.contains("C/C++ -fsyntax-only in build (ran in ")
            && text.contains("1 error(s), 1 warning(s)"),
        "{text}"
    );
    assert!(text.contains("src/a.c:2:12: error"), "{text}");
    assert!(
        text.contains("nope") && text.contains("undeclared"),
        "{text}"
    );
    assert!(
        text.contains("src/b.c:2:9: warning[-Wunused-variable]"),
        "{text}"
    );
    // Only checked: no object file was written.
    assert!(!build.join("a.o").exists() && !build.join("b.o").exists());
}
