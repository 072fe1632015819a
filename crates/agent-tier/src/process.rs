//! Where a family's programs are: binary and root-marker lookup in the file system.
//!
//! This module starts nothing; `agent-proc` is the only code that spawns a child (its own
//! process group, the run's tag, the parent-death signal, the sweep of what a child left behind).

use std::path::{Path, PathBuf};

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Resolve the first of `names` that exists: first in each of `local_dirs` (relative to
/// `root`, e.g. `node_modules/.bin`, `.venv/bin`), then on `$PATH`.
pub fn resolve_binary(root: &Path, local_dirs: &[&str], names: &[&str]) -> Option<PathBuf> {
    for name in names {
        for dir in local_dirs {
            let p = root.join(dir).join(name);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    for name in names {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    None
}

/// The nearest ancestor of `start` (inclusive), not above `root`, that contains one of
/// `markers`.
pub fn find_root_marker(root: &Path, start: &Path, markers: &[&str]) -> Option<PathBuf> {
    let mut dir = if start.is_dir() {
        start.to_path_buf()
    } else {
        start.parent()?.to_path_buf()
    };
    loop {
        if markers.iter().any(|m| dir.join(m).exists()) {
            return Some(dir);
        }
        if dir == root || !dir.starts_with(root) || !dir.pop() {
            return None;
        }
    }
}
