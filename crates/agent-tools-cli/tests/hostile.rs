//! The host under hostile input: bytes that are not UTF-8 on stdin, FIFOs and huge sparse files
//! in the workspace, patches that lie. Each case failed on the code before it was fixed.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::{BIN, Client};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn call(root: &Path, tool: &str, args: Value) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["call", tool, &args.to_string(), "--root"])
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text.trim().to_string())
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

fn initialize(c: &mut Client) {
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "agent-tools");
}

/// The next message the host writes.
fn next(c: &mut Client) -> Value {
    use std::io::BufRead;
    let mut line = String::new();
    assert!(
        c.stdout.read_line(&mut line).unwrap() > 0,
        "serve closed stdout"
    );
    serde_json::from_str(&line).unwrap()
}

/// One byte of invalid UTF-8 used to end the host (rc 1, every child killed).
#[test]
fn serve_survives_bytes_that_are_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &[]);
    initialize(&mut c);
    c.stdin.write_all(b"\xff\xfe{\"jsonrpc\"\n").unwrap();
    c.stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\", \"params\": {\"x\": \"\xc3\x28\"}}\n")
        .unwrap();
    for _ in 0..2 {
        let err = next(&mut c);
        assert_eq!(err["error"]["code"], -32700, "{err}");
        assert!(err["id"].is_null(), "{err}");
    }
    // Still serving.
    let pong = c.rpc(8, "ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    assert!(c.child.try_wait().unwrap().is_none());
}

/// Two reads of FIFOs used to block two runtime threads and hang the host (ping unanswered).
#[test]
fn reading_fifos_is_refused_and_the_host_keeps_answering() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("p1"));
    mkfifo(&dir.path().join("p2"));
    let mut c = Client::start(dir.path(), &[]);
    initialize(&mut c);
    for (id, p) in [(2, "p1"), (3, "p2")] {
        let r = c.rpc(
            id,
            "tools/call",
            json!({"name": "read", "arguments": {"path": p}}),
        );
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("FIFO"), "{text}");
    }
    let pong = c.rpc(4, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    // The write tools refuse it too, instead of blocking on it.
    let (code, text) = call(dir.path(), "write", json!({"path": "p1", "content": "x"}));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("FIFO"), "{text}");
}

/// A 1 GiB sparse file used to be loaded whole: now `read` looks at its first 8 KiB, sees a
/// binary file and says so with its size.
#[test]
fn read_of_a_huge_sparse_file_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("big.bin")).unwrap();
    f.set_len(1 << 30).unwrap();
    let (code, text) = call(dir.path(), "read", json!({"path": "big.bin"}));
    assert_eq!(code, 0, "{}", &text[..200.min(text.len())]);
    assert_eq!(
        text,
        "big.bin is a binary file (1073741824 bytes); not shown"
    );
}

/// A deletion whose `-` lines are not the file used to delete it anyway.
#[test]
fn a_deletion_that_does_not_match_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "precious\ndata\n").unwrap();
    let patch = "--- a/keep.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-something\n-else\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("deletes `keep.txt`"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "precious\ndata\n"
    );
    // The matching deletion works.
    let patch = "--- a/keep.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-precious\n-data\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 0, "{text}");
    assert!(!dir.path().join("keep.txt").exists());
}

/// Two sections for one file used to lose the first ("patched 2 files: one.txt, one.txt").
#[test]
fn two_sections_for_one_file_both_apply() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.txt"), "a\nb\nc\nd\ne\n").unwrap();
    let patch = "--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n\
                 --- a/one.txt\n+++ b/one.txt\n@@ -4,2 +4,2 @@\n d\n-e\n+E\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("patched 1 file(s): one.txt"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "A\nb\nc\nd\nE\n"
    );
}

/// A CRLF file used to come back LF.
#[test]
fn a_patched_crlf_file_stays_crlf() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    let patch = "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2.5\n three\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        std::fs::read(dir.path().join("w.txt")).unwrap(),
        b"one\r\n2\r\n2.5\r\nthree\r\n"
    );
}

/// A symlink planted where the target file is, pointing out of the root: the write tools refuse
/// it and the outside file is untouched, and no symlink out of the root is left at the target.
#[test]
fn writes_never_land_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("t.txt")).unwrap();
    for (tool, args) in [
        ("write", json!({"path": "t.txt", "content": "pwned"})),
        (
            "edit",
            json!({"path": "t.txt", "old_string": "precious", "new_string": "pwned"}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-precious\n+pwned\n"}),
        ),
    ] {
        let (code, text) = call(dir.path(), tool, args);
        assert_eq!(code, 1, "{tool}: {text}");
        assert!(
            text.contains("outside the workspace root"),
            "{tool}: {text}"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}
