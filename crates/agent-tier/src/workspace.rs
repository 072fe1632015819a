//! Root confinement, reads that cannot be raced out of the root, and all-or-nothing atomic
//! writes, shared by every tool that touches files.

mod apply;
mod atomic;
mod journal;
mod own_writes;
mod read;

use crate::display::clip_path;
pub use apply::{Applied, FileChange, apply_all, undo_all};
pub use atomic::{FileLocks, lock_files, remove_file, write_atomic, write_atomic_mode};
pub use journal::{STATE_DIR_ENV, recover};
pub use own_writes::{forget as forget_own_write, is_own_write};
pub use read::{Beneath, ReadPrefix, open_regular, read_regular};
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// Longest path argument taken, in bytes: the kernel's `PATH_MAX`. A longer path could not be
/// opened anyway, and confining it would cost work in proportion to its components.
pub const MAX_PATH_BYTES: usize = 4096;

/// Why a path or a write was refused. A path argument is quoted clipped
/// ([`crate::display::clip_path`]: escaped, its first 200 characters and how many bytes more).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path leads outside the workspace root.
    #[error(
        "`{arg}` = `{}` is outside the workspace root {root}; give a path inside it (relative paths are taken from the root)",
        clip_path(.path)
    )]
    Outside {
        /// The argument that named the path.
        arg: String,
        /// The path as given.
        path: String,
        /// The workspace root.
        root: String,
    },
    /// Nothing exists at the path.
    #[error("`{arg}` = `{}` does not exist under the workspace root", clip_path(.path))]
    Missing {
        /// The argument that named the path.
        arg: String,
        /// The path as given.
        path: String,
    },
    /// The path is longer than [`MAX_PATH_BYTES`].
    #[error(
        "`{arg}` = `{shown}` is {len} bytes long; a path may be at most {limit} bytes (PATH_MAX); give a shorter path"
    )]
    TooLong {
        /// The argument that named the path.
        arg: String,
        /// The path as quoted: clipped.
        shown: String,
        /// The path's length in bytes.
        len: usize,
        /// The most bytes a path may have.
        limit: usize,
    },
    /// A file changed on disk after the edit that writes it was staged.
    #[error("`{}` changed since the edit was staged; nothing was written", clip_path(.path))]
    Stale {
        /// The files that changed, as the message lists them.
        path: String,
    },
    /// A write failed (or a file changed under the change as it was written); every file of
    /// the change was restored, or `unrestored` says which were not.
    #[error(
        "could not write `{}`: {source}; {}",
        clip_path(.path),
        apply::restored(.unrestored)
    )]
    Write {
        /// The file whose write failed.
        path: String,
        /// The failure.
        source: std::io::Error,
        /// What the undo could not put back, each with why (empty: every file was restored).
        unrestored: Vec<String>,
    },
    /// An undo ([`undo_all`]) could not put everything back.
    #[error("the change could not be undone whole: {}", apply::restored(.unrestored))]
    Undo {
        /// What could not be put back, each with why.
        unrestored: Vec<String>,
    },
    /// Any other I/O failure on a path.
    #[error("{context} `{}`: {source}", clip_path(.path))]
    Io {
        /// What was being done, as the message's opening words.
        context: &'static str,
        /// The path.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// Lexically normalise `a/./b/../c` to `a/c` without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolve a user-supplied path (argument `arg`) against `root`, refusing anything that leads
/// outside it: `..`, absolute paths elsewhere, and symlinks whose target is outside.
///
/// The path need not exist (a file about to be written); its deepest existing ancestor is
/// canonicalised so that a symlinked directory cannot smuggle the write out. A path longer than
/// [`MAX_PATH_BYTES`] is refused before any of its components is looked at.
pub fn confine(root: &Path, arg: &str, path: &str) -> Result<PathBuf, FsError> {
    if path.len() > MAX_PATH_BYTES {
        return Err(FsError::TooLong {
            arg: arg.to_string(),
            shown: clip_path(path),
            len: path.len(),
            limit: MAX_PATH_BYTES,
        });
    }
    let root_canon = root.canonicalize().map_err(|e| FsError::Io {
        context: "cannot open workspace root",
        path: root.display().to_string(),
        source: e,
    })?;
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        root_canon.join(path)
    };
    let lexical = normalize(&joined);
    let outside = || FsError::Outside {
        arg: arg.to_string(),
        path: path.to_string(),
        root: root_canon.display().to_string(),
    };
    // Canonicalise the deepest existing ancestor, then re-append the rest.
    let mut existing = lexical.clone();
    let mut rest = Vec::new();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut resolved = existing.canonicalize().map_err(|_| outside())?;
    for part in rest.iter().rev() {
        resolved.push(part);
    }
    if !resolved.starts_with(&root_canon) {
        return Err(outside());
    }
    Ok(resolved)
}

