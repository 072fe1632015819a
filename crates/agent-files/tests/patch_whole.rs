//! `apply_patch` through the registry: a patch whose one hunk does not apply changes no file and
//! names that hunk with the lines it expected; a CRLF file stays CRLF byte for byte; a hunk whose
//! header miscounts its body is applied whole (recounted, and said so) or refused, never cut.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

fn registry(root: &std::path::Path) -> Registry {
    let r = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    r
}

#[tokio::test]
async fn a_wrong_hunk_changes_nothing_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    let r = registry(dir.path());
    // a.txt's hunk applies; b.txt's second hunk expects `zeta`, which is not there.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n\
                 --- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta\n\
                 @@ -3,2 +3,2 @@\n gamma\n-zeta\n+ZETA\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("b.txt"), "{}", out.text);
    assert!(
        out.text.contains("zeta"),
        "names the expected line: {}",
        out.text
    );
    assert!(
        out.text.contains("hunk 2") || out.text.contains("@@ -3,2 +3,2 @@"),
        "names the hunk: {}",
        out.text
    );
    assert!(out.changed_files.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\n",
        "the hunk that applied was not written either"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "alpha\nbeta\ngamma\ndelta\n"
    );
}

#[tokio::test]
async fn a_crlf_file_stays_crlf() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.txt"), "a\r\nb\r\nc\r\n").unwrap();
    let r = registry(dir.path());
    // The model writes the patch with LF lines, as it sees the file.
    let patch = "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        std::fs::read(dir.path().join("w.txt")).unwrap(),
        b"a\r\nB\r\nc\r\n"
    );
}

/// Issue 22: a header that under-counts its body (`-1,2 +1,2` over three changed lines) wrote
/// only the first change. Every line is applied now, and the result says the hunk was recounted.
#[tokio::test]
async fn an_under_counted_hunk_is_applied_whole_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\ny = 2\nz = 3\nrest\n").unwrap();
    let r = registry(dir.path());
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n-y = 2\n-z = 3\n+x = 10\n+y = 20\n+z = 30\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        out.text,
        "patched 1 file(s): a.py\nhunk 1 of a.py: header said -1,2 +1,2, body has -1,3 +1,3; recounted"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        "x = 10\ny = 20\nz = 30\nrest\n"
    );
}

/// A header that over-counts does not swallow the next file's `---`/`+++` header (a plain diff,
/// without `diff --git` lines); a recounted hunk that does not apply is refused with the lines it
/// expected and the recount named.
#[tokio::test]
async fn an_over_counted_hunk_stops_at_the_next_file_or_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\n").unwrap();
    let r = registry(dir.path());
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n-one\n+1\n two\n\
                 --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("hunk 1 of a.txt: header said -1,4 +1,4, body has -1,2 +1,2; recounted"),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "1\ntwo\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "ALPHA\n"
    );
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n-absent\n+one\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("`1`, `absent`")
            && out
                .text
                .contains("hunk 1 of a.txt: header said -1,1 +1,1, body has -1,2 +1,1; recounted"),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "1\ntwo\n"
    );
}
