//! What a search's walk did: the counts and the first skipped files a result reports, so an
//! empty result can say why it is credible, and the footer line that says it in a result's text.

use crate::shown::relative;
use agent_tier::display::{clip_path, plural};
use agent_tier::schemars::{self, JsonSchema};
use parking_lot::Mutex;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts of what the walk did.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Stats {
    /// Files of the language that were considered.
    pub files_searched: usize,
    /// Of those, files ruled out by the literal-identifier prefilter (never parsed).
    pub files_prefiltered: usize,
    /// Of those, files answered by this run's earlier search of the same pattern (their size,
    /// mtime and ctime unchanged since, and the run has not written them): not read again.
    #[serde(skip_serializing_if = "is_zero")]
    pub files_remembered: usize,
    /// Files skipped because they look binary (a NUL byte in the first 8 KiB).
    pub skipped_binary: usize,
    /// Files skipped because they are not valid UTF-8.
    pub skipped_not_utf8: usize,
    /// Files skipped because they are larger than the limit.
    pub skipped_large: usize,
    /// Files that could not be read.
    pub skipped_unreadable: usize,
    /// Files the parser gave up on.
    pub skipped_unparseable: usize,
    /// Entries the walk could not visit — a directory it could not list (its path longer than
    /// the kernel's 4,096-byte PATH_MAX in a deep tree, no permission), so whatever it holds was
    /// not searched.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_unvisited: usize,
    /// The first few skipped files (relative paths, sorted), each with why.
    pub skipped_files: Vec<SkippedFile>,
    /// Whether the walk stopped at the time limit (or because the call was cancelled), so the
    /// results are partial.
    pub stopped_early: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A file (or a directory it could not visit) the walk skipped, and why.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkippedFile {
    /// Relative to the workspace root.
    pub path: String,
    /// `binary`, `not UTF-8`, `too large`, `unreadable`, `unparseable`, `path over 4096 bytes`
    /// or `not visited`.
    pub why: &'static str,
}

impl Stats {
    /// The footer line of a result: how many `lang` files were searched, ruled out and skipped
    /// (naming the first few); `max_file_bytes` is the size past which a file is skipped.
    pub(crate) fn summary(&self, lang: &str, max_file_bytes: u64) -> String {
        let mut s = format!(
            "searched {}",
            plural(
                self.files_searched,
                &format!("{lang} file"),
                &format!("{lang} files")
            )
        );
        let mut notes = Vec::new();
        if self.files_prefiltered > 0 {
            notes.push(format!(
                "{} ruled out without parsing: they lack a word or an operator of the pattern",
                self.files_prefiltered
            ));
        }
        if self.files_remembered > 0 {
            notes.push(format!("{} {REMEMBERED}", self.files_remembered));
        }
        if !notes.is_empty() {
            let _ = write!(s, " ({})", notes.join("; "));
        }
        let mut skipped = Vec::new();
        for (n, what) in [
            (self.skipped_binary, "binary".to_string()),
            (self.skipped_not_utf8, "not UTF-8".to_string()),
            (
                self.skipped_large,
                format!("larger than {}", mib(max_file_bytes)),
            ),
            (self.skipped_unreadable, "unreadable".to_string()),
            (self.skipped_unparseable, "unparseable".to_string()),
            (
                self.skipped_unvisited,
                "unlisted (a directory the walk could not open: nothing under it was searched)"
                    .to_string(),
            ),
        ] {
            if n > 0 {
                skipped.push(format!("{n} {what}"));
            }
        }
        if !skipped.is_empty() {
            let _ = write!(s, "; skipped {}", skipped.join(", "));
            let total = self.skipped_binary
                + self.skipped_not_utf8
                + self.skipped_large
                + self.skipped_unreadable
                + self.skipped_unparseable
                + self.skipped_unvisited;
            let names: Vec<String> = self
                .skipped_files
                .iter()
                .map(|f| {
                    if f.why == PATH_TOO_LONG {
                        format!("{}: {}", clip_path(&f.path), f.why)
                    } else {
                        clip_path(&f.path)
                    }
                })
                .collect();
            if !names.is_empty() {
                let more = if total > names.len() { ", …" } else { "" };
                let _ = write!(s, " ({}{more})", names.join(", "));
            }
        }
        s
    }
}

/// A size limit as a person reads it: `64 MiB`, or its bytes when not whole mebibytes.
fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// What a result says of the files its run's memo answered.
pub const REMEMBERED: &str = "answered as this run's earlier search of the same pattern found them (unchanged since: size, mtime and ctime)";

/// How many skipped files a result names.
pub const SKIPPED_NAMED: usize = 3;

/// What a parallel walk counts as it goes.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) stopped: std::sync::atomic::AtomicBool,
    pub(crate) searched: AtomicUsize,
    pub(crate) prefiltered: AtomicUsize,
    pub(crate) remembered: AtomicUsize,
    pub(crate) binary: AtomicUsize,
    pub(crate) not_utf8: AtomicUsize,
    pub(crate) large: AtomicUsize,
    pub(crate) unreadable: AtomicUsize,
    pub(crate) unparseable: AtomicUsize,
    pub(crate) unvisited: AtomicUsize,
    skipped: Mutex<Vec<(PathBuf, &'static str)>>,
}

impl Counters {
    pub(crate) fn skip(&self, counter: &AtomicUsize, path: &Path, why: &'static str) {
        counter.fetch_add(1, Ordering::Relaxed);
        self.skipped.lock().push((path.to_path_buf(), why));
    }

    /// An entry the walk yielded as an error: counted, and named by its path when it has one.
    pub(crate) fn unvisited(&self, error: &ignore::Error) {
        let (path, io) = parts(error);
        let why = match io.map(why_unreadable) {
            Some(PATH_TOO_LONG) => PATH_TOO_LONG,
            _ => "not visited",
        };
        match path {
            Some(p) => self.skip(&self.unvisited, p, why),
            None => {
                self.unvisited.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn stats(&self, root: &Path) -> Stats {
        let mut skipped = std::mem::take(&mut *self.skipped.lock());
        skipped.sort();
        Stats {
            files_searched: self.searched.load(Ordering::Relaxed),
            files_prefiltered: self.prefiltered.load(Ordering::Relaxed),
            files_remembered: self.remembered.load(Ordering::Relaxed),
            skipped_binary: self.binary.load(Ordering::Relaxed),
            skipped_not_utf8: self.not_utf8.load(Ordering::Relaxed),
            skipped_large: self.large.load(Ordering::Relaxed),
            skipped_unreadable: self.unreadable.load(Ordering::Relaxed),
            skipped_unparseable: self.unparseable.load(Ordering::Relaxed),
            skipped_unvisited: self.unvisited.load(Ordering::Relaxed),
            skipped_files: skipped
                .into_iter()
                .take(SKIPPED_NAMED)
                .map(|(p, why)| SkippedFile {
                    path: relative(root, &p),
                    why,
                })
                .collect(),
            stopped_early: self.stopped.load(Ordering::Relaxed),
        }
    }
}

/// Why a file or directory under a path longer than the kernel's PATH_MAX was skipped.
pub(crate) const PATH_TOO_LONG: &str = "path over 4096 bytes";

/// Why a file could not be read: its path is longer than PATH_MAX (a deep tree), or
/// `unreadable`.
pub(crate) fn why_unreadable(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::InvalidFilename {
        PATH_TOO_LONG
    } else {
        "unreadable"
    }
}

/// The path a walk error is about and the I/O error under it, through its wrappers.
fn parts(error: &ignore::Error) -> (Option<&Path>, Option<&std::io::Error>) {
    match error {
        ignore::Error::WithPath { path, err } => (Some(path), parts(err).1),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            parts(err)
        }
        ignore::Error::Loop { child, .. } => (Some(child), None),
        ignore::Error::Io(e) => (None, Some(e)),
        ignore::Error::Partial(errs) => errs.first().map_or((None, None), parts),
        _ => (None, None),
    }
}