/// Like [`confine`], but the path must exist.
pub fn confine_existing(root: &Path, arg: &str, path: &str) -> Result<PathBuf, FsError> {
    let p = confine(root, arg, path)?;
    if !p.exists() {
        return Err(FsError::Missing {
            arg: arg.to_string(),
            path: path.to_string(),
        });
    }
    Ok(p)
}

/// The path relative to `root` for display (falls back to the full path).
pub fn display_path(root: &Path, path: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    path.strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// SHA-256 of some bytes, hex.
pub fn hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confine_refuses_parent_and_absolute_and_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        assert!(confine(dir.path(), "path", "a.txt").is_ok());
        assert!(confine(dir.path(), "path", "new/b.txt").is_ok());
        assert!(confine(dir.path(), "path", &"a/".repeat(MAX_PATH_BYTES / 2)).is_ok());
        for bad in ["../x", "/etc/passwd", "link/evil.txt", "sub/../../x"] {
            let err = confine(dir.path(), "path", bad).unwrap_err().to_string();
            assert!(err.contains("outside the workspace root"), "{bad}: {err}");
        }
    }

    /// A 1 MB path was echoed whole in the error; a 500,000-component path took 44 s to confine.
    #[test]
    fn an_over_long_path_is_refused_at_once_naming_the_argument_length_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        // 500,000 components under a directory that does not exist: confining it used to pop
        // and stat every one of them.
        let deep = "x/".repeat(500_000);
        for (arg, path) in [("path", "y".repeat(1_000_000)), ("file", deep.clone())] {
            let err = confine(dir.path(), arg, &path).unwrap_err();
            assert!(matches!(err, FsError::TooLong { .. }), "{err}");
            let text = err.to_string();
            assert!(text.starts_with(&format!("`{arg}` = `")), "{text}");
            assert!(
                text.contains(&format!(" is {} bytes long", path.len())),
                "{text}"
            );
            assert!(text.contains("at most 4096 bytes"), "{text}");
            assert!(
                text.contains(&format!("… ({} more bytes)", path.len() - 200)),
                "{text}"
            );
            assert!(text.len() < 600, "{} bytes: {text}", text.len());
        }
        let err = confine_existing(dir.path(), "path", &deep).unwrap_err();
        assert!(matches!(err, FsError::TooLong { .. }), "{err}");
    }

    /// A path under the limit is still quoted clipped when it is refused.
    #[test]
    fn a_refused_path_is_quoted_clipped() {
        let dir = tempfile::tempdir().unwrap();
        let missing = format!("\u{1b}]0;t{}", "m".repeat(3000));
        let text = confine_existing(dir.path(), "path", &missing)
            .unwrap_err()
            .to_string();
        assert!(text.contains("`path` = `\\x1b]0;tmmm"), "{text}");
        assert!(text.contains("… (2805 more bytes)`"), "{text}");
        assert!(text.len() < 400, "{text}");
        let outside = format!("../{}", "o".repeat(3000));
        let text = confine(dir.path(), "path", &outside)
            .unwrap_err()
            .to_string();
        assert!(text.contains("outside the workspace root"), "{text}");
        assert!(text.contains("… (2803 more bytes)`"), "{text}");
    }

    #[test]
    fn apply_all_rejects_stale_and_rolls_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old b").unwrap();
        let stale = [FileChange {
            path: a.clone(),
            expected: Some(b"something else".to_vec()),
            new: Some(b"new".to_vec()),
        }];
        assert!(matches!(
            apply_all(dir.path(), &stale),
            Err(FsError::Stale { .. })
        ));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");

        // b is read-only: the write to a must be rolled back.
        let mut perm = std::fs::metadata(&b).unwrap().permissions();
        perm.set_readonly(true);
        std::fs::set_permissions(&b, perm).unwrap();
        let changes = [
            FileChange {
                path: a.clone(),
                expected: Some(b"old a".to_vec()),
                new: Some(b"new a".to_vec()),
            },
            FileChange {
                path: b.clone(),
                expected: Some(b"old b".to_vec()),
                new: Some(b"new b".to_vec()),
            },
        ];
        let err = apply_all(dir.path(), &changes).unwrap_err();
        assert!(matches!(err, FsError::Write { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
    }

    #[test]
    fn write_atomic_keeps_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.sh");
        std::fs::write(&p, "a").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(dir.path(), &p.canonicalize().unwrap(), b"b").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "b");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
