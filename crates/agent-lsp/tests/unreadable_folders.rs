//! A folder of the workspace that cannot be listed is said, never skipped without a word
//! (issue 23): `lsp status` (which lists the roots a server would serve) and a workspace
//! `symbols` search that has to find files to start servers for both say how many folders
//! could not be read, and the first with its error. Before, both walks dropped the error
//! (`let Ok(rd) = read_dir(..) else { continue }`): a root or a file inside was missing with
//! nothing to say why.
//!
//! The folder fails to list for every user, root included (tests may run as root, for whom a
//! mode-000 folder is still readable): its full path is longer than `PATH_MAX` (4096 bytes), so
//! `opendir` fails with `ENAMETOOLONG`. It is made under a short path and moved into place, so
//! that nothing here ever names a path over the limit.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;
use std::path::PathBuf;

/// A workspace whose `deep/<255 × n>` folder (holding `pyproject.toml` and `app.py`) has a
/// path over 4096 bytes, while the workspace and `deep` itself stay under it.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let mut ws = base.join("w");
    while ws.as_os_str().len() < 4096 - 250 {
        ws.push("a".repeat(200));
    }
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("README.md"), "nothing to serve here\n").unwrap();
    let staging = base.join("s");
    let long = staging.join("deep").join("n".repeat(255));
    std::fs::create_dir_all(&long).unwrap();
    std::fs::write(long.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(long.join("app.py"), "x = 1\n").unwrap();
    std::fs::rename(staging.join("deep"), ws.join("deep")).unwrap();
    assert!(ws.join("deep").as_os_str().len() < 4096);
    let err = std::fs::read_dir(ws.join("deep").join("n".repeat(255))).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(36), "ENAMETOOLONG: {err}");
    (dir, ws)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folders_that_cannot_be_read_are_counted_and_named() {
    let (_dir, ws) = workspace();
    let reg = Registry::new(RunInfo {
        root: ws.clone(),
        ..Default::default()
    });
    agent_lsp::attach(&reg, common::config("python", "pyright"));

    let status = reg
        .call("lsp", json!({"operation": "status"}), Surface::Full)
        .await;
    assert!(!status.is_error, "{}", status.text);
    for shown in [
        "1 folder could not be read while looking for roots (first: deep/nnnn",
        "File name too long (os error 36)); a root inside it is not listed",
    ] {
        assert!(
            status.text.contains(shown),
            "{shown:?} in:\n{}",
            status.text
        );
    }
    assert_eq!(
        status.structured.as_ref().unwrap()["unreadable_folders"]["count"],
        1,
        "{:?}",
        status.structured
    );

    let symbols = reg
        .call(
            "lsp",
            json!({"operation": "symbols", "query": "x"}),
            Surface::Full,
        )
        .await;
    assert!(symbols.is_error, "{}", symbols.text);
    for shown in [
        "1 folder could not be read while looking for files (first: deep/nnnn",
        "File name too long (os error 36)); a file inside it was not looked at",
    ] {
        assert!(
            symbols.text.contains(shown),
            "{shown:?} in:\n{}",
            symbols.text
        );
    }
}
