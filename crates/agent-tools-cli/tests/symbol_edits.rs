//! Issue 42: `edit` by `symbol` — a definition addressed by its name path, found from the
//! grammars `ast_grep` uses. Without any language server (no project marker, so none starts):
//! Python, Rust (an `impl` block), Go (a method's receiver) and TypeScript (an exported
//! function), replaced whole or given text before or after, re-indented to the site; an
//! ambiguous name refused with the candidates and nothing written. With pyright, the edit's
//! diagnostics on write, as for any `edit`.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use common::{Client, call_json as call};
use serde_json::{Value, json};
use std::path::Path;

fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-tools")).unwrap();
    std::fs::write(cfg.path().join("agent-tools/lsp.json"), "{}").unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (dir, cfg)
}

fn edit(root: &Path, cfg: &Path, args: Value) -> (bool, String) {
    let (err, text, _) = call(root, cfg, "edit", args);
    (err, text)
}

const PY: &str = "class Greeter:\n    def greet(self) -> str:\n        return \"hi\"\n\n\nclass Other:\n    def greet(self) -> str:\n        return \"other\"\n\n\n@staticmethod\ndef make() -> Greeter:\n    return Greeter()\n";

#[test]
fn python_by_name_path_without_a_server() {
    let (dir, cfg) = root_with(&[("lib.py", PY)]);
    let r = dir.path();
    let read = || std::fs::read_to_string(r.join("lib.py")).unwrap();
    // Replaced whole; the model's text has no indentation of its own.
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "Greeter.greet", "new_string": "def greet(self) -> str:\n    return \"hello\"\n"}),
    );
    assert!(!err, "{text}");
    assert!(
        text.contains("replaced method Greeter.greet (line 2)"),
        "{text}"
    );
    assert!(
        read().starts_with("class Greeter:\n    def greet(self) -> str:\n        return \"hello\"\n\n\nclass Other:\n    def greet(self) -> str:\n        return \"other\""),
        "{}",
        read()
    );
    // A decorated function is replaced with its decorator.
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "make", "new_string": "def make() -> Greeter:\n    return Greeter()"}),
    );
    assert!(!err, "{text}");
    assert!(!read().contains("@staticmethod"), "{}", read());
    // Before and after, on their own lines, at the definition's indentation.
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "Other.greet", "insert": "after", "new_string": "def wave(self) -> None:\n    pass"}),
    );
    assert!(!err, "{text}");
    assert!(
        read().contains("return \"other\"\n\n    def wave(self) -> None:\n        pass\n"),
        "{}",
        read()
    );
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "Other", "insert": "before", "new_string": "X = 1"}),
    );
    assert!(!err, "{text}");
    assert!(read().contains("\nX = 1\n\nclass Other:"), "{}", read());
    // Ambiguous: both candidates named, nothing written.
    let before = read();
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "greet", "new_string": "def greet(self): pass"}),
    );
    assert!(err, "{text}");
    assert!(
        text.contains("lib.py:2 method Greeter.greet") && text.contains("method Other.greet"),
        "{text}"
    );
    assert_eq!(read(), before);
    // Unknown, and both addresses at once: refused, naming what exists or what to give.
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "Nope.greet", "new_string": "x"}),
    );
    assert!(err && text.contains("Greeter.greet"), "{text}");
    let (err, text) = edit(
        r,
        cfg.path(),
        json!({"path": "lib.py", "symbol": "make", "old_string": "x", "new_string": "y"}),
    );
    assert!(err && text.contains("not both"), "{text}");
    assert_eq!(read(), before);
}

#[test]
fn rust_go_and_typescript_containers() {
    let (dir, cfg) = root_with(&[
        (
            "lib.rs",
            "pub struct Greeter;\n\nimpl Greeter {\n    pub fn greet(&self) -> i32 {\n        1\n    }\n}\n",
        ),
        (
            "lib.go",
            "package main\n\ntype Greeter struct{}\n\nfunc (g *Greeter) Greet() int {\n\treturn 1\n}\n",
        ),
        (
            "lib.ts",
            "export function make(): number {\n  return 1;\n}\n",
        ),
    ]);
    let r = dir.path();
    let cases = [
        (
            "lib.rs",
            "Greeter::greet",
            "pub fn greet(&self) -> i32 {\n    2\n}",
            "impl Greeter {\n    pub fn greet(&self) -> i32 {\n        2\n    }\n}",
        ),
        (
            "lib.go",
            "Greeter.Greet",
            "func (g *Greeter) Greet() int {\n\treturn 2\n}",
            "func (g *Greeter) Greet() int {\n\treturn 2\n}",
        ),
        (
            "lib.ts",
            "make",
            "export function make(): number {\n  return 2;\n}",
            "export function make(): number {\n  return 2;\n}\n",
        ),
    ];
    for (file, symbol, new, want) in cases {
        let (err, text) = edit(
            r,
            cfg.path(),
            json!({"path": file, "symbol": symbol, "new_string": new}),
        );
        assert!(!err, "{file}: {text}");
        let now = std::fs::read_to_string(r.join(file)).unwrap();
        assert!(now.contains(want), "{file}: {now}");
    }
}

#[test]
fn a_symbol_edit_reports_the_problems_it_brings() {
    agent_testkit::require("pyright-langserver");
    let (dir, _cfg) = root_with(&[
        ("pyproject.toml", "[project]\nname = \"t\"\n"),
        ("lib.py", PY),
    ]);
    let mut c = Client::start(dir.path(), &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let r = c.rpc(
        2,
        "tools/call",
        json!({"name": "edit", "arguments": {"path": "lib.py", "symbol": "Greeter.greet",
                "new_string": "def greet(self) -> str:\n    return 1\n"}}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(text.contains("replaced method Greeter.greet"), "{text}");
    assert!(
        text.contains("lib.py:3:") && text.contains("error"),
        "the new type error, as diagnostics on write report it: {text}"
    );
}
