//! The journal that makes a multi-file change whole across a crash.
//!
//! Before [`super::apply_all`] writes its first file, it records in a private folder of the
//! user's state directory (never in the workspace) every file's previous content and mode, the
//! hash of its new content, and the directories the change will make, then fsyncs it. The
//! journal is removed once the change is whole (written, or undone). A host killed in between
//! leaves it behind, with the process that owned it: the next registry opened on the same root
//! ([`recover`], called by `Registry::new`) finds a journal whose owner is gone and puts every
//! file back as it was (a file someone changed since is left as it is and logged), removes the
//! temp files the killed write left, and removes the directories it made. The tree is then
//! wholly old; the model that asked for the change never got its answer.
//!
//! The folder is `$AGENT_TOOLS_STATE_DIR`, else `$XDG_STATE_HOME/agent-tools`, else
//! `~/.local/state/agent-tools`, each with `journals/<hash of the root>/` below it (mode 0700).

use super::atomic::{remove_file, write_atomic_mode};
use super::read::read_regular;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Overrides where journals are kept.
pub const STATE_DIR_ENV: &str = "AGENT_TOOLS_STATE_DIR";

/// One file of a journalled change.
#[derive(Serialize, Deserialize)]
struct Entry {
    path: PathBuf,
    /// Where its old content lies in `old.bin` (`None`: it did not exist).
    old: Option<(u64, u64)>,
    mode: Option<u32>,
    /// The hash of its new content (`None`: the change deletes it).
    new_hash: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Manifest {
    root: PathBuf,
    pid: u32,
    /// The owner's start time (`/proc/<pid>/stat` field 22): a reused pid is not the owner.
    started: u64,
    entries: Vec<Entry>,
    created_dirs: Vec<PathBuf>,
}

/// A journal on disk while its change is written; removed by [`Journal::close`].
pub(super) struct Journal {
    dir: PathBuf,
}

fn state_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("agent-tools"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".local/state/agent-tools"))
}

/// The folder of `root`'s journals.
fn root_dir(root: &Path) -> Option<PathBuf> {
    let root = root.canonicalize().ok()?;
    let hash = super::hash(root.as_os_str().as_encoded_bytes());
    Some(state_dir()?.join("journals").join(&hash[..16]))
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from the last `)`.
    let after = &stat[stat.rfind(')')? + 2..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl Journal {
    /// Record the change (`changes`, with each file's mode before it and the directories it
    /// will make) before any file is written. `None` when there is no state directory to keep
    /// it in: the change is then written without one, as before (logged).
    pub(super) fn open(
        root: &Path,
        changes: &[super::FileChange],
        modes: &std::collections::HashMap<PathBuf, u32>,
        created_dirs: &[PathBuf],
    ) -> std::io::Result<Option<Journal>> {
        let Some(base) = root_dir(root) else {
            tracing::warn!(
                "no state directory (HOME unset): a multi-file change is written without a journal"
            );
            return Ok(None);
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&base)?;
        let pid = std::process::id();
        let dir = base.join(format!("{pid}.{}", SEQ.fetch_add(1, Ordering::Relaxed)));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let journal = Journal { dir };
        let mut old = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(journal.dir.join("old.bin"))?;
        let mut at = 0u64;
        let mut entries = Vec::with_capacity(changes.len());
        for c in changes {
            let old_range = match &c.expected {
                Some(bytes) => {
                    old.write_all(bytes)?;
                    let range = (at, bytes.len() as u64);
                    at += bytes.len() as u64;
                    Some(range)
                }
                None => None,
            };
            entries.push(Entry {
                path: c.path.clone(),
                old: old_range,
                mode: modes.get(&c.path).copied(),
                new_hash: c.new.as_deref().map(super::hash),
            });
        }
        old.sync_all()?;
        let manifest = Manifest {
            root: root.canonicalize()?,
            pid,
            started: start_time(pid).unwrap_or(0),
            entries,
            created_dirs: created_dirs.to_vec(),
        };
        let tmp = journal.dir.join("manifest.tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&serde_json::to_vec(&manifest).map_err(std::io::Error::other)?)?;
        f.sync_all()?;
        // The manifest appears whole or not at all: a journal without one was never armed.
        std::fs::rename(&tmp, journal.dir.join("manifest.json"))?;
        sync_dir(&journal.dir)?;
        Ok(Some(journal))
    }

    /// The change is whole (written, or undone): forget it.
    pub(super) fn close(self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), "cannot remove a finished journal: {e}");
        }
    }
}

