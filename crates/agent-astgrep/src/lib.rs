//! # agent-astgrep — structural search and staged rewrite: `ast_grep`, `ast_edit`, `resolve`
//!
//! Owns the run's parser resource (22 bundled tree-sitter grammars, statically linked) and its
//! staged edits. Matching and rewriting use `ast-grep-core`; this crate adds the grammar table,
//! the scaffolding contexts in which a pattern snippet is parsed, the parallel file walk (which
//! honours `.gitignore`, skips binary and large files, and never parses a file that lacks one
//! of the pattern's literal identifiers), and the staging of rewrites.
//!
//! - `ast_grep` (read tier, parallel-safe): find code by shape.
//! - `ast_edit` (write tier): compute a rewrite and stage it; nothing is written.
//! - `resolve` (write tier): accept (all-or-nothing, stale files rejected) or discard a staged
//!   rewrite. Staged edits belong to the conversation (room) that staged them.
//!
//! Never: starts a process, downloads a grammar, or writes a file outside `resolve`.
//!
//! ## Codemap
//!
//! - `lang`: the grammar table (`lang/table.rs`), one entry per language — ids and aliases,
//!   extensions, the grammar, how `$` is spelled while a pattern is parsed, identifier and
//!   comment kinds, the language server family, and the ordered scaffolding contexts — and the
//!   lookups and ast-grep-core's `Language` over it. Adding a language is one entry.
//! - `pattern`: compiles a snippet. The first context whose parse has no error or missing node
//!   and has one node spanning exactly the snippet gives the pattern (a `;` the context supplies
//!   may close it). Two deliberate tolerances: a metavariable standing alone where the grammar
//!   wants a terminator (`{ $$$BODY }` in Dart), and, when the accepted node declares a function,
//!   the same snippet accepted by a later context as another kind of declaration is matched too
//!   (a Dart `void $F() { … }` is a local function in a block and a method in a class). A
//!   repeated metavariable must capture the same tokens (spacing and comments aside): its
//!   child `pattern/matcher.rs` holds that check, the matcher a search runs; its child
//!   `pattern/find.rs` is the walk that offers a parsed file's nodes to it, entering only the
//!   nodes that hold the pattern's rarest verbatim token.
//! - `needle`: a token a pattern's matches hold verbatim, found in a file's bytes (overlapping
//!   occurrences; a keyword of a grammar that extracts its keywords only where no word byte
//!   follows), for the prefilter and the match walk.
//! - `engine`: the scope and the walk (parallel, `.gitignore`-aware, binary/large files skipped
//!   and counted, literal prefilter, time limit), in path order; its children are what a walk
//!   is for: `search` (matches listed and counted, the memo's answers used and filled) and
//!   `rewrite` (each matching file's new text); `retire` frees the trees of large files on one
//!   background thread, started for the first large tree and kept for the process (at most two
//!   trees wait).
//! - `stats`: what a walk did (searched, ruled out by the prefilter, skipped and why), which
//!   every result reports, and the footer line that says it.
//! - `fingerprint`: how the run knows a file is unchanged (size, mtime and ctime; nothing kept
//!   for a file changed in the last 2 s), for the cache, the index and the memo alike.
//! - `cache`: the run's parse cache (path and fingerprint → parsed tree; strictly bounded, least
//!   recently used out, never a tree the running search can still reach; a tree is kept from
//!   its file's second parse), so a later search over unchanged files neither reads nor parses
//!   them again.
//! - `tokens`: the run's token index (path and fingerprint → the 32-bit hashes of the file's word
//!   tokens, filled from a file's second read), the literal prefilter that rules files out
//!   unread; shared with the witness.
//! - `memo`: the run's memo of finished searches (search, path and fingerprint → the
//!   file's match count and the matches its result listed), so a repeated search reads no
//!   unchanged file; its results say how many files it answered.
//! - `limits`: what untrusted input may cost (issue 23): a pattern's nesting depth (matching
//!   recurses once per level of the pattern; walks over source trees never recurse), the size of
//!   a result's text, and the bounded keeping of the matches a result shows (the rest counted).
//! - `shown`: how file text and paths appear in a result: control characters and bidi
//!   overrides escaped, lines and captures clipped saying how much was left out; a match as a
//!   result lists it.
//! - `witness`: the run's identifier witness (provided to the registry at attach): where a
//!   name occurs as an identifier token, parsing only the files whose tokens (the token index)
//!   hold it; the language-server family checks its cross-file answers against it.
//! - `definitions`: the run's definition finder (provided to the registry at attach): a file's
//!   definitions by name path from its grammar's tags query, for `edit` by `symbol`.
//! - `staged`: each conversation's staged edits, numbered across the run, and the resource
//!   `ast_edit` and `resolve` hold.
//! - one file per tool, each with its result type as a child (`report.rs`): `grep` (`ast_grep`:
//!   plan, search every language, merge; [`GrepReport`]), `edit` (`ast_edit`: check the rewrite,
//!   compute it, stage it; [`EditReport`]) and `resolve` (`resolve`: write or drop a staged edit;
//!   [`ResolveReport`]). A result is a value of its own type implementing
//!   [`agent_tier::Report`]: its fields are the structured result, its text is rendered from it.
//!   `scopes` (with `glob`) plans what a call searches when `path` is a glob or `language` is
//!   left out; `tree` is `ast_grep`'s `tree: true` (the syntax a pattern is matched against).
//! - `bench`: the bare parse `examples/bench` measures a search against.
//! - this file: the configuration, `attach`, the blocking thread each call runs on, and the
//!   hook a binary sets tree-sitter's allocator with (this crate never chooses one).

