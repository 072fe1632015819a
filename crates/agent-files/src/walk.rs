//! The walk `grep` and `glob` share: the files under a folder of the root as ripgrep walks them
//! (`agent_tier::ignore_rules`: `.gitignore` and `.git/info/exclude` inside a git repository,
//! `.ignore` and `.rgignore` always; hidden files and folders skipped unless the pattern names
//! one; never `.git`), in path order.
//!
//! Only regular files are visited. A symlink is never followed, so none leads the walk out of the
//! root; FIFOs, sockets and devices are never opened. Both are counted, as are folders that could
//! not be read, so a result can say what it did not look at.

use crate::error::PatternError;
use agent_tier::display::clip_path;
use std::path::{Path, PathBuf};

/// A file pattern: `*.py` (no `/`: a file name at any depth) or `src/**/*.rs` (a path relative to
/// the folder searched; `*` stays within one folder, `**` crosses folders).
pub(crate) struct Pattern {
    matcher: globset::GlobMatcher,
    by_name: bool,
    /// The folders the pattern starts with, literally (`src` of `src/**/*.rs`).
    prefix: PathBuf,
    /// A component of the pattern starts with `.`: hidden files are searched.
    hidden: bool,
}

impl Pattern {
    /// The pattern `text` of argument `arg`, relative to `base` (the folder argument as given,
    /// which the pattern may repeat: `path` `src`, `glob` `src/*.rs`).
    pub(crate) fn new(arg: &str, text: &str, base: Option<&str>) -> Result<Pattern, PatternError> {
        let mut t = text.trim();
        while let Some(rest) = t.strip_prefix("./") {
            t = rest;
        }
        // A pattern with a `/` is a path even when what is left after `path` has none.
        let by_name = !t.contains('/');
        if let Some(base) = base.map(|b| b.trim().trim_start_matches("./").trim_end_matches('/'))
            && !base.is_empty()
            && base != "."
            && let Some(rest) = t.strip_prefix(base).and_then(|r| r.strip_prefix('/'))
        {
            t = rest;
        }
        if t.is_empty() {
            return Err(PatternError::Empty {
                arg: arg.to_string(),
            });
        }
        if t.starts_with('/') || t.split('/').any(|c| c == "..") {
            return Err(PatternError::Leaves {
                arg: arg.to_string(),
                pattern: clip_path(text),
            });
        }
        let matcher = globset::GlobBuilder::new(t)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| PatternError::Invalid {
                arg: arg.to_string(),
                pattern: clip_path(text),
                kind: e.kind().clone(),
            })?
            .compile_matcher();
        let mut prefix = PathBuf::new();
        if !by_name {
            let components: Vec<&str> = t.split('/').collect();
            for c in &components[..components.len() - 1] {
                if c.is_empty() || c.contains(['*', '?', '[', '{', '\\']) {
                    break;
                }
                prefix.push(c);
            }
        }
        let hidden = t
            .split('/')
            .any(|c| c.starts_with('.') && c != "." && c != "..");
        Ok(Pattern {
            matcher,
            by_name,
            prefix,
            hidden,
        })
    }

    /// Whether the file at `rel` (relative to the folder searched) matches.
    pub(crate) fn matches(&self, rel: &Path) -> bool {
        if self.by_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// What a walk did not look at.
#[derive(Default)]
pub(crate) struct Skipped {
    /// Symlinks (never followed).
    pub symlinks: usize,
    /// FIFOs, sockets and devices (never opened).
    pub special: usize,
    /// Entries that could not be read, and the first error in walk order (where, and the text).
    pub unreadable: usize,
    pub first_error: Option<(PathBuf, String)>,
    /// Where the walk started and whether it took hidden entries: what a search that found
    /// nothing asks [`Skipped::left_out_note`] about.
    pub walked: Option<(PathBuf, bool)>,
}

impl Skipped {
    /// Add the counts of `other`, a part of the same walk (the first error the earlier in walk
    /// order).
    fn merge(&mut self, other: Skipped) {
        self.symlinks += other.symlinks;
        self.special += other.special;
        self.unreadable += other.unreadable;
        if let Some((at, text)) = other.first_error
            && self
                .first_error
                .as_ref()
                .is_none_or(|(mine, _)| walk_order(&at, mine).is_lt())
        {
            self.first_error = Some((at, text));
        }
    }

    /// For a search that found nothing: how many files the ignore rules left out where it
    /// walked, when any.
    pub(crate) fn left_out_note(&self) -> Option<String> {
        let (from, hidden) = self.walked.as_ref()?;
        agent_tier::ignore_rules::left_out_note(from, *hidden)
    }

    /// `2 symlinks not followed, 1 FIFO/socket/device not opened`, or nothing.
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if self.symlinks > 0 {
            parts.push(format!("{} symlink(s) not followed", self.symlinks));
        }
        if self.special > 0 {
            parts.push(format!(
                "{} FIFO/socket/device file(s) not opened",
                self.special
            ));
        }
        if self.unreadable > 0 {
            parts.push(format!(
                "{} unreadable (first: {})",
                self.unreadable,
                self.first_error
                    .as_ref()
                    .map_or("?", |(_, text)| text.as_str())
            ));
        }
        parts
    }
}

