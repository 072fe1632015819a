//! Landlock containment of an untrusted project's servers, where bubblewrap cannot run: the
//! server's private folder (its temp and caches) and the folders it may run programs from — the
//! system's and the toolchains', never the workspace.
//!
//! Owns: that policy, as an [`agent_proc::Confinement`] inside a [`Containment`]. Never: decides
//! which containment applies (that is [`super::untrusted`]) or applies the rules (agent-proc).

use super::{Containment, Uncontained};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A folder only the host's user can enter, removed when dropped.
#[derive(Debug)]
pub(super) struct PrivateDir(PathBuf);

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Landlock containment for a server of `ws`: a private folder for its temp and caches, and the
/// toolchain folders (never the workspace) as the only places it may run programs from.
pub(super) fn landlock(
    ws: &Path,
    mut env: BTreeMap<String, String>,
    why: &str,
    layer2: &str,
) -> Result<Containment, Uncontained> {
    let private = private_dir().map_err(|e| {
        Uncontained(format!(
            "cannot make the language server's private folder for Landlock: {e}"
        ))
    })?;
    let tmp = private.join("tmp");
    let cache = private.join("cache");
    for d in [&tmp, &cache] {
        let _ = std::fs::create_dir_all(d);
    }
    env.insert("TMPDIR".into(), tmp.display().to_string());
    env.insert("XDG_CACHE_HOME".into(), cache.display().to_string());
    env.insert(
        "GOCACHE".into(),
        cache.join("go-build").display().to_string(),
    );
    let path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let confinement = agent_proc::Confinement {
        writable: vec![private.clone()],
        executable: executable_dirs(ws, &path),
    };
    let summary = format!("{} ({why}); {layer2}", confinement.describe());
    Ok(Containment {
        wrap: Vec::new(),
        landlock: Some(confinement),
        env,
        summary,
        _private: Some(std::sync::Arc::new(PrivateDir(private))),
    })
}

/// A new folder under the temp folder that only this user can enter.
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "agent-tools-server-{}-{}-{n}",
        std::process::id(),
        agent_proc::run_id()
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// Where a contained server may run programs from: the system's program folders, the toolchain
/// homes, every `$PATH` entry — each as it is and resolved — but never the workspace: a folder
/// that holds the workspace is replaced by its entries beside the way down to it.
fn executable_dirs(ws: &Path, path: &[PathBuf]) -> Vec<PathBuf> {
    let ws = ws.canonicalize().unwrap_or_else(|_| ws.to_path_buf());
    let mut wanted: Vec<PathBuf> = [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix", "/snap",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for var in [
        "RUSTUP_HOME",
        "CARGO_HOME",
        "PYENV_ROOT",
        "GOROOT",
        "JAVA_HOME",
    ] {
        if let Some(v) = std::env::var_os(var) {
            wanted.push(PathBuf::from(v));
        }
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for d in [
            ".rustup",
            ".cargo",
            ".pyenv",
            "go/bin",
            ".local/bin",
            ".local/share",
            ".nvm",
            ".volta",
        ] {
            wanted.push(home.join(d));
        }
    }
    wanted.extend(path.iter().cloned());
    let mut out: Vec<PathBuf> = Vec::new();
    for p in wanted {
        for p in [p.canonicalize().ok(), Some(p)].into_iter().flatten() {
            if !p.is_absolute() || !p.exists() || p.starts_with(&ws) {
                continue;
            }
            for q in beside(&p, &ws, 0) {
                if !out.contains(&q) {
                    out.push(q);
                }
            }
        }
    }
    out.sort();
    out
}

/// `dir` itself when it does not hold `ws`; else its entries, the one on the way down to `ws`
/// replaced by its own entries in turn (so the workspace is never beneath a rule).
pub(super) fn beside(dir: &Path, ws: &Path, depth: usize) -> Vec<PathBuf> {
    if !ws.starts_with(dir) {
        return vec![dir.to_path_buf()];
    }
    if depth > 16 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p == ws {
            continue;
        }
        out.extend(beside(&p, ws, depth + 1));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn a_folder_that_holds_the_workspace_is_never_executable_beneath_it() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let ws = top.join("a/ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(top.join("a/tools")).unwrap();
        std::fs::create_dir_all(top.join("b")).unwrap();
        let dirs = executable_dirs(&ws, std::slice::from_ref(&top));
        assert!(dirs.contains(&top.join("a/tools")), "{dirs:?}");
        assert!(dirs.contains(&top.join("b")), "{dirs:?}");
        assert!(!dirs.iter().any(|d| ws.starts_with(d)), "{dirs:?}");
    }
}
