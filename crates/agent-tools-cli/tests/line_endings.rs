//! One definition of a line across the families of the composed host (issue 23): for files
//! whose lines end with a lone `\r`, and with `\n`, `\r\n` and `\r` mixed, every match
//! `ast_grep` reports on line N shows the text `read` numbers N. Before, `read` ended lines at
//! `\n` only and `ast_grep` took tree-sitter's rows (also `\n` only), so a CR-only file was one
//! line to both, and a mixed file numbered differently from what a language server, a debugger
//! or Python counts.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_tools_cli::host::{HostOptions, build};
use serde_json::json;

const FILES: &[(&str, &str)] = &[
    ("cr.js", "// one\rconst a = 1;\r\rfoo(a);\rbar(foo(b));\r"),
    (
        "mixed.js",
        "// one\nconst a = 1;\r\n\rfoo(a);\r\nlet b =\r  foo(2);\n\r\r\nfoo(3);",
    ),
];

#[tokio::test]
async fn ast_grep_and_read_number_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (name, text) in FILES {
        std::fs::write(root.join(name), text).unwrap();
    }
    let reg = build(&HostOptions {
        root: root.clone(),
        ..Default::default()
    });
    let surface = agent_tools::Surface::Full;
    let found = reg
        .call(
            "ast_grep",
            json!({"pattern": "foo($X)", "language": "javascript"}),
            surface,
        )
        .await;
    assert!(!found.is_error, "{}", found.text);
    let matches = found.structured.as_ref().unwrap()["matches"]
        .as_array()
        .unwrap()
        .clone();
    let mut seen = Vec::new();
    for m in &matches {
        let (file, line) = (m["file"].as_str().unwrap(), m["line"].as_u64().unwrap());
        let shown = m["lines"][0].as_str().unwrap();
        let read = reg
            .call(
                "read",
                json!({"path": file, "offset": line, "limit": 1}),
                surface,
            )
            .await;
        assert!(!read.is_error, "{}", read.text);
        let numbered = read.text.lines().next().unwrap_or_default();
        assert_eq!(
            numbered,
            format!("{line}| {shown}"),
            "ast_grep's {file}:{line} against read's line {line}:\n{}",
            found.text
        );
        seen.push(format!("{file}:{line}"));
    }
    assert_eq!(
        seen,
        [
            "cr.js:4",
            "cr.js:5",
            "mixed.js:4",
            "mixed.js:6",
            "mixed.js:9"
        ],
        "{}",
        found.text
    );
}
