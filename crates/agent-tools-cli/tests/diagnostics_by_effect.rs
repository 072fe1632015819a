//! Diagnostics on write follow the effect, not the tool's name: `resolve` (accepting an
//! `ast_edit` proposal) reports the problem it introduced, through the composed host, against
//! real pyright.

#![allow(clippy::unwrap_used)]

mod common;

use common::Client;
use serde_json::json;

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[test]
fn resolve_reports_the_problem_it_introduced() {
    // A test that needs a real program fails without it (`cargo xtask setup` installs it).
    assert!(
        on_path("pyright-langserver"),
        "pyright-langserver is not on PATH: run `cargo xtask setup`"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"t\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("mod.py"),
        "def f() -> int:\n    return 1\n\n\nx: int = f()\n",
    )
    .unwrap();
    let mut c = Client::start(dir.path(), &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    // Open the file first, so the server knows its content before the change.
    let diag = c.rpc(
        2,
        "tools/call",
        json!({"name": "lsp", "arguments": {"operation": "diagnostics", "file": "mod.py"}}),
    );
    assert_eq!(diag["result"]["isError"], false, "{diag}");
    let staged = c.rpc(
        3,
        "tools/call",
        json!({"name": "ast_edit", "arguments": {"pattern": "return 1", "rewrite": "return \"one\"", "path": "mod.py"}}),
    );
    assert_eq!(staged["result"]["isError"], false, "{staged}");
    let text = staged["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains("new problems"),
        "a proposal writes nothing: {text}"
    );
    let id = staged["result"]["structuredContent"]["edit_id"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .find(|w| w.starts_with("edit_"))
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no edit id in {staged}"));
    let done = c.rpc(
        4,
        "tools/call",
        json!({"name": "resolve", "arguments": {"edit_id": id, "action": "accept"}}),
    );
    assert_eq!(done["result"]["isError"], false, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("The language server reports these new problems")
            && text.contains("mod.py:2:12: error"),
        "{text}"
    );
    assert!(
        text.contains("pyright on `mod.py`: fresh for the written content"),
        "{text}"
    );
}
