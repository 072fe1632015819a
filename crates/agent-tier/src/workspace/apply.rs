//! All-or-nothing changes of several files, and their undo.
//!
//! [`apply_all`] compares every file with the content its change was computed from, then writes
//! them one by one, comparing each again immediately before it is replaced: a writer outside
//! this process (an editor, a build) that changed a file during the change is seen, the files
//! already written are put back, and the change is refused as stale. What it did is kept in an
//! [`Applied`]: the permission bits of every file it replaced or deleted, and the directories it
//! created, so that [`undo_all`] (and its own undo after a failed write) puts back a deleted
//! `0755` script as `0755` and removes the directories it made, or says exactly what it could
//! not put back. A change of several files is journalled while it is written
//! ([`super::journal`]), so that a host killed in the middle is rolled back whole at the next
//! start.

use super::atomic::{lock_files, remove_file, write_atomic_mode};
use super::journal::Journal;
use super::read::read_regular;
use super::{FsError, display_path};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One file in an all-or-nothing change.
#[derive(Debug, Clone)]
pub struct FileChange {
    /// The absolute path.
    pub path: PathBuf,
    /// The content the change was computed from (`None`: the file must not exist yet).
    pub expected: Option<Vec<u8>>,
    /// The new content (`None`: delete the file).
    pub new: Option<Vec<u8>>,
}

/// What [`apply_all`] did that undoing it needs.
#[derive(Debug, Default, Clone)]
pub struct Applied {
    /// The permission bits of every file the change replaced or deleted, as they were.
    modes: HashMap<PathBuf, u32>,
    /// The directories the change created, parents first.
    created_dirs: Vec<PathBuf>,
}

/// The undo's outcome, as error messages say it.
pub(super) fn restored(unrestored: &[String]) -> String {
    if unrestored.is_empty() {
        "every file was restored to its previous content".to_string()
    } else {
        format!(
            "{} could NOT be restored: {}",
            unrestored.len(),
            unrestored.join("; ")
        )
    }
}

/// Whether `path` holds `expected` now (`None`: absent). Reads one byte more than expected:
/// enough to tell "same" from "different".
fn holds(root: &Path, path: &Path, expected: Option<&[u8]>) -> std::io::Result<bool> {
    let cap = expected.map_or(1, |e| e.len() as u64 + 1);
    let current = match read_regular(root, path, cap) {
        Ok(r) => Some(r.bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(current.as_deref() == expected)
}

/// The permission bits of `path` (not following a symlink), when it is a regular file.
fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    meta.is_file().then(|| meta.permissions().mode() & 0o7777)
}

/// The directories between `root` and `path` that do not exist yet, parents first.
fn missing_dirs(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(root) || d == root || d.symlink_metadata().is_ok() {
            break;
        }
        out.push(d.to_path_buf());
        dir = d.parent();
    }
    out.reverse();
    out
}

/// Apply several file changes all-or-nothing.
///
/// First every file is compared with the content the change was computed from; any difference
/// rejects the whole change and writes nothing ([`FsError::Stale`], naming every stale file).
/// Then each file is compared again immediately before it is written atomically; a file changed
/// meanwhile, or a failed write, undoes the files already written (their modes kept, the
/// directories made removed), so the tree ends either fully old or fully new — or the error
/// names what could not be put back.
pub fn apply_all(root: &Path, changes: &[FileChange]) -> Result<Applied, FsError> {
    // Every writer of these files in this process waits here, so the comparison below and the
    // writes after it see no other writer of this process in between.
    let _locks = lock_files(changes.iter().map(|c| c.path.as_path()));
    let root_canon = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut stale = Vec::new();
    for c in changes {
        match holds(root, &c.path, c.expected.as_deref()) {
            Ok(true) => {}
            Ok(false) => stale.push(display_path(root, &c.path)),
            Err(e) => {
                return Err(FsError::Io {
                    context: "nothing was written: cannot read",
                    path: display_path(root, &c.path),
                    source: e,
                });
            }
        }
    }
    if !stale.is_empty() {
        return Err(FsError::Stale {
            path: stale.join("`, `"),
        });
    }
    let mut applied = Applied::default();
    for c in changes {
        if let Some(mode) = mode_of(&c.path) {
            applied.modes.insert(c.path.clone(), mode);
        }
        if c.new.is_some() {
            for d in missing_dirs(&root_canon, &c.path) {
                if !applied.created_dirs.contains(&d) {
                    applied.created_dirs.push(d);
                }
            }
        }
    }
    // More than one file: journalled, so that a host killed in the middle is rolled back whole
    // by the next start (one file is whole by its atomic rename alone).
    let journal = if changes.len() > 1 {
        Journal::open(root, changes, &applied.modes, &applied.created_dirs).unwrap_or_else(|e| {
            tracing::warn!("cannot write the change's journal ({e}); writing without one");
            None
        })
    } else {
        None
    };
    let close = |journal: Option<Journal>| {
        if let Some(j) = journal {
            j.close();
        }
    };
    let mut done: Vec<FileChange> = Vec::new();
    for c in changes {
        // Immediately before it is replaced: another process may have written it since the
        // first comparison (the change may take seconds over many files).
        let res = match holds(root, &c.path, c.expected.as_deref()) {
            Ok(true) => match &c.new {
                Some(bytes) => {
                    write_atomic_mode(root, &c.path, bytes, applied.modes.get(&c.path).copied())
                }
                None => remove_file(root, &c.path),
            },
            Ok(false) => {
                let unrestored = undo(root, &done, &applied);
                if unrestored.is_empty() {
                    close(journal);
                    return Err(FsError::Stale {
                        path: display_path(root, &c.path),
                    });
                }
                return Err(FsError::Write {
                    path: display_path(root, &c.path),
                    source: std::io::Error::other(
                        "another process changed it while the change was being written",
                    ),
                    unrestored,
                });
            }
            Err(e) => Err(e),
        };
        if let Err(e) = res {
            let unrestored = undo(root, &done, &applied);
            if unrestored.is_empty() {
                close(journal);
            }
            return Err(FsError::Write {
                path: display_path(root, &c.path),
                source: e,
                unrestored,
            });
        }
        done.push(c.clone());
    }
    close(journal);
    Ok(applied)
}