mod bench;
mod cache;
mod definitions;
mod edit;
mod engine;
mod error;
mod fingerprint;
mod glob;
mod grep;
mod lang;
mod limits;
mod memo;
mod needle;
mod pattern;
mod resolve;
mod scopes;
mod shown;
mod staged;
mod stats;
#[cfg(test)]
mod testing;
mod tokens;
mod tree;
mod witness;

pub use bench::patterns as bench_patterns;
#[doc(hidden)]
pub use bench::{bare_parse, bare_parse_files};
pub use edit::AstEditArgs;
pub use edit::report::EditReport;
pub use error::AstGrepError;
pub use grep::AstGrepArgs;
pub use grep::report::{GrepReport, LanguageStats, Understood, WalkStats};
pub use lang::Lang;
pub use resolve::report::ResolveReport;
pub use resolve::{ResolveAction, ResolveArgs};
pub use shown::Match;
pub use stats::{SkippedFile, Stats};
#[doc(hidden)]
pub use tree::MAX_NODES as TREE_MAX_NODES;
/// The allocation functions tree-sitter's C code calls, for [`set_tree_allocator`].
pub use tree_sitter::Allocator as TreeAllocator;

/// Route tree-sitter's C allocations (every parsed tree's nodes) to `allocator`, for a binary
/// that chooses its allocator; this crate never does. The `agent-tools` binary gives mimalloc
/// (docs/decisions.md, "The binary's allocator").
///
/// # Safety
///
/// As [`tree_sitter::set_allocator`]: the four functions belong to one allocator, never return
/// null for a non-zero size, align as `malloc` does; called before any tree-sitter object
/// exists (first in `main`), and not while one does.
#[allow(unsafe_code)]
pub unsafe fn set_tree_allocator(allocator: TreeAllocator) {
    // SAFETY: the caller's contract is tree_sitter::set_allocator's.
    unsafe { tree_sitter::set_allocator(Some(allocator)) }
}

