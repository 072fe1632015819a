//! A second witness for cross-file answers: where a name occurs as an identifier token.
//!
//! A language server's `references` or `rename` answers from what the server has analysed so
//! far; asked cold, pyright answered one site of nineteen and called it complete. An answer is
//! only checked when something that does not share the server's blind spot can disagree: a
//! syntax-only index of the workspace, which knows where identifier `N` occurs (never in a
//! string or a comment) but not which symbol each occurrence is.
//!
//! The family that parses code (structural search) provides an [`IdentifierWitness`] while the
//! run is composed; the language-server family asks the registry for it by type. What it says is
//! evidence, not truth: an occurrence may be another symbol with the same name. A family uses it
//! to decide what to ask the server next, never to edit on its own. A run without a witness has
//! none, and the asking family says its answers were not cross-checked.

use std::path::{Path, PathBuf};

/// One place where the name occurs as an identifier token.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Occurrence {
    /// The absolute file, inside the workspace root.
    pub path: PathBuf,
    /// 0-based line (a line ends at `\n`, `\r\n` or a lone `\r`: [`crate::lines`]).
    pub line: u32,
    /// 0-based byte offset of the token's first byte within its line.
    pub byte: u32,
}

/// How many of the files a witness could not look at it names.
pub const UNREAD_SHOWN: usize = 20;

/// What the witness saw for one name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sightings {
    /// Every occurrence, in path and position order (at most the asked limit).
    pub occurrences: Vec<Occurrence>,
    /// Whether more occurrences exist than were returned.
    pub truncated: bool,
    /// Files of the language family looked at.
    pub files: usize,
    /// Files of the language family that could not be looked at (a symlink leading outside the
    /// root, which is never followed; unreadable, too big, not UTF-8, past the index bound): an
    /// occurrence in them is not known.
    pub skipped: usize,
    /// The first of those files (at most [`UNREAD_SHOWN`]), so that an answer can name them.
    pub unread: Vec<PathBuf>,
    /// The languages the search covered (`python`, `typescript`/`javascript`, …).
    pub languages: Vec<String>,
}

/// Where identifiers occur in the run's workspace. Kept per run, refreshed by the run's own
/// writes ([`IdentifierWitness::changed`]) and by files changed on disk (size and mtime).
pub trait IdentifierWitness: Send + Sync + 'static {
    /// Where `name` occurs as an identifier token in the workspace's files of `near`'s
    /// language family (a `.py` file: every `.py`/`.pyi`; a `.ts` file: TypeScript and
    /// JavaScript), at most `limit` occurrences. Blocking (it may parse files): call it off the
    /// async runtime's worker threads. An error says why nothing could be searched (no grammar
    /// for the file's language).
    fn occurrences(
        &self,
        near: &Path,
        name: &str,
        limit: usize,
    ) -> Result<Sightings, Box<dyn std::error::Error + Send + Sync>>;

    /// Files the run itself changed (written, created or removed): looked at again before the
    /// next answer, whatever their mtime says.
    fn changed(&self, paths: &[PathBuf]);
}
