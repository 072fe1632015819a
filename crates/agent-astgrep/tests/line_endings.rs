//! `ast_grep` and `ast_edit` number and show lines as every other tool does
//! (`agent_tier::lines`): a line ends at `\n`, `\r\n` or a lone `\r`. tree-sitter counts rows
//! by `\n` only, so before, everything after a lone `\r` was reported on the row it started
//! on — in a CR-only file, line 1 — and the shown line was the whole file (issue 23). The lines
//! expected here are the lines `read` shows for the same bytes (the host's
//! `tests/line_endings.rs` checks the two tools against each other).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

/// Lines: 1 `// one`, 2 `const a = 1;`, 3 (empty), 4 `foo(a);`, 5 `bar(a);`.
const CR_ONLY: &str = "// one\rconst a = 1;\r\rfoo(a);\rbar(a);\r";
/// Lines: 1 `// one`, 2 `const a = 1;`, 3 (empty), 4 `foo(a);`, 5 `let b =`, 6 `  foo(2);`.
const MIXED: &str = "// one\nconst a = 1;\r\n\rfoo(a);\r\nlet b =\r  foo(2);\n";

fn registry(root: &std::path::Path) -> Registry {
    let registry = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());
    registry
}

#[tokio::test]
async fn matches_are_numbered_and_shown_by_lf_crlf_and_lone_cr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cr.js"), CR_ONLY).unwrap();
    std::fs::write(dir.path().join("mixed.js"), MIXED).unwrap();
    let reg = registry(dir.path());

    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "foo($X)", "language": "javascript"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    let places: Vec<(String, u64, u64, u64, u64)> = out.structured.as_ref().unwrap()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["file"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
                m["column"].as_u64().unwrap(),
                m["end_line"].as_u64().unwrap(),
                m["end_column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("cr.js".to_string(), 4, 1, 4, 7),
            ("mixed.js".to_string(), 4, 1, 4, 7),
            ("mixed.js".to_string(), 6, 3, 6, 9),
        ],
        "{}",
        out.text
    );
    for shown in [
        "cr.js:4:1\n  4 | foo(a);\n",
        "mixed.js:4:1\n  4 | foo(a);\n",
        "mixed.js:6:3\n  6 |   foo(2);\n",
    ] {
        assert!(out.text.contains(shown), "{shown:?} in:\n{}", out.text);
    }
    assert!(!out.text.contains("\\r"), "{}", out.text);

    // A match over several lines shows each of them.
    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "let $A = $B", "language": "javascript", "path": "mixed.js"}),
            Surface::Full,
        )
        .await;
    assert!(
        out.text
            .contains("mixed.js:5:1\n  5 | let b =\n  6 |   foo(2);\n"),
        "{}",
        out.text
    );
}

/// A rewrite's diff has one line per line of the file, and a rewrite that no longer parses says
/// where, in the same lines.
#[tokio::test]
async fn rewrites_show_and_place_lines_by_lf_crlf_and_lone_cr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cr.js"), CR_ONLY).unwrap();
    let reg = registry(dir.path());
    let out = reg
        .call(
            "ast_edit",
            json!({"pattern": "bar($X)", "rewrite": "baz($X)", "language": "javascript", "path": "cr.js"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    for line in [
        "@@ -3,3 +3,3 @@",
        "\n-bar(a);\n",
        "\n+baz(a);",
        "\n foo(a);\n",
    ] {
        assert!(out.text.contains(line), "{line:?} in:\n{}", out.text);
    }
    assert!(!out.text.contains("\\r"), "{}", out.text);
    let out = reg
        .call(
            "ast_edit",
            json!({"pattern": "bar($X)", "rewrite": "bar($X", "language": "javascript", "path": "cr.js"}),
            Surface::Full,
        )
        .await;
    assert!(out.text.contains("line 5, column"), "{}", out.text);
}
