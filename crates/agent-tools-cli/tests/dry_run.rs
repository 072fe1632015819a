//! Issue 42: `dry_run` on every write tool (`write`, `edit`, `apply_patch`, `lsp_rename`,
//! `resolve`), through the composed host against the real pyright. Each dry run reports the
//! problems the change would bring — the same ones the real call then reports, no more, no
//! fewer — writes no file, and leaves the server's view as the disk has it: a `diagnostics`
//! of every file after the dry run finds none of its problems.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

const FILES: &[(&str, &str)] = &[
    ("pyproject.toml", "[project]\nname = \"t\"\n"),
    ("a.py", "def f(x: int) -> int:\n    return x\n"),
    ("b.py", "from a import f\n\nprint(f(1))\n"),
    (
        "r.py",
        "def h(x: int) -> int:\n    y = \"s\"\n    print(y)\n    return x\n",
    ),
];

fn start(root: &Path) -> Client {
    agent_testkit::require("pyright-langserver");
    let mut c = Client::start(root, &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    c
}

fn call(c: &mut Client, id: &mut i64, name: &str, args: Value) -> (String, Value) {
    *id += 1;
    let r = c.rpc(*id, "tools/call", json!({"name": name, "arguments": args}));
    assert_eq!(r["result"]["isError"], false, "{name} {args}: {r}");
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    (text, r["result"]["structuredContent"].clone())
}

/// Every problem a write's answer reports: (list, path, line, message).
fn problems(s: &Value) -> BTreeSet<(String, String, u64, String)> {
    let mut out = BTreeSet::new();
    for (k, v) in s.as_object().unwrap() {
        if !k.starts_with("diagnostics") {
            continue;
        }
        for d in v.as_array().into_iter().flatten() {
            if d.is_object() {
                out.insert((
                    k.clone(),
                    d["path"].as_str().unwrap().to_string(),
                    d["line"].as_u64().unwrap(),
                    d["message"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    out
}

fn disk(root: &Path) -> Vec<String> {
    FILES
        .iter()
        .map(|(f, _)| std::fs::read_to_string(root.join(f)).unwrap())
        .collect()
}

/// Run `tool` with `args` as a dry run, then for real, on a fresh project and host; `stage`
/// runs first (ast_edit for resolve).
fn check(tool: &str, args: Value, stage: Option<(&str, Value)>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (f, text) in FILES {
        std::fs::write(root.join(f), text).unwrap();
    }
    let mut c = start(&root);
    let mut id = 1;
    // Every Python file open and clean first.
    for f in ["a.py", "b.py", "r.py"] {
        let (text, _) = call(
            &mut c,
            &mut id,
            "lsp",
            json!({"operation": "diagnostics", "path": f}),
        );
        assert!(
            text.contains("no errors or warnings"),
            "{f} starts clean: {text}"
        );
    }
    if let Some((name, a)) = &stage {
        call(&mut c, &mut id, name, a.clone());
    }
    let before = disk(&root);
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (text, s) = call(&mut c, &mut id, tool, dry);
    assert!(
        text.contains("dry run: nothing was written"),
        "{tool}: {text}"
    );
    assert!(!text.contains("The write succeeded"), "{tool}: {text}");
    assert_eq!(s["dry_run"], true, "{tool}: {s}");
    let would = problems(&s);
    assert!(
        !would.is_empty(),
        "{tool}: the dry run reports the problems: {text}"
    );
    assert!(
        text.contains("Not written (dry run)") || text.contains("New problems"),
        "{tool}: {text}"
    );
    assert_eq!(disk(&root), before, "{tool}: the dry run wrote a file");
    println!("{tool} dry run:\n{text}\n");
    // The server's view is the disk's again: none of those problems is there. `b.py` first:
    // asking about a file syncs that file, so its problems tell what the server holds of a.py.
    for f in ["b.py", "r.py", "a.py"] {
        let (text, _) = call(
            &mut c,
            &mut id,
            "lsp",
            json!({"operation": "diagnostics", "path": f}),
        );
        assert!(
            text.contains("no errors or warnings"),
            "{tool}: after the dry run the server still sees the change in {f}: {text}"
        );
    }
    let (text, s) = call(&mut c, &mut id, tool, args);
    assert!(!text.contains("dry run"), "{tool}: {text}");
    assert_ne!(disk(&root), before, "{tool}: the real call wrote");
    assert_eq!(
        problems(&s),
        would,
        "{tool}: the dry run and the write report the same new problems: {text}"
    );
    println!(
        "{tool}: dry run and write agree on {} problem(s)",
        would.len()
    );
}

const BREAKING: &str = "def f(x: int, y: int) -> int:\n    return x + y\n";

#[test]
fn write_dry_run() {
    check("write", json!({"path": "a.py", "content": BREAKING}), None);
}

#[test]
fn edit_dry_run() {
    check(
        "edit",
        json!({"path": "a.py", "old_string": "def f(x: int)", "new_string": "def f(x: int, y: int)"}),
        None,
    );
}

#[test]
fn apply_patch_dry_run() {
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-def f(x: int) -> int:\n+def f(x: int, y: int) -> int:\n*** End Patch\n";
    check("apply_patch", json!({"patch": patch}), None);
}

#[test]
fn lsp_rename_dry_run() {
    // Renaming the parameter onto the local `y` makes `y: int` hold a str.
    check(
        "lsp_rename",
        json!({"path": "r.py", "line": 1, "symbol": "x", "new_name": "y"}),
        None,
    );
}

#[test]
fn resolve_dry_run() {
    check(
        "resolve",
        json!({"edit_id": "edit_1", "operation": "accept"}),
        Some((
            "ast_edit",
            json!({"pattern": "f(1)", "rewrite": "f(\"one\")", "path": "b.py", "language": "python"}),
        )),
    );
}
