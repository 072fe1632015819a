//! Issue 42, the syntax a pattern is matched against: `ast_grep` with `tree: true` shows how the
//! pattern parsed (its context, node kinds, field names, metavariables as written) and, when
//! `path` is one file, that file's tree, so a pattern that finds nothing can be fixed from what
//! the grammar made of it. Bounded: a deep or large file shows at most `MAX_NODES` nodes and
//! counts the rest; a file outside the root or a symlink out is refused; bytes that are not
//! UTF-8 are said, not parsed; control characters in the file are escaped.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::Path;

fn registry(root: &Path) -> Registry {
    let registry = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());
    registry
}

async fn call(reg: &Registry, args: Value) -> ToolOutput {
    reg.call("ast_grep", args, Surface::Full).await
}

#[tokio::test]
async fn the_pattern_and_the_file_are_shown_as_the_grammar_parsed_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "def greet(name):\n    return foo(name, 1)\n",
    )
    .unwrap();
    let reg = registry(dir.path());
    // Why `foo($A)` finds nothing in a.py: the call there has two arguments.
    let out = call(
        &reg,
        json!({"pattern": "foo($A)", "path": "a.py", "tree": true}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    let want = "pattern `foo($A)` (python), parsed in context `statement → call`:\n\
                call [1:1-1:8]\n  function: identifier [1:1-1:4] `foo`\n  \
                arguments: argument_list [1:4-1:8]\n    identifier [1:5-1:7] `$A`  ← metavariable";
    assert!(out.text.starts_with(want), "{}", out.text);
    assert!(
        out.text.contains("a.py (python), 12 of 12 named nodes:")
            && out.text.contains("          arguments: argument_list [2:15-2:24]\n            identifier [2:16-2:20] `name`\n            integer [2:22-2:23] `1`"),
        "{}",
        out.text
    );
    let s = out.structured.unwrap();
    assert_eq!(s["pattern"]["total"], 4);
    assert_eq!(s["file"]["total"], 12);
    // A search with the same pattern finds nothing, as the trees say.
    let searched = call(&reg, json!({"pattern": "foo($A)", "path": "a.py"})).await;
    assert!(searched.text.contains("no matches"), "{}", searched.text);

    // C: the call statement, with the `;` the context supplied said.
    std::fs::write(dir.path().join("k.c"), "void f(void *p) { kfree(p); }\n").unwrap();
    let out = call(
        &reg,
        json!({"pattern": "kfree($X)", "path": "k.c", "tree": true}),
    )
    .await;
    assert!(
        out.text
            .contains("parsed in context `statement (`;` supplied) → call_expression`")
            && out.text.contains("function_definition [1:1-1:30]"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn hostile_files_are_bounded_refused_or_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // 3,000 statements: more nodes than are shown.
    std::fs::write(root.join("big.py"), "x = 1\n".repeat(3000)).unwrap();
    // 20,000 nested parentheses: no stack overflow.
    std::fs::write(
        root.join("deep.py"),
        format!("y = {}1{}\n", "(".repeat(20_000), ")".repeat(20_000)),
    )
    .unwrap();
    std::fs::write(root.join("esc.py"), "s = '\x1b]0;owned\x07'\n").unwrap();
    std::fs::write(root.join("latin.py"), b"s = '\xff'\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "token = 'SECRET'\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), root.join("link.py")).unwrap();
    let reg = registry(root);

    let out = call(
        &reg,
        json!({"pattern": "x = $V", "path": "big.py", "tree": true}),
    )
    .await;
    let s = out.structured.as_ref().unwrap();
    assert_eq!(s["file"]["shown"], agent_astgrep::TREE_MAX_NODES);
    assert_eq!(s["file"]["total"], 1 + 3000 * 4, "{}", out.text);
    let out = call(
        &reg,
        json!({"pattern": "y = $V", "path": "deep.py", "tree": true}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    let out = call(
        &reg,
        json!({"pattern": "s = $V", "path": "esc.py", "tree": true}),
    )
    .await;
    assert!(
        !out.text.contains('\x1b') && out.text.contains("\\x1b"),
        "{}",
        out.text
    );
    let out = call(
        &reg,
        json!({"pattern": "s = $V", "path": "latin.py", "tree": true}),
    )
    .await;
    assert!(
        out.text.contains("`latin.py` is not UTF-8 text"),
        "{}",
        out.text
    );
    for path in [
        "link.py",
        "../secret.py",
        &outside.path().join("secret.py").display().to_string(),
    ] {
        let out = call(
            &reg,
            json!({"pattern": "token = $V", "path": path, "tree": true}),
        )
        .await;
        assert!(
            !out.text.contains("SECRET"),
            "{path}: the tree showed what is outside the root: {}",
            out.text
        );
    }
}
