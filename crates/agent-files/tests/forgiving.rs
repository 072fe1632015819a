//! Forgiving where the intent is clear (issue 25): `edit` with `replace_all`, and `apply_patch`
//! context matched exactly first, then ignoring trailing whitespace, then with typographic
//! punctuation normalised — all or nothing, saying which tolerance was used, and never on a
//! guess: a hunk that a tolerance matches at several places is refused with the candidates.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::Path;

fn registry(root: &Path) -> Registry {
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

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

#[tokio::test]
async fn edit_replace_all_replaces_every_occurrence_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.py"), "old = 1\nprint(old)\nreturn old\n").unwrap();
    let r = registry(root);
    // The default still refuses a text that is not unique, and names the way out.
    let out = call(
        &r,
        "edit",
        json!({"path": "a.py", "old_string": "old", "new_string": "new"}),
    )
    .await;
    assert!(out.is_error);
    insta::assert_snapshot!("edit_not_unique", out.text);
    assert_eq!(read(root, "a.py"), "old = 1\nprint(old)\nreturn old\n");
    // As models write it (`file_path`, `replace_all`).
    let out = call(
        &r,
        "edit",
        json!({"file_path": "a.py", "old_string": "old", "new_string": "new", "replace_all": true}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "edited a.py (3 replacement(s))");
    assert_eq!(out.structured.unwrap()["replacements"], json!(3));
    assert_eq!(out.changed_files, vec!["a.py"]);
    assert_eq!(read(root, "a.py"), "new = 1\nprint(new)\nreturn new\n");
    // `replace_all` with one occurrence, and with none.
    let out = call(
        &r,
        "edit",
        json!({"path": "a.py", "old_string": "print", "new_string": "log", "replace_all": true}),
    )
    .await;
    assert_eq!(out.text, "edited a.py (1 replacement(s))");
    let out = call(
        &r,
        "edit",
        json!({"path": "a.py", "old_string": "absent", "new_string": "x", "replace_all": true}),
    )
    .await;
    assert!(
        out.is_error && out.text.contains("does not occur"),
        "{}",
        out.text
    );
}

/// The file has trailing spaces the model's patch does not (and one the other way round): the
/// patch applies, the note says so, and the file's own context lines are kept.
#[tokio::test]
async fn a_patch_with_trailing_whitespace_drift_applies_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("a.py"),
        "def f():  \n    x = 1\n    return x\n\n\ndef g():\n    y = 2\t\n    return y\n",
    )
    .unwrap();
    let r = registry(root);
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n def f():\n-    x = 1\n+    x = 10\n     return x\n@@ -6,3 +6,3 @@\n def g():\n-    y = 2\n+    y = 20\n     return y\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("patch_trailing_whitespace", out.text);
    assert_eq!(
        read(root, "a.py"),
        "def f():  \n    x = 10\n    return x\n\n\ndef g():\n    y = 20\n    return y\n"
    );
    // An exact patch says nothing of tolerance.
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-    x = 10\n+    x = 11\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert_eq!(out.text, "patched 1 file(s): a.py");
}

/// A model that writes curly quotes, an en dash and an ellipsis where the file has ASCII (and
/// straight quotes where a doc has curly ones): both formats apply, the note names the
/// tolerance, and the context lines keep the file's characters.
#[tokio::test]
async fn a_patch_with_typographic_punctuation_applies_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("a.py"),
        "print(\"it's done\")  # a - b...\nx = 1\n",
    )
    .unwrap();
    std::fs::write(
        root.join("doc.md"),
        "\u{201c}Quoted\u{201d} \u{2014} said the doc\u{a0}here\nend\n",
    )
    .unwrap();
    let r = registry(root);
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n print(\u{201c}it\u{2019}s done\u{201d})  # a \u{2013} b\u{2026}\n-x = 1\n+x = 2\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("patch_punctuation", out.text);
    assert_eq!(
        read(root, "a.py"),
        "print(\"it's done\")  # a - b...\nx = 2\n"
    );
    let patch = "*** Begin Patch\n*** Update File: doc.md\n@@\n \"Quoted\" - said the doc here\n-end\n+the end\n*** End Patch\n";
    let out = call(&r, "apply_patch", json!({"patch": patch})).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("doc.md: 1 hunk(s) matched only after normalising typographic punctuation"),
        "{}",
        out.text
    );
    assert_eq!(
        read(root, "doc.md"),
        "\u{201c}Quoted\u{201d} \u{2014} said the doc\u{a0}here\nthe end\n"
    );
}

/// A hunk with no exact match that a tolerance matches at two places is refused, naming both,
/// and no file is written — not even another file the patch changes first.
#[tokio::test]
async fn an_ambiguous_tolerant_match_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let a = "# top\nx = 1  \ny = 0\nx = 1 \n";
    std::fs::write(root.join("a.py"), a).unwrap();
    std::fs::write(root.join("b.py"), "keep\n").unwrap();
    let r = registry(root);
    let mut shown = Vec::new();
    for patch in [
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-keep\n+changed\n--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-x = 1\n+x = 2\n".to_string(),
        "*** Begin Patch\n*** Update File: b.py\n@@\n-keep\n+changed\n*** Update File: a.py\n@@ # top\n-x = 1\n+x = 2\n*** End Patch\n".to_string(),
        // Curly quotes matching two places.
        "--- a/q.py\n+++ b/q.py\n@@ -1 +1 @@\n-s = \u{2018}a\u{2019}\n+s = 'b'\n".to_string(),
    ] {
        std::fs::write(root.join("q.py"), "s = 'a'\nt = 1\ns = 'a'\n").unwrap();
        let out = call(&r, "apply_patch", json!({"patch": patch})).await;
        assert!(out.is_error, "{patch}: {}", out.text);
        shown.push(out.text);
        assert_eq!(read(root, "a.py"), a);
        assert_eq!(read(root, "b.py"), "keep\n");
        assert_eq!(read(root, "q.py"), "s = 'a'\nt = 1\ns = 'a'\n");
    }
    insta::assert_snapshot!("patch_ambiguous_tolerant", shown.join("\n\n"));
}

/// Issue 42: the envelope as models write it — codex's own scenarios 017 (an operation header
/// indented) and 020 (`*** Begin Patch ` and ` *** End Patch` padded) — applies; and an Add
/// File onto an existing file is refused naming the way (Delete File first), changing nothing.
#[tokio::test]
async fn envelope_headers_padded_with_whitespace_apply_and_add_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("foo.txt"), "old\n").unwrap();
    std::fs::write(root.join("file.txt"), "one\n").unwrap();
    let r = registry(root);
    let out = call(
        &r,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n  *** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n"}),
    )
    .await;
    assert!(!out.is_error, "017: {}", out.text);
    assert_eq!(read(root, "foo.txt"), "new\n");
    let out = call(
        &r,
        "apply_patch",
        json!({"patch": "*** Begin Patch \n*** Update File: file.txt\n@@\n-one\n+two\n *** End Patch\n"}),
    )
    .await;
    assert!(!out.is_error, "020: {}", out.text);
    assert_eq!(read(root, "file.txt"), "two\n");
    let out = call(
        &r,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: file.txt\n+clobbered\n*** End Patch\n"}),
    )
    .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("already exists") && out.text.contains("*** Delete File: file.txt"),
        "{}",
        out.text
    );
    assert_eq!(read(root, "file.txt"), "two\n");
    // Deleting first in the same patch is the way, and works.
    let out = call(
        &r,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Delete File: file.txt\n*** Add File: file.txt\n+fresh\n*** End Patch\n"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(read(root, "file.txt"), "fresh\n");
}
