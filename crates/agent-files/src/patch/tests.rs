//! Unit tests of the unified-diff parser and applier: recounted hunks, `/dev/null`, context drift.

use super::*;
use crate::hunks::FilePatch;

fn one(p: &str) -> FilePatch {
    let mut files = parse(p).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

#[test]
fn applies_a_simple_patch() {
    let f = one("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    assert_eq!(apply("a\nb\nc\n", &f.hunks).unwrap().0, "a\nB\nc\n");
}

#[test]
fn refuses_mismatched_context() {
    let f = one("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n x\n-b\n+B\n");
    let err = apply("a\nb\nc\n", &f.hunks).unwrap_err().to_string();
    assert!(err.contains("does not apply"), "{err}");
}

#[test]
fn new_file_from_dev_null() {
    let f = one("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n");
    assert_eq!(f.old_path, None);
    assert_eq!(apply("", &f.hunks).unwrap().0, "hello\nworld\n");
}

/// A deleted line that starts with `-- ` (an SQL comment) is `--- …` in the diff: the header's
/// counts say it belongs to the hunk, so it is not taken for a new file header.
#[test]
fn counts_delimit_hunks() {
    let p = "--- a/q.sql\n+++ b/q.sql\n@@ -1 +1 @@\n--- note\n+++ b/other\n";
    let err = parse(p).err();
    // `--- note` + `+++ b/other` would have been a second file before; now it is one hunk with
    // one deleted and one added line.
    assert!(err.is_none(), "{err:?}");
    let f = one(p);
    assert_eq!(
        f.hunks[0].lines,
        vec![('-', "-- note".into()), ('+', "++ b/other".into())]
    );
    assert_eq!(
        apply("-- note\nselect 1;\n", &f.hunks).unwrap().0,
        "++ b/other\nselect 1;\n"
    );
}

/// Issue 22: a header that under-counts its body no longer ends the hunk early (which dropped
/// the rest of the body silently); the hunk is recounted from its body and says so.
#[test]
fn an_under_counted_hunk_is_recounted_whole() {
    let f = one("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-a\n-b\n-c\n+A\n+B\n+C\n");
    let h = &f.hunks[0];
    assert_eq!(h.lines.len(), 6);
    assert_eq!(
        h.recount.as_ref().unwrap().describe(),
        "header said -1,2 +1,2, body has -1,3 +1,3; recounted"
    );
    assert_eq!(apply("a\nb\nc\nd\n", &f.hunks).unwrap().0, "A\nB\nC\nd\n");
}

/// A header that over-counts is recounted too, and does not swallow the next file's header.
#[test]
fn an_over_counted_hunk_stops_at_the_next_file() {
    let files = parse(
        "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+X\n",
    )
    .unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0].hunks[0].lines.len(), 3);
    assert_eq!(
        files[0].hunks[0].recount.as_ref().unwrap().body,
        (2, 2),
        "{files:?}"
    );
    assert_eq!(files[1].hunks[0].recount, None);
    // Over-counted up to the end of the input.
    let f = one("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n");
    assert_eq!(apply("a\nb\n", &f.hunks).unwrap().0, "a\nB\n");
}

/// A line that would be a hunk line but follows a complete hunk after other text is refused,
/// never skipped.
#[test]
fn a_stray_hunk_line_is_refused() {
    let err = parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\nnote\n-b\n+B\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 7") && err.contains("outside every hunk"),
        "{err}"
    );
}

/// An empty line inside a hunk is an empty context line; blank lines after a complete hunk are
/// not.
#[test]
fn empty_lines_are_context_inside_a_hunk_only() {
    let f = one("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n\n\n");
    assert_eq!(f.hunks[0].recount, None);
    assert_eq!(apply("a\n\nb\n", &f.hunks).unwrap().0, "a\n\nB\n");
}

/// `-l,0` hunks (`diff -U0` insertions) go after line `l`.
#[test]
fn a_pure_insertion_goes_after_its_start_line() {
    let f = one("--- a/f\n+++ b/f\n@@ -2,0 +3,2 @@\n+x\n+y\n");
    assert_eq!(apply("a\nb\nc\n", &f.hunks).unwrap().0, "a\nb\nx\ny\nc\n");
    let f = one("--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n");
    assert_eq!(apply("a\n", &f.hunks).unwrap().0, "x\na\n");
}

#[test]
fn crlf_files_stay_crlf() {
    let f = one("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n");
    assert_eq!(
        apply("a\r\nb\r\nc\r\n", &f.hunks).unwrap().0,
        "a\r\nB\r\nB2\r\nc\r\n"
    );
    // A CRLF patch against a CRLF file.
    let f = one("--- a/f.txt\r\n+++ b/f.txt\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n");
    assert_eq!(apply("a\r\nb\r\n", &f.hunks).unwrap().0, "a\r\nB\r\n");
}

#[test]
fn no_newline_markers_are_kept() {
    let f = one(
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
    );
    assert_eq!(apply("a\nb", &f.hunks).unwrap().0, "a\nc");
    let f = one("--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n");
    assert_eq!(apply("a", &f.hunks).unwrap().0, "a\nb\n");
}

#[test]
fn deletions_are_verified() {
    let f = one("--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n");
    assert!(verify_deletion("a\nb\n", &f.hunks).is_ok());
    let err = verify_deletion("x\ny\n", &f.hunks).unwrap_err().to_string();
    assert!(err.contains("does not apply"), "{err}");
    let err = verify_deletion("a\nb\nc\n", &f.hunks)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not the whole file"), "{err}");
}
