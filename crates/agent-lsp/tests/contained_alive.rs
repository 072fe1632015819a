//! A contained node server lives as long as the run: pyright and typescript-language-server
//! (vscode-languageserver) check their client's `processId` every 3 s with `kill(pid, 0)` and
//! exit when it fails, and under Landlock's signal scope it always fails — so each died 3 s
//! after its start, and a hover on a loaded machine saw "exited while handling". A server that
//! cannot reach the client is told no `processId`; here both still run 8 s after their first
//! answer, with the pid they started with.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use agent_lsp::config::UntrustedSandbox;
use common::*;
use serde_json::json;

/// The `- <server> for …(pid N): …` lines of `status`.
fn running(text: &str, server: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(&format!("- {server} for ")) && l.contains("(pid "))
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_servers_under_landlock_outlive_their_client_check() {
    require("pyright-langserver");
    require("typescript-language-server");
    let mut cfg = config("python", "pyright");
    cfg.overrides.languages.insert(
        "typescript".into(),
        vec!["typescript-language-server".into()],
    );
    cfg.trust_project = false;
    cfg.overrides.untrusted_sandbox = Some(UntrustedSandbox::Landlock);
    let fx = fixture("", cfg);
    std::fs::write(fx.root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(
        fx.root.join("app.py"),
        "def greet(name: str) -> str:\n    return name\n\n\ngreet(\"x\")\n",
    )
    .unwrap();
    std::fs::create_dir_all(fx.root.join("web")).unwrap();
    std::fs::write(fx.root.join("web/tsconfig.json"), "{}\n").unwrap();
    std::fs::write(
        fx.root.join("web/app.ts"),
        "export function greet(name: string): string {\n  return name;\n}\ngreet(\"x\");\n",
    )
    .unwrap();
    for (path, line) in [("app.py", 5), ("web/app.ts", 4)] {
        let out = fx
            .lsp(json!({"operation": "hover", "path": path, "line": line, "symbol": "greet"}))
            .await;
        assert!(
            !out.is_error && out.text.contains("greet"),
            "{path}: {}",
            out.text
        );
    }
    let before = fx.lsp(json!({"operation": "status"})).await.text;
    assert!(before.contains("Landlock"), "{before}");
    let started = (
        running(&before, "pyright"),
        running(&before, "typescript-language-server"),
    );
    assert!(!started.0.is_empty() && !started.1.is_empty(), "{before}");
    // Past two of the servers' 3 s checks.
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    let after = fx.lsp(json!({"operation": "status"})).await.text;
    assert_eq!(
        (
            running(&after, "pyright"),
            running(&after, "typescript-language-server")
        ),
        started,
        "a contained server exited: {after}"
    );
}
