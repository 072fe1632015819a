//! Where a family's programs are: binary and root-marker lookup in the file system.
//!
//! This module starts nothing; `agent-proc` is the only code that spawns a child (its own
//! process group, the run's tag, the parent-death signal, the sweep of what a child left behind).

use std::path::{Path, PathBuf};

/// Whether `p` is a regular file the host may execute (the `which` crate's check).
fn is_executable(p: &Path) -> bool {
    std::path::absolute(p).is_ok_and(|p| {
        which::which_in_global(&p, None::<&std::ffi::OsStr>).is_ok_and(|mut f| f.next().is_some())
    })
}

/// Resolve the first of `names` that exists: first in each of `local_dirs` (relative to
/// `root`, e.g. `node_modules/.bin`, `.venv/bin`), then on `$PATH` (in its order, through the
/// `which` crate). Only executable regular files count.
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
    names.iter().find_map(|name| {
        which::which_in_global(name, Some(&path))
            .ok()
            .and_then(|mut found| found.next())
    })
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn local_dirs_first_then_path_and_only_executables() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (d, mode) in [("a", 0o644), ("b", 0o755)] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            let p = root.join(d).join("tool");
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        // `a/tool` is not executable: `b/tool` is found.
        assert_eq!(
            resolve_binary(root, &["a", "b"], &["tool"]),
            Some(root.join("b/tool"))
        );
        // A folder named like the program is not a program.
        std::fs::create_dir_all(root.join("c/agent-tier-no-such-xyz")).unwrap();
        assert_eq!(
            resolve_binary(root, &["c"], &["agent-tier-no-such-xyz"]),
            None
        );
        // `$PATH` after the local folders: `sh` is on it.
        let sh = resolve_binary(root, &["a"], &["no-such-xyz", "sh"]).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{sh:?}");
    }
}
