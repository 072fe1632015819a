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
//!   repeated metavariable must capture the same tokens (spacing and comments aside).
//! - `engine`: the walk (parallel, `.gitignore`-aware, binary/large files skipped and counted,
//!   literal prefilter, time limit), matching and rewriting, in path-then-position order.
//! - `stats`: what a walk did (searched, ruled out by the prefilter, skipped and why), which
//!   every result reports.
//! - `cache`: the run's parse cache (path, size, mtime → parsed tree; strictly bounded, least
//!   recently used out, never a tree the running search can still reach; a tree is kept from
//!   its file's second parse), so a later search over unchanged files neither reads nor parses
//!   them again.
//! - `tokens`: the run's token index (path, size, mtime → the hashes of the file's word tokens,
//!   filled from a file's second read), the literal prefilter that rules files out unread;
//!   shared with the witness.
//! - `limits`: what untrusted input may cost (issue 23): a pattern's nesting depth (matching
//!   recurses once per level of the pattern; walks over source trees never recurse), the size of
//!   a result's text, and the bounded keeping of the matches a result shows (the rest counted).
//! - `shown`: how file text and paths appear in a result: control characters and bidi
//!   overrides escaped, lines and captures clipped saying how much was left out.
//! - `resolve`: the `resolve` tool, which writes or drops a staged edit.
//! - `witness`: the run's identifier witness (provided to the registry at attach): where a
//!   name occurs as an identifier token, parsing only the files whose tokens (the token index)
//!   hold it; the language-server family checks its cross-file answers against it.
//! - `staged`: each conversation's staged edits, numbered across the run.
//! - this file: `ast_grep` and `ast_edit` and their rendering.

mod cache;
mod engine;
mod error;
mod glob;
mod grep;
mod lang;
mod limits;
mod pattern;
mod resolve;
mod scopes;
mod shown;
mod staged;
mod stats;
mod tokens;
mod witness;

pub use error::AstGrepError;
pub use lang::Lang;
pub use resolve::{ResolveAction, ResolveArgs};

use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::FileChange;
use agent_tier::{BoxError, CallContext, Registry, RoomId, Tier, Tool, ToolOutput};
use ast_grep_core::replacer::TemplateFix;
use engine::Budget;
use serde::Deserialize;
use serde_json::json;
use std::fmt::Write as _;
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
    /// token index: every search is a first search). Searches use the run's token index
    /// first (a file whose word tokens lack a pattern's literal is not read), so trees matter
    /// for patterns that must parse every file. A tree is kept from its file's second parse in
    /// the run (a search that is not repeated keeps nothing), least recently used out, but a
    /// search never evicts a tree it could still reach (its language, directory and glob): a
    /// tree that finds no other room is let go. Default 256 MiB (about 8 MiB of source; see
    /// docs/decisions.md).
    pub cache_bytes: u64,
    /// A search or rewrite stops walking after this many seconds (a search then says its
    /// results are partial; a rewrite stages nothing). Default 120.
    pub time_limit_secs: u64,
}

impl Default for AstGrepConfig {
    fn default() -> Self {
        AstGrepConfig {
            max_file_bytes: 64 * 1024 * 1024,
            threads: 0,
            max_match_lines: 5,
            max_diff_lines: 200,
            time_limit_secs: 120,
            cache_bytes: 256 * 1024 * 1024,
        }
    }
}

/// Attach the parser resource to this run and register `ast_grep`, `ast_edit` and `resolve`.
pub fn attach(registry: &Registry, config: AstGrepConfig) {
    // One token index for the run: `ast_grep`'s prefilter and the identifier witness.
    let index = Arc::new(tokens::TokenIndex::default());
    let shared = Arc::new(Shared {
        root: registry.run().root.clone(),
        cache: cache::ParseCache::with_index(config.cache_bytes, index.clone()),
        config,
        edits: staged::StagedEdits::attach(registry),
    });
    registry.register(AstGrepTool(shared.clone()));
    registry.register(AstEditTool(shared.clone()));
    registry.register(resolve::ResolveTool(shared));
    registry.provide_witness(Arc::new(witness::Witness::new(
        registry.run().root.clone(),
        index,
    )));
}

