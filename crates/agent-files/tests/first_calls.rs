//! The calls a model naturally makes first: `read` windows with numbered lines and a directory,
//! both patch formats, and the aliases (`file` for `path`).

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};

fn registry(root: &std::path::Path) -> Registry {
    let r = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    r
}

async fn call(r: &Registry, tool: &str, args: Value) -> ToolOutput {
    r.call(tool, args, Surface::Full).await
}

#[tokio::test]
async fn read_windows_are_numbered_and_say_how_to_continue() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("ten.txt"), text).unwrap();
    let r = registry(dir.path());
    let out = call(
        &r,
        "read",
        json!({"file": "ten.txt", "offset": 3, "limit": 2}),
    )
    .await;
    assert_eq!(
        out.text,
        "3| line 3\n4| line 4\n[lines 3–4 of ten.txt shown; more follow: continue with `offset` 5]"
    );
    let out = call(&r, "read", json!({"path": "ten.txt", "offset": 9})).await;
    assert_eq!(
        out.text,
        "9| line 9\n10| line 10\n[end of ten.txt: lines 9–10 of 10]"
    );
    let out = call(&r, "read", json!({"path": "ten.txt", "offset": 20})).await;
    assert!(
        out.text
            .contains("has 10 line(s); `offset` 20 is past its end"),
        "{}",
        out.text
    );
    let out = call(&r, "read", json!({"path": "ten.txt", "offset": 0})).await;
    assert!(
        out.is_error && out.text.contains("`offset`"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn read_of_a_directory_lists_it_and_binaries_are_not_dumped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("blob.bin"), b"\x7fELF\0\0\x01").unwrap();
    let r = registry(dir.path());
    let out = call(&r, "read", json!({"path": "src"})).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("is a directory") && out.text.contains("main.rs"),
        "{}",
        out.text
    );
    let out = call(&r, "read", json!({"path": "blob.bin"})).await;
    assert_eq!(out.text, "blob.bin is a binary file (7 bytes); not shown");
}

/// A line of 3 MB (minified code) is cut, and the file is not held whole.
#[tokio::test]
async fn a_huge_line_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(3 << 20);
    std::fs::write(dir.path().join("min.js"), format!("{long}\nshort\n")).unwrap();
    let r = registry(dir.path());
    let out = call(&r, "read", json!({"path": "min.js"})).await;
    assert!(out.text.len() < 10_000, "{}", out.text.len());
    assert!(out.text.contains("[…line cut at 2000 characters]"));
    assert!(
        out.text.contains("2| short"),
        "{}",
        &out.text[out.text.len() - 100..]
    );
}

#[tokio::test]
async fn the_envelope_format_adds_updates_moves_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/a.py"),
        "def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 1\r\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let r = registry(dir.path());
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def g():\n-    return 1\n+    return 2\n*** Delete File: gone.txt\n*** End Patch\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        out.changed_files,
        vec!["new.txt", "src/a.py", "src/b.py", "gone.txt"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "hello\n"
    );
    assert!(!dir.path().join("src/a.py").exists());
    assert!(!dir.path().join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/b.py")).unwrap(),
        "def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n"
    );
}

/// An ambiguous chunk, or one that does not apply, changes no file — not even the files whose
/// sections came before it.
#[tokio::test]
async fn an_envelope_that_does_not_apply_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\nsame\nx\nsame\n").unwrap();
    let r = registry(dir.path());
    let patch = "*** Begin Patch\n*** Add File: first.txt\n+1\n*** Update File: a.txt\n@@\n-same\n+other\n*** End Patch\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(out.is_error);
    assert!(out.text.contains("occur at lines 2, 4"), "{}", out.text);
    assert!(!dir.path().join("first.txt").exists());
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-absent\n+other\n*** End Patch\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(out.is_error && out.text.contains("absent"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x\nsame\nx\nsame\n"
    );
}