/// Whether the journal's owner still runs (then it is not ours to recover).
fn owner_alive(m: &Manifest) -> bool {
    m.pid != std::process::id() && start_time(m.pid).is_some_and(|t| t == m.started)
}

/// Finish what a killed host left on `root`: every journal whose owner is gone is rolled back
/// (see the module's header). Returns what it did, one line per journal, for the log.
pub fn recover(root: &Path) -> Vec<String> {
    let Some(base) = root_dir(root) else {
        return Vec::new();
    };
    let Ok(list) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in list.flatten() {
        let dir = entry.path();
        let Ok(text) = std::fs::read(dir.join("manifest.json")) else {
            // Never armed (killed while recording): nothing was written under it.
            if std::fs::metadata(dir.join("manifest.json")).is_err()
                && dir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split('.').next())
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(|pid| start_time(pid).is_none())
            {
                let _ = std::fs::remove_dir_all(&dir);
            }
            continue;
        };
        let Ok(m) = serde_json::from_slice::<Manifest>(&text) else {
            continue;
        };
        if owner_alive(&m) || m.pid == std::process::id() {
            continue;
        }
        let report = roll_back(&dir, &m);
        tracing::warn!(root = %m.root.display(), "{report}");
        done.push(report);
        let _ = std::fs::remove_dir_all(&dir);
    }
    done
}

/// Put every file of `m` back as it was before the killed change.
fn roll_back(dir: &Path, m: &Manifest) -> String {
    let old = std::fs::read(dir.join("old.bin")).unwrap_or_default();
    let root = &m.root;
    let (mut restored, mut left) = (0usize, Vec::new());
    for e in &m.entries {
        let old_bytes = e.old.and_then(|(at, len)| {
            old.get(usize::try_from(at).ok()?..usize::try_from(at + len).ok()?)
        });
        let now = match read_regular(root, &e.path, u64::MAX) {
            Ok(r) => Some(r.bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                left.push(format!("{}: {err}", e.path.display()));
                continue;
            }
        };
        let is_old = now.as_deref() == old_bytes;
        let is_new = now.as_deref().map(super::hash) == e.new_hash;
        if is_old {
            continue;
        }
        if !is_new {
            left.push(format!(
                "{}: changed by someone else since; left as it is",
                e.path.display()
            ));
            continue;
        }
        let res = match old_bytes {
            Some(bytes) => write_atomic_mode(root, &e.path, bytes, e.mode),
            None => remove_file(root, &e.path),
        };
        match res {
            Ok(()) => restored += 1,
            Err(err) => left.push(format!("{}: {err}", e.path.display())),
        }
    }
    // The killed write's temp files (`.<name>.<16 hex>.agent-tools.tmp`), next to the files it
    // was writing; another host's temp files there are not touched.
    let mut temps = 0usize;
    for e in &m.entries {
        let (Some(folder), Some(name)) = (e.path.parent(), e.path.file_name()) else {
            continue;
        };
        let bytes = name.as_encoded_bytes();
        let prefix = format!(
            ".{}.",
            String::from_utf8_lossy(&bytes[..bytes.len().min(100)])
        );
        let Ok(list) = std::fs::read_dir(folder) else {
            continue;
        };
        for f in list.flatten() {
            let name = f.file_name();
            let name = name.to_string_lossy();
            if let Some(rest) = name.strip_prefix(&prefix)
                && let Some(salt) = rest.strip_suffix(".agent-tools.tmp")
                && salt.len() == 16
                && salt.bytes().all(|b| b.is_ascii_hexdigit())
                && f.file_type().is_ok_and(|t| t.is_file())
                && std::fs::remove_file(f.path()).is_ok()
            {
                temps += 1;
            }
        }
    }
    for d in m.created_dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    let mut report = format!(
        "a change of {} file(s) cut short by a killed host (pid {}) was rolled back: {restored} file(s) put back, {temps} temp file(s) removed",
        m.entries.len(),
        m.pid
    );
    if !left.is_empty() {
        report.push_str(&format!("; NOT put back: {}", left.join("; ")));
    }
    report
}