pub(crate) struct Shared {
    root: PathBuf,
    config: AstGrepConfig,
    cache: cache::ParseCache,
    edits: staged::StagedEdits,
}

/// Arguments of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepArgs {
    /// Code snippet with metavariables.
    pub pattern: String,
    /// File, directory or glob (`src/**/*.py`); default: everything. `.gitignore` is honoured.
    #[serde(default)]
    pub path: Option<String>,
    /// bash, c, c_sharp, cpp, css, dart, go, html, java, javascript, json, kotlin, lua, php,
    /// python, ruby, rust, swift, toml, tsx, typescript, yaml. Default: the file's or glob's
    /// extension; over a directory, every bundled language whose grammar accepts the pattern.
    #[serde(default, alias = "lang")]
    pub language: Option<String>,
    /// Matches listed (default 50); the rest are counted.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_results: Option<usize>,
}

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    /// As for ast_grep.
    pub pattern: String,
    /// Replacement template.
    pub rewrite: String,
    /// As for ast_grep.
    #[serde(default)]
    pub path: Option<String>,
    /// As for ast_grep, but over a directory where several languages accept the pattern, required.
    #[serde(default)]
    pub language: Option<String>,
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

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// The footer line: how many files were searched, ruled out and skipped (naming the first few).
pub(crate) fn walk_summary(stats: &stats::Stats, lang: Lang, config: &AstGrepConfig) -> String {
    let mut s = format!(
        "searched {} {} file{}",
        stats.files_searched,
        lang.id(),
        if stats.files_searched == 1 { "" } else { "s" }
    );
    if stats.files_prefiltered > 0 {
        let _ = write!(
            s,
            " ({} ruled out without parsing: they lack the pattern's identifiers)",
            stats.files_prefiltered
        );
    }
    let mut skipped = Vec::new();
    for (n, what) in [
        (stats.skipped_binary, "binary".to_string()),
        (stats.skipped_not_utf8, "not UTF-8".to_string()),
        (
            stats.skipped_large,
            format!("larger than {}", mib(config.max_file_bytes)),
        ),
        (stats.skipped_unreadable, "unreadable".to_string()),
        (stats.skipped_unparseable, "unparseable".to_string()),
        (
            stats.skipped_unvisited,
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
        let total = stats.skipped_binary
            + stats.skipped_not_utf8
            + stats.skipped_large
            + stats.skipped_unreadable
            + stats.skipped_unparseable
            + stats.skipped_unvisited;
        let names: Vec<String> = stats
            .skipped_files
            .iter()
            .map(|f| {
                if f.why == stats::PATH_TOO_LONG {
                    format!("{}: {}", agent_tier::display::clip_path(&f.path), f.why)
                } else {
                    agent_tier::display::clip_path(&f.path)
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

struct AstGrepTool(Arc<Shared>);

impl Tool for AstGrepTool {
    type Args = AstGrepArgs;

    fn name(&self) -> &str {
        "ast_grep"
    }
    fn hints(&self) -> agent_tier::Hints {
        agent_tier::Hints::query()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> String {
        "Find code by its syntax shape, never text in strings or comments (what a symbol means: \
         lsp). The pattern is parsed like the files, so spacing and line breaks do not matter. \
         Metavariables are `$` + UPPERCASE: `$X` one node, `$$$ARGS` a run of sibling nodes \
         (maybe none), `$_` one node unbound; `$x` is literal. A repeated metavariable must \
         match the same code. Example: `if ($X != null) $X.dispose()`."
            .to_string()
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: AstGrepArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        let shared = self.0.clone();
        let out = blocking(&self.0.config, move |b| grep::grep(&shared, args, b)).await?;
        Ok(out)
    }
}

struct AstEditTool(Arc<Shared>);

impl Tool for AstEditTool {
    type Args = AstEditArgs;

    fn name(&self) -> &str {
        "ast_edit"
    }
    fn hints(&self) -> agent_tier::Hints {
        // It only stages a proposal; `resolve` writes.
        agent_tier::Hints {
            read_only: true,
            destructive: false,
            idempotent: false,
            open_world: false,
        }
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> String {
        "Rewrite code by its syntax shape, across files (one place: edit; renaming a symbol: \
         lsp_rename). Matches as ast_grep; in `rewrite`, `$X` and `$$$X` stand for what they \
         captured, and multi-line text keeps the site's indentation. Where matches overlap, the \
         outermost is rewritten. Nothing is written: you get a diff and an edit_id for resolve \
         (accept or discard)."
            .to_string()
    }

    fn resource_key(&self) -> String {
        "astgrep.edits".to_string()
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: AstEditArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let shared = self.0.clone();
        let room = cx.room();
        let out = blocking(&self.0.config, move |b| edit(&shared, &room, args, b)).await?;
        Ok(out)
    }
}

/// The proposal's unified diff, at most `max_lines` lines; each file's name and each line of
/// its text escaped (a file name cannot start a header line of its own) and clipped.
fn bounded_diff(files: &[engine::FileRewrite], max_lines: usize) -> String {
    let mut lines = Vec::new();
    let mut total = 0;
    for f in files {
        let diff = similar::TextDiff::from_lines(&f.old, &f.new);
        let rel = shown::escape(&f.rel);
        let text = diff
            .unified_diff()
            .context_radius(2)
            .header(&format!("a/{rel}"), &format!("b/{rel}"))
            .to_string();
        // `similar` ends a line where `agent_tier::lines` does (`\n`, `\r\n`, a lone `\r`)
        // and keeps each line's own ending in the diff, so the diff is split the same way.
        for line in agent_tier::lines::lines(&text) {
            total += 1;
            if lines.len() < max_lines {
                lines.push(shown::clip(line));
            }
        }
    }
    if total > max_lines {
        lines.push(format!(
            "… diff truncated: {} more lines (accepting applies all of it)",
            total - max_lines
        ));
    }
    lines.join("\n")
}

fn edit(
    shared: &Shared,
    room: &RoomId,
    args: AstEditArgs,
    budget: &Budget,
) -> Result<ToolOutput, AstGrepError> {
    let config = &shared.config;
    let (mut scopes, _) = scopes::compiled_scopes(
        &shared.root,
        args.path.as_deref(),
        args.language.as_deref(),
        &args.pattern,
    )?;
    // A rewrite never guesses the language: several that accept the pattern are a refusal.
    if scopes.len() > 1 {
        return Err(AstGrepError::AmbiguousLanguage {
            langs: scopes
                .iter()
                .map(|(s, _)| s.lang.id())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let Some((scope, compiled)) = scopes.pop() else {
        return Err(AstGrepError::EmptyPattern);
    };
    let bound_list = || {
        if compiled.vars.is_empty() {
            "none".to_string()
        } else {
            compiled
                .vars
                .iter()
                .map(|v| format!("${v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    // A `$B` the grammar read as part of a token would never bind: the rewrite would silently
    // do nothing (or the wrong thing) there.
    let swallowed = pattern::swallowed_metavars(&args.pattern, &compiled);
    if !swallowed.is_empty() {
        let one = swallowed.len() == 1;
        return Err(AstGrepError::SwallowedMetavar {
            vars: swallowed.join(", "),
            them: if one { "it" } else { "them" },
            they: if one { "it" } else { "they" },
            bound: bound_list(),
        });
    }
    let fixer = match TemplateFix::try_new(&args.rewrite, &scope.lang) {
        Ok(f) => f,
        Err(e) => match e {},
    };
    let mut unbound: Vec<&str> = fixer
        .used_vars()
        .into_iter()
        .filter(|v| !compiled.vars.iter().any(|b| b == v))
        .collect();
    unbound.sort_unstable();
    if let Some(var) = unbound.first() {
        return Err(AstGrepError::UnboundRewriteVar {
            var: format!("${var}"),
            bound: bound_list(),
        });
    }
    let (rewrites, stats) =
        engine::rewrite(&scope, &compiled, &fixer, config, &shared.cache, budget);
    if stats.stopped_early {
        return Err(AstGrepError::TimeLimit {
            secs: config.time_limit_secs,
            searched: stats.files_searched,
        });
    }
    let unchanged: usize = rewrites
        .iter()
        .filter(|r| r.old == r.new)
        .map(|r| r.replacements)
        .sum();
    let files: Vec<engine::FileRewrite> = rewrites.into_iter().filter(|r| r.old != r.new).collect();
    let replacements: usize = files.iter().map(|f| f.replacements).sum();
    let inner: usize = files.iter().map(|f| f.inner_skipped).sum();
    let footer = walk_summary(&stats, scope.lang, config);
    let pattern_line = shown::escape(&args.pattern.trim().replace('\n', "⏎")).into_owned();

    if files.is_empty() {
        let mut text = format!(
            "(nothing staged) no change: `{pattern_line}` ({}, parsed as {}) ",
            scope.lang.id(),
            compiled.context
        );
        if unchanged > 0 {
            let _ = write!(
                text,
                "matched {} but the rewrite leaves the code as it is",
                plural(unchanged, "time", "times")
            );
        } else {
            text.push_str("matched nothing");
        }
        let _ = write!(text, "\n{footer}");
        return Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": null,
            "replacements": 0,
            "files": [],
            "stats": stats,
        })));
    }

    let broken: Vec<String> = files
        .iter()
        .filter_map(|f| {
            f.broken
                .as_ref()
                .map(|b| shown::escape(&format!("{} ({b})", f.rel)).into_owned())
        })
        .collect();
    let changes: Vec<FileChange> = files
        .iter()
        .map(|f| FileChange {
            path: f.path.clone(),
            expected: Some(f.old.clone().into_bytes()),
            new: Some(f.new.clone().into_bytes()),
        })
        .collect();
    let rels: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
    let id = shared.edits.stage(
        room,
        staged::Staged {
            changes,
            files: rels.clone(),
            replacements,
        },
    );

    let mut text = format!(
        "(proposed) {} in {} … call resolve with edit_id \"{id}\" (operation \"accept\" writes them all, \"discard\" drops them); nothing is written yet",
        plural(replacements, "replacement", "replacements"),
        plural(files.len(), "file", "files"),
    );
    if inner > 0 {
        let _ = write!(
            text,
            "\n{} nested inside a rewritten match {} left as {} (the outermost match wins)",
            plural(inner, "match", "matches"),
            if inner == 1 { "was" } else { "were" },
            if inner == 1 { "it is" } else { "they are" }
        );
    }
    if !broken.is_empty() {
        let _ = write!(
            text,
            "\nwarning: after this rewrite {} no longer {}: {}",
            plural(broken.len(), "file", "files"),
            if broken.len() == 1 { "parses" } else { "parse" },
            broken.join("; ")
        );
    }
    let _ = write!(
        text,
        "\n{footer}\n\n{}",
        bounded_diff(&files, config.max_diff_lines)
    );
    let structured = json!({
        "edit_id": id,
        "replacements": replacements,
        "inner_matches_left": inner,
        "files": rels,
        "no_longer_parse": broken,
        "stats": stats,
    });
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// For `examples/bench` (issue 26): the limit a search runs against. Finds the files of
/// `language` under `root` (the walk `ast_grep` makes) whose word tokens admit `pattern`'s
/// literals — the files a search must parse — and parses them with tree-sitter on `threads`
/// threads, no matching. Returns (files parsed, their bytes, wall time of the parses alone).
#[doc(hidden)]
pub fn bare_parse(
    root: &std::path::Path,
    language: &str,
    pattern: &str,
    threads: usize,
) -> Result<(usize, u64, Duration), AstGrepError> {
    let lang = Lang::from_id(language).ok_or_else(|| AstGrepError::UnknownLanguage {
        given: language.to_string(),
        valid: Lang::ids(),
    })?;
    let compiled = pattern::compile(lang, pattern)?;
    let wanted = tokens::wanted(&compiled.literals);
    let mut texts = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .require_git(false)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) || !lang.owns(entry.path()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if tokens::holds_all(&tokens::tokens(&text), &wanted) {
            texts.push(text);
        }
    }
    let bytes = texts.iter().map(|t| t.len() as u64).sum();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                let mut parser = tree_sitter::Parser::new();
                if parser.set_language(&lang.ts_language()).is_err() {
                    return;
                }
                while let Some(text) = texts.get(next.fetch_add(1, Ordering::Relaxed)) {
                    drop(parser.parse(text, None));
                }
            });
        }
    });
    Ok((texts.len(), bytes, start.elapsed()))
}