/// Undo `changes`, which [`apply_all`] applied with the outcome `applied`: every file gets back
/// its previous content and permission bits (a deleted file is made again, a created one
/// removed) and the directories the change made are removed when empty. A file changed since
/// the change was applied is left as it is and named. All or nothing is not promised here (the
/// change being undone was whole): the error names every file or directory not put back.
pub fn undo_all(root: &Path, changes: &[FileChange], applied: &Applied) -> Result<(), FsError> {
    let _locks = lock_files(changes.iter().map(|c| c.path.as_path()));
    let unrestored = undo(root, changes, applied);
    if unrestored.is_empty() {
        Ok(())
    } else {
        Err(FsError::Undo { unrestored })
    }
}

/// Put back `done` (in reverse order), then remove the directories the change made; returns
/// what could not be put back, each with why. The caller holds the files' locks.
fn undo(root: &Path, done: &[FileChange], applied: &Applied) -> Vec<String> {
    let mut unrestored = Vec::new();
    for c in done.iter().rev() {
        let shown = display_path(root, &c.path);
        match holds(root, &c.path, c.new.as_deref()) {
            Ok(true) => {}
            Ok(false) => {
                unrestored.push(format!(
                    "`{shown}` was changed by someone else since; left as it is"
                ));
                continue;
            }
            Err(e) => {
                unrestored.push(format!("`{shown}`: {e}"));
                continue;
            }
        }
        let res = match &c.expected {
            Some(old) => write_atomic_mode(root, &c.path, old, applied.modes.get(&c.path).copied()),
            None => remove_file(root, &c.path),
        };
        if let Err(e) = res {
            unrestored.push(format!("`{shown}`: {e}"));
        }
    }
    for d in applied.created_dirs.iter().rev() {
        match std::fs::remove_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => unrestored.push(format!(
                "the directory `{}` the change made: {e}; left in place",
                display_path(root, d)
            )),
        }
    }
    unrestored
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn change(path: &Path, expected: Option<&str>, new: Option<&str>) -> FileChange {
        FileChange {
            path: path.to_path_buf(),
            expected: expected.map(|s| s.as_bytes().to_vec()),
            new: new.map(|s| s.as_bytes().to_vec()),
        }
    }

    /// The adversary's rollback: a moved 0755 script came back 0644 while the answer said
    /// "every file was restored", and the directory made for the move stayed.
    #[test]
    fn an_undone_move_puts_back_the_mode_and_removes_the_directories_it_made() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let script = root.join("run.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let moved = root.join("bin/tools/run.sh");
        let changes = [
            change(&script, Some("#!/bin/sh\necho hi\n"), None),
            change(&moved, None, Some("#!/bin/sh\necho hi\n")),
        ];
        let applied = apply_all(&root, &changes).unwrap();
        assert!(!script.exists() && moved.exists());
        undo_all(&root, &changes, &applied).unwrap();
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert!(!root.join("bin").exists(), "the directories made stayed");
    }

    /// A file someone else changed since the change was applied is left alone and named.
    #[test]
    fn an_undo_names_what_it_could_not_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = root.join("a.txt");
        std::fs::write(&a, "old").unwrap();
        let changes = [change(&a, Some("old"), Some("new"))];
        let applied = apply_all(&root, &changes).unwrap();
        std::fs::write(&a, "someone else's").unwrap();
        let err = undo_all(&root, &changes, &applied).unwrap_err().to_string();
        assert!(
            err.contains("could NOT be restored") && err.contains("a.txt"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "someone else's");
    }

    /// The adversary's append: another process wrote a staged file during the write phase (5 s
    /// over 600 files); the change overwrote it and said it succeeded. Here a thread outside the
    /// file locks (as another process is) appends to the last file as soon as the first one is
    /// written: the change is refused as stale, every file it wrote is put back, and the append
    /// survives.
    #[test]
    fn a_file_changed_by_another_writer_during_the_change_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let n = 1000;
        let paths: Vec<PathBuf> = (0..n).map(|i| root.join(format!("f{i:04}.txt"))).collect();
        for p in &paths {
            std::fs::write(p, "old\n").unwrap();
        }
        let changes: Vec<FileChange> = paths
            .iter()
            .map(|p| change(p, Some("old\n"), Some("new\n")))
            .collect();
        let (first, last) = (paths[0].clone(), paths[n - 1].clone());
        let writer = std::thread::spawn(move || {
            while std::fs::read_to_string(&first).unwrap_or_default() != "new\n" {
                std::hint::spin_loop();
            }
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&last)
                .unwrap();
            std::io::Write::write_all(&mut f, b"appended by someone else\n").unwrap();
        });
        let result = apply_all(&root, &changes);
        writer.join().unwrap();
        let err = result.unwrap_err();
        assert!(matches!(err, FsError::Stale { .. }), "{err}");
        assert!(err.to_string().contains("f0999.txt"), "{err}");
        for p in &paths[..n - 1] {
            assert_eq!(
                std::fs::read_to_string(p).unwrap(),
                "old\n",
                "{}",
                p.display()
            );
        }
        assert_eq!(
            std::fs::read_to_string(&paths[n - 1]).unwrap(),
            "old\nappended by someone else\n"
        );
    }
}