use agent_tier::Registry;
use engine::Budget;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How the parser resource behaves. Plain data; `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AstGrepConfig {
    /// Files larger than this many bytes are skipped (counted, and the first few named).
    /// Default 64 MiB.
    pub max_file_bytes: u64,
    /// Worker threads for a search; 0 means one per available core. Default 0.
    pub threads: usize,
    /// Lines of each match shown in the result. Default 5.
    pub max_match_lines: usize,
    /// Lines of unified diff shown in an `ast_edit` proposal. Default 200.
    pub max_diff_lines: usize,
    /// The run's parse cache keeps parsed files up to about this many bytes (source and tree,
    /// 32 bytes per byte of source, measured), never more; 0 turns caching off (no trees, no
    /// token index, no memo: every search is a first search). Searches use the run's memo of
    /// finished searches first (the same pattern again: an unchanged file's answer is not read
    /// again; 16 MiB), then the run's token index (a file whose word tokens lack a pattern's
    /// literal is not read; at most 32 MiB), so trees matter for a new pattern that must parse
    /// every file. A tree is kept from its file's second parse in the run (a search that is
    /// not repeated keeps nothing), least recently used out, but a search never evicts a tree
    /// it could still reach (its language, directory and glob): a tree that finds no other
    /// room is let go. Default 96 MiB (about 3 MiB of source), so that a `serve` run that
    /// searched three large corpora stays under 300 MB (see docs/decisions.md).
    pub cache_bytes: u64,
    /// A search or rewrite stops walking after this many seconds (a search then says its
    /// results are partial; a rewrite stages nothing). Default 120.
    pub time_limit_secs: u64,
    /// The most bytes (old and new texts) one conversation's pending `ast_edit` edits hold; an
    /// edit past it is refused, naming the pending ones to resolve. Default 512 MiB.
    pub staged_bytes: u64,
}

impl Default for AstGrepConfig {
    fn default() -> Self {
        AstGrepConfig {
            max_file_bytes: 64 * 1024 * 1024,
            staged_bytes: 512 << 20,
            threads: 0,
            max_match_lines: 5,
            max_diff_lines: 200,
            time_limit_secs: 120,
            cache_bytes: 96 * 1024 * 1024,
        }
    }
}

/// Attach the parser resource to this run and register `ast_grep`, `ast_edit` and `resolve`.
pub fn attach(registry: &Registry, config: AstGrepConfig) {
    // One token index for the run: `ast_grep`'s prefilter and the identifier witness.
    let index = Arc::new(tokens::TokenIndex::default());
    // The memo of finished searches, told of the run's writes through the witness.
    let memo = Arc::new(memo::MatchMemo::new(memo::DEFAULT_CAPACITY));
    let shared = Arc::new(Shared {
        root: registry.run().root.clone(),
        cache: cache::ParseCache::with_index(config.cache_bytes, index.clone(), memo.clone()),
        config,
        edits: staged::StagedEdits::attach(registry),
    });
    registry.register(grep::AstGrepTool(shared.clone()));
    registry.register(edit::AstEditTool(shared.clone()));
    registry.register(resolve::ResolveTool(shared));
    registry.provide_definitions(Arc::new(definitions::Finder));
    registry.provide_witness(Arc::new(
        witness::Witness::new(registry.run().root.clone(), index).forgetting_in(memo),
    ));
}

pub(crate) struct Shared {
    root: PathBuf,
    config: AstGrepConfig,
    cache: cache::ParseCache,
    edits: staged::StagedEdits,
}

/// Sets the flag when dropped: the caller stopped waiting, so the walk should stop too.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Run `f` on a blocking thread with a budget: the configured time limit, and cancellation
/// when this future is dropped.
async fn blocking<T: Send + 'static>(
    config: &AstGrepConfig,
    f: impl FnOnce(&Budget) -> Result<T, AstGrepError> + Send + 'static,
) -> Result<T, AstGrepError> {
    let cancelled = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(cancelled.clone());
    let budget = Budget {
        deadline: Instant::now() + Duration::from_secs(config.time_limit_secs),
        cancelled,
    };
    tokio::task::spawn_blocking(move || f(&budget))
        .await
        .map_err(|e| AstGrepError::Internal(format!("search task failed: {e}")))?
}
