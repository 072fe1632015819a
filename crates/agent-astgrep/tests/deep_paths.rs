//! Issue 23: a file under a path longer than the kernel's 4,096-byte PATH_MAX (a deep tree) was
//! skipped without a word — the walk dropped the directory it could not open, and the result
//! read as if the whole tree had been searched. Now it is counted and named, clipped.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;
use std::path::Path;

/// The test process's working directory, which [`deep_tree`] moves.
static CWD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `depth` directories of 100 `d`s under `root/top`, made by walking down with relative
/// `chdir`s (no single path could name them), with `foo(2)` in a file `name` at the bottom.
fn deep_tree(root: &Path, depth: usize, name: &str) {
    std::fs::create_dir(root.join("top")).unwrap();
    std::fs::write(root.join("top/a.py"), "foo(1)\n").unwrap();
    let _cwd = CWD.lock().unwrap_or_else(|e| e.into_inner());
    let back = std::env::current_dir().unwrap();
    std::env::set_current_dir(root.join("top")).unwrap();
    let d = "d".repeat(100);
    for _ in 0..depth {
        std::fs::create_dir(&d).unwrap();
        std::env::set_current_dir(&d).unwrap();
    }
    std::fs::write(name, "foo(2)\n").unwrap();
    std::env::set_current_dir(back).unwrap();
}

async fn search(root: &Path) -> (String, serde_json::Value) {
    let registry = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());
    let out = registry
        .call(
            "ast_grep",
            json!({"pattern": "foo($X)", "language": "python"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    (out.text, out.structured.unwrap())
}

/// A directory whose own path is over PATH_MAX cannot be opened: it is counted and named.
#[tokio::test]
async fn a_directory_past_path_max_is_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    deep_tree(&root, 45, "deep.py");
    let (text, structured) = search(&root).await;
    assert!(text.contains("top/a.py:1:1"), "{text}");
    let footer = text.lines().last().unwrap();
    assert!(
        footer.contains("skipped 1 unlisted (a directory the walk could not open: nothing under it was searched)"),
        "{footer}"
    );
    assert!(
        footer.contains(&format!("(top/{}/", "d".repeat(100))),
        "{footer}"
    );
    assert!(
        footer.contains("more bytes): path over 4096 bytes)"),
        "{footer}"
    );
    assert!(footer.len() < 600, "{} bytes: {footer}", footer.len());
    let stats = &structured["stats"];
    assert_eq!(stats["skipped_unvisited"], json!(1), "{stats}");
    assert_eq!(
        stats["skipped_files"][0]["why"],
        json!("path over 4096 bytes")
    );
}

/// A directory that opens but holds a file whose whole path is over PATH_MAX: the file is
/// counted as skipped, with why.
#[tokio::test]
async fn a_file_whose_path_passes_path_max_is_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    // `root/top` and k directories of 101 bytes each stay under 4,096; a 254-byte name does not.
    let base = root.join("top").as_os_str().len();
    let k = (4095 - base) / 101;
    let name = format!("{}.py", "f".repeat(250));
    assert!(base + 101 * k + 1 + name.len() > 4096);
    deep_tree(&root, k, &name);
    let (text, structured) = search(&root).await;
    let footer = text.lines().last().unwrap();
    assert!(footer.contains("skipped 1 unreadable"), "{footer}");
    assert!(
        footer.contains("more bytes): path over 4096 bytes)"),
        "{footer}"
    );
    assert_eq!(
        structured["stats"]["skipped_files"][0]["why"],
        json!("path over 4096 bytes")
    );
}
