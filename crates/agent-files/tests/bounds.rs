//! What a hostile argument or file costs the file tools: a path argument is capped at PATH_MAX
//! and quoted clipped, and `read` is bounded by the bytes it scans, not by where its window lies.
//! Each case failed on the code before it was bounded.

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

/// A 1 MB path was echoed whole in the error; a 500,000-component path took 44 s to confine.
#[tokio::test]
async fn an_over_long_path_is_refused_naming_the_argument_its_length_and_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let r = registry(dir.path());
    let huge = "p".repeat(1 << 20);
    let deep = "d/".repeat(500_000);
    for path in [&huge, &deep] {
        for (tool, args) in [
            ("read", json!({"path": path})),
            ("write", json!({"path": path, "content": "x"})),
            (
                "edit",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
            ),
        ] {
            let out = call(&r, tool, args).await;
            assert!(out.is_error, "{tool}: {}", out.text);
            assert!(out.text.len() < 1000, "{tool}: {} bytes", out.text.len());
            assert!(out.text.contains("`path` = `"), "{tool}: {}", out.text);
            assert!(
                out.text.contains(&format!("is {} bytes long", path.len())),
                "{tool}: {}",
                out.text
            );
            assert!(out.text.contains("at most 4096 bytes"), "{}", out.text);
            assert!(
                out.text
                    .contains(&format!("… ({} more bytes)", path.len() - 200)),
                "{}",
                out.text
            );
        }
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// A file of text followed by a 10 GiB hole (a sparse file: nothing on disk).
fn sparse_file(dir: &std::path::Path) -> (String, u64) {
    let text: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
    let path = dir.join("sparse.log");
    std::fs::write(&path, &text).unwrap();
    let size = 10u64 << 30;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(size)
        .unwrap();
    (text, size)
}

/// `read` with an offset past the text of a sparse 10 GiB file scanned the whole hole looking
/// for the next line (56 s of CPU); it stops at the scan cap and says so.
#[tokio::test]
async fn a_read_past_the_text_of_a_sparse_file_stops_at_the_scan_cap() {
    let dir = tempfile::tempdir().unwrap();
    let (_, size) = sparse_file(dir.path());
    let r = registry(dir.path());
    let out = call(&r, "read", json!({"path": "sparse.log", "offset": 5000})).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.starts_with("[stopped: "), "{}", out.text);
    assert!(
        out.text.contains("line 2001 of sparse.log had not ended"),
        "{}",
        out.text
    );
    assert!(out.text.contains("64 MiB"), "{}", out.text);
    assert!(
        out.text.contains(&format!("({size} bytes in all)")),
        "{}",
        out.text
    );
    let s = out.structured.unwrap();
    assert_eq!(s["stopped_at_byte"], json!(64u64 << 20), "{s}");
    assert_eq!(s["lines"], json!(0));
}

/// From the start, the text is shown and the hole (one line of NUL bytes that never ends) is
/// neither shown nor scanned to its end.
#[tokio::test]
async fn a_read_of_a_sparse_file_shows_its_text_then_stops() {
    let dir = tempfile::tempdir().unwrap();
    sparse_file(dir.path());
    let r = registry(dir.path());
    let out = call(&r, "read", json!({"path": "sparse.log", "offset": 1990})).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.starts_with("1990| line 1990\n"),
        "{}",
        &out.text[..100]
    );
    assert!(out.text.contains("2000| line 2000\n[lines 1990–2000 of sparse.log shown; stopped: line 2001 had not ended"), "{}", out.text);
    assert!(!out.text.contains("2001|"), "{}", out.text);
    assert!(out.text.len() < 2000, "{} bytes", out.text.len());
}

/// Text under the cap reads as before, to its last line.
#[tokio::test]
async fn a_file_under_the_cap_is_read_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=3).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("a.txt"), text).unwrap();
    let r = registry(dir.path());
    let out = call(&r, "read", json!({"path": "a.txt", "offset": 2})).await;
    assert_eq!(
        out.text,
        "2| line 2\n3| line 3\n[end of a.txt: lines 2–3 of 3]"
    );
    assert!(out.structured.unwrap()["stopped_at_byte"].is_null());
}

/// The adversary's repro (issue 41): `replace_all` of `a` by 1 KiB in a 4 MiB file of `a` would
/// make a 4 GiB file, and the host aborted allocating it. The result's size is computed from the
/// count first and the call refused, naming the size and the bound; the file is as it was.
#[tokio::test]
async fn a_replace_all_that_would_grow_past_the_cap_is_refused_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let original = "a".repeat(4 << 20);
    std::fs::write(dir.path().join("big.txt"), &original).unwrap();
    let r = registry(dir.path());
    let out = call(
        &r,
        "edit",
        json!({"path": "big.txt", "old_string": "a", "new_string": "b".repeat(1024), "replace_all": true}),
    )
    .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("4294967296 bytes") && out.text.contains("nothing was written"),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("big.txt")).unwrap(),
        original
    );
}