/// Visit every regular file under the folder `from` that the ignore files leave in, in path
/// order, matched by its path relative to `base` (`from` or a folder above it; both canonical, inside
/// the canonical `root`) that `pattern` matches, if one is given; `visit` returns `false` to
/// stop. Hidden entries are visited when `hidden` is true (or the pattern names one). Symlinks
/// and special files the pattern matches are counted.
pub(crate) fn files(
    root: &Path,
    from: &Path,
    base: &Path,
    pattern: Option<&Pattern>,
    with_meta: bool,
    mut visit: impl FnMut(&Path, Option<&std::fs::Metadata>) -> bool,
) -> Skipped {
    let mut skipped = Skipped::default();
    let hidden = pattern.is_some_and(|p| p.hidden);
    skipped.walked = Some((from.to_path_buf(), hidden));
    let mut builder = agent_tier::ignore_rules::walker(from, hidden);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    for entry in builder.build() {
        let entry = match classify(root, base, pattern, entry, &mut skipped) {
            Some(e) => e,
            None => continue,
        };
        // A stat per file only when the caller reads it (a search does not).
        let meta = if with_meta {
            let Ok(meta) = entry.metadata() else {
                skipped.unreadable += 1;
                continue;
            };
            Some(meta)
        } else {
            None
        };
        if !visit(entry.path(), meta.as_ref()) {
            break;
        }
    }
    skipped
}

/// One entry of a walk: the regular file to visit, or `None` with what it was counted as in
/// `skipped` (a folder or a file the pattern does not match is not counted).
fn classify(
    root: &Path,
    base: &Path,
    pattern: Option<&Pattern>,
    entry: Result<ignore::DirEntry, ignore::Error>,
    skipped: &mut Skipped,
) -> Option<ignore::DirEntry> {
    let entry = match entry {
        Ok(e) => e,
        Err(e) => {
            skipped.unreadable += 1;
            let text = error_text(root, &e);
            // The first in walk order, whichever thread met it first.
            if skipped
                .first_error
                .as_ref()
                .is_none_or(|(at, _)| walk_order(&error_path(&e), at).is_lt())
            {
                skipped.first_error = Some((error_path(&e), text));
            }
            return None;
        }
    };
    let kind = entry.file_type()?;
    if kind.is_dir() {
        return None;
    }
    let rel = entry.path().strip_prefix(base).unwrap_or(entry.path());
    if pattern.is_some_and(|p| !p.matches(rel)) {
        return None;
    }
    if kind.is_symlink() {
        skipped.symlinks += 1;
        return None;
    }
    if !kind.is_file() {
        skipped.special += 1;
        return None;
    }
    Some(entry)
}

/// [`files`] with the walk and `visit` spread over `threads` threads, as ripgrep walks: each
/// thread reads folders and visits the files it finds, so the files come in no set order
/// ([`walk_order`] puts them back in the order [`files`] gives). `visitor` makes each thread's
/// visitor; `visit` cannot stop the walk.
pub(crate) fn files_parallel<V: FnMut(&Path) + Send>(
    root: &Path,
    from: &Path,
    base: &Path,
    pattern: Option<&Pattern>,
    threads: usize,
    visitor: impl Fn() -> V + Sync,
) -> Skipped {
    let hidden = pattern.is_some_and(|p| p.hidden);
    let mut builder = agent_tier::ignore_rules::walker(from, hidden);
    builder.threads(threads);
    let all = std::sync::Mutex::new(Skipped::default());
    /// A thread's count, added to the walk's when the thread ends.
    struct Counted<'a, V> {
        skipped: Skipped,
        all: &'a std::sync::Mutex<Skipped>,
        visit: V,
    }
    impl<V> Drop for Counted<'_, V> {
        fn drop(&mut self) {
            let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
            all.merge(std::mem::take(&mut self.skipped));
        }
    }
    builder.build_parallel().run(|| {
        let mut counted = Counted {
            skipped: Skipped::default(),
            all: &all,
            visit: visitor(),
        };
        Box::new(move |entry| {
            if let Some(entry) = classify(root, base, pattern, entry, &mut counted.skipped) {
                (counted.visit)(entry.path());
            }
            ignore::WalkState::Continue
        })
    });
    let mut skipped = all.into_inner().unwrap_or_else(|e| e.into_inner());
    skipped.walked = Some((from.to_path_buf(), hidden));
    skipped
}

/// The order [`files`] visits paths in: folder by folder, each folder's entries by name, a
/// folder's files right after it (as comparing the paths component by component). With `/` as
/// the lowest byte, comparing the bytes does it: a name never holds `/` or NUL.
pub(crate) fn walk_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    use std::os::unix::ffi::OsStrExt;
    fn bytes(p: &Path) -> impl Iterator<Item = u8> + '_ {
        p.as_os_str()
            .as_bytes()
            .iter()
            .map(|&c| if c == b'/' { 0 } else { c })
    }
    bytes(a).cmp(bytes(b))
}

/// The path an error of the walk is about, for ordering (empty when it names none).
fn error_path(e: &ignore::Error) -> PathBuf {
    match e {
        ignore::Error::WithPath { path, .. } => path.clone(),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.first().map(error_path).unwrap_or_default(),
        _ => PathBuf::new(),
    }
}

/// An error of the walk, with paths shown relative to the root.
fn error_text(root: &Path, e: &ignore::Error) -> String {
    let text = e.to_string();
    let prefix = format!("{}/", root.display());
    agent_tier::display::escape(&text.replace(&prefix, "")).into_owned()
}

/// The folder a pattern's walk starts from: `base` joined with the pattern's literal folders
/// (`src` of `src/**/*.rs`); `None` when that is not a folder (then no file matches: a walk
/// never enters a symlink, and a missing folder holds nothing).
pub(crate) fn start(base: &Path, pattern: &Pattern) -> Option<PathBuf> {
    let joined = base.join(&pattern.prefix);
    joined
        .symlink_metadata()
        .is_ok_and(|m| m.is_dir())
        .then_some(joined)
}
