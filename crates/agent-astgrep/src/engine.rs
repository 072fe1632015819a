//! The search and rewrite engine: which files, in parallel, prefiltered, matched with
//! ast-grep-core, in a deterministic order.

use crate::AstGrepConfig;
use crate::cache::ParseCache;
use crate::error::AstGrepError;
use crate::glob::{is_glob, split_glob};
use crate::lang::Lang;
use crate::limits::Kept;
use crate::memo::{Answer, Fingerprint, SearchKey};
use crate::pattern::Compiled;
pub use crate::shown::Match;
use crate::shown::{clip, column_of, kept_capture, relative};
use crate::stats::{Counters, Stats};
use crate::tokens::{self, Known};
use agent_tier::lines;
use agent_tier::workspace::confine_existing;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, NodeMatch};
use memchr::memmem;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// `Scope::lang_from` of a search with no language given: one walk per language present.
pub const DIRECTORY_SCAN: &str = "directory scan";

/// What to search: the confined target, whether it is one file, the grammar, and the glob a
/// file's path (relative to the root) must match when `path` was a glob.
#[derive(Debug, Clone)]
pub struct Scope {
    pub root: PathBuf,
    pub target: PathBuf,
    pub single_file: bool,
    pub lang: Lang,
    /// How the language was chosen: `argument`, `extension` or [`DIRECTORY_SCAN`].
    pub lang_from: &'static str,
    pub glob: Option<globset::GlobMatcher>,
}

impl Scope {
    /// Whether the walk takes this file (the glob, when there is one, admits it).
    pub fn admits(&self, path: &Path) -> bool {
        match &self.glob {
            None => true,
            Some(g) => g.is_match(path.strip_prefix(&self.root).unwrap_or(path)),
        }
    }

    /// Whether this search visits `path` as `lang`: what its walk takes, and whose cached
    /// tree it never evicts for its own. A search by directory scan walks once per language
    /// present, so there a file of any language is the search's own (else each language's
    /// walk would evict the others' trees, every time).
    pub fn reaches(&self, path: &Path, lang: Lang) -> bool {
        if self.single_file {
            lang == self.lang && path == self.target
        } else {
            (lang == self.lang || self.lang_from == DIRECTORY_SCAN)
                && lang.owns(path)
                && path.starts_with(&self.target)
                && self.admits(path)
        }
    }
}

/// Resolve `path` and `language` arguments into a scope.
pub fn scope(
    root: &Path,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Scope, AstGrepError> {
    let given = path.unwrap_or(".");
    let given = if given.trim().is_empty() { "." } else { given };
    let (given, glob) = if is_glob(given) {
        let (base, pattern) = split_glob(given);
        let glob = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| AstGrepError::BadGlob {
                glob: given.to_string(),
                detail: e.kind().to_string(),
            })?
            .compile_matcher();
        (base, Some((glob, pattern)))
    } else {
        (given.to_string(), None)
    };
    let given = given.as_str();
    let target = confine_existing(root, "path", given)?;
    let root = root.canonicalize().map_err(|e| AstGrepError::Walk {
        path: root.display().to_string(),
        detail: e.to_string(),
    })?;
    let lang = match language {
        Some(id) if !id.trim().is_empty() => {
            Some(
                Lang::from_id(id).ok_or_else(|| AstGrepError::UnknownLanguage {
                    given: id.to_string(),
                    valid: Lang::ids(),
                })?,
            )
        }
        _ => None,
    };
    let single_file = target.is_file() && glob.is_none();
    // A glob ending in an extension (`**/*.py`) names its language.
    let from_glob = glob
        .as_ref()
        .and_then(|(_, p)| Lang::from_file(Path::new(p)));
    let lang_from = if lang.is_some() {
        "argument"
    } else {
        "extension"
    };
    let lang = match (lang.or(from_glob), single_file) {
        (Some(l), _) => l,
        (None, true) => Lang::from_file(&target).ok_or_else(|| AstGrepError::CannotInfer {
            path: given.to_string(),
            valid: Lang::ids(),
        })?,
        (None, false) => {
            return Err(AstGrepError::NeedLanguage {
                path: given.to_string(),
                valid: Lang::ids(),
            });
        }
    };
    Ok(Scope {
        root,
        target,
        single_file,
        lang,
        lang_from,
        glob: glob.map(|(g, _)| g),
    })
}

/// When a walk must stop: a deadline, and a flag set when the caller stops waiting.
#[derive(Debug, Clone)]
pub struct Budget {
    pub deadline: std::time::Instant,
    pub cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Budget {
    fn exhausted(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || std::time::Instant::now() >= self.deadline
    }
}

struct Prefilter {
    finders: Vec<memmem::Finder<'static>>,
}

impl Prefilter {
    fn new(literals: &[String]) -> Self {
        Prefilter {
            finders: literals
                .iter()
                .map(|l| memmem::Finder::new(l.as_bytes()).into_owned())
                .collect(),
        }
    }
    fn may_match(&self, bytes: &[u8]) -> bool {
        self.finders.iter().all(|f| f.find(bytes).is_some())
    }
}

/// Read, filter and hand each candidate file to `f` (with its fingerprint, when it has one);
/// results come back sorted by path. `recall` may answer a file from its fingerprint alone:
/// `Some(answer)` and the file is neither read nor parsed (it counts as remembered).
fn walk<T: Send>(
    scope: &Scope,
    compiled: &Compiled,
    config: &AstGrepConfig,
    cache: &ParseCache,
    budget: &Budget,
    recall: impl Fn(&Path, Fingerprint) -> Option<Option<T>> + Sync,
    f: impl Fn(&Path, &AstGrep<StrDoc<Lang>>, Option<Fingerprint>) -> Option<T> + Sync,
) -> (Vec<(PathBuf, T)>, Stats) {
    let counters = Counters::default();
    let prefilter = Prefilter::new(&compiled.literals);
    let wanted = tokens::wanted(&compiled.literals);
    let index = cache.index();
    let cached = cache.visit(|path: &Path, lang: Lang| scope.reaches(path, lang));
    let results: Mutex<Vec<(PathBuf, T)>> = Mutex::new(Vec::new());
    let visit = |path: &Path, meta: Option<std::fs::Metadata>| {
        counters.searched.fetch_add(1, Ordering::Relaxed);
        let len = meta.as_ref().map(|m| m.len());
        if len.is_some_and(|l| l > config.max_file_bytes) {
            counters.skip(&counters.large, path, "too large");
            return;
        }
        let mtime = meta.as_ref().and_then(|m| m.modified().ok());
        let print = meta.as_ref().and_then(Fingerprint::of);
        if let Some(print) = print
            && let Some(answer) = recall(path, print)
        {
            counters.remembered.fetch_add(1, Ordering::Relaxed);
            if let Some(t) = answer {
                results.lock().push((path.to_path_buf(), t));
            }
            return;
        }
        // What the run's token index knows of the file as it is now: an indexed file whose
        // tokens lack a literal is ruled out unread.
        let known = match (index, len, mtime) {
            (Some(index), Some(len), Some(mtime)) => index.known(path, len, mtime, &wanted),
            _ => Known::New,
        };
        let (indexed, parsed_before) = match known {
            Known::Indexed { admits: false, .. } => {
                counters.prefiltered.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Known::Indexed { parsed, .. } => (true, parsed),
            Known::Seen { parsed } => (false, parsed),
            Known::New => (false, false),
        };
        let handle = |ast: &AstGrep<StrDoc<Lang>>, print: Option<Fingerprint>| {
            if let Some(t) = f(path, ast, print) {
                results.lock().push((path.to_path_buf(), t));
            }
        };
        if let (Some(len), Some(mtime)) = (len, mtime)
            && let Some(ast) = cached.get(path, compiled.lang, len, mtime)
        {
            if indexed || prefilter.may_match(ast.get_text().as_bytes()) {
                handle(&ast, print);
            } else {
                counters.prefiltered.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                counters.skip(&counters.unreadable, path, crate::stats::why_unreadable(&e));
                return;
            }
        };
        if bytes.len() as u64 > config.max_file_bytes {
            counters.skip(&counters.large, path, "too large");
            return;
        }
        let head = &bytes[..bytes.len().min(8192)];
        if memchr::memchr(0, head).is_some() {
            counters.skip(&counters.binary, path, "binary");
            return;
        }
        let read_len = bytes.len() as u64;
        // Only a file read whole at the size its mtime belongs to is noted or cached.
        let whole = match (len, mtime) {
            (Some(len), Some(mtime)) if len == read_len => Some((len, mtime)),
            _ => None,
        };
        // The fingerprint of what was read, for the memo: only of a file read whole at its size.
        let read_print = print.filter(|p| p.len == read_len);
        // The second read of a file in the run indexes it (the first only notes it).
        let new_tokens = match (index, whole, known) {
            (Some(_), Some(_), Known::Seen { .. }) => {
                std::str::from_utf8(&bytes).ok().map(tokens::tokens)
            }
            _ => None,
        };
        let admits = match &new_tokens {
            Some(t) => tokens::holds_all(t, &wanted),
            None => indexed || prefilter.may_match(&bytes),
        };
        if !admits {
            counters.prefiltered.fetch_add(1, Ordering::Relaxed);
            if let (Some(index), Some((len, mtime))) = (index, whole) {
                index.note(path, len, mtime, new_tokens, false);
            }
            return;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            counters.skip(&counters.not_utf8, path, "not UTF-8");
            return;
        };
        let Ok(ast) = AstGrep::<StrDoc<Lang>>::try_new(&text, compiled.lang) else {
            counters.skip(&counters.unparseable, path, "unparseable");
            return;
        };
        drop(text);
        let ast = std::sync::Arc::new(ast);
        handle(&ast, read_print);
        if let (Some(index), Some((len, mtime))) = (index, whole) {
            index.note(path, len, mtime, new_tokens, true);
            // A tree is worth keeping from its second parse in the run: a search that is not
            // repeated keeps nothing.
            if parsed_before {
                cached.put(path, compiled.lang, len, mtime, ast);
            }
        }
    };

    if scope.single_file {
        visit(&scope.target, std::fs::metadata(&scope.target).ok());
    } else {
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        let mut builder = ignore::WalkBuilder::new(&scope.target);
        // `.gitignore` is honoured even outside a git checkout; hidden files are searched
        // (`.github/workflows/*.yml` is code too), but never the `.git` directory.
        builder
            .threads(threads)
            .require_git(false)
            .hidden(false)
            .filter_entry(|e| e.file_name() != ".git");
        builder.build_parallel().run(|| {
            let visit = &visit;
            let counters = &counters;
            Box::new(move |entry| {
                if budget.exhausted() {
                    counters.stopped.store(true, Ordering::Relaxed);
                    return ignore::WalkState::Quit;
                }
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        counters.unvisited(&e);
                        return ignore::WalkState::Continue;
                    }
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && scope.reaches(entry.path(), scope.lang)
                {
                    visit(entry.path(), entry.metadata().ok());
                }
                ignore::WalkState::Continue
            })
        });
    }
    let mut out = results.into_inner();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    (out, counters.stats(&scope.root))
}

/// Each metavariable's capture, clipped as it is kept, and how many lines it spans.
fn captures(
    text: &str,
    compiled: &Compiled,
    nm: &NodeMatch<'_, StrDoc<Lang>>,
) -> (BTreeMap<String, String>, BTreeMap<String, usize>) {
    let env = nm.get_env();
    let mut out = BTreeMap::new();
    let mut lines = BTreeMap::new();
    for var in &compiled.vars {
        let span = match env.get_match(var) {
            Some(node) => node.range(),
            None => {
                let nodes = env.get_multiple_matches(var);
                match (nodes.first(), nodes.last()) {
                    (Some(first), Some(last)) => first.range().start..last.range().end,
                    _ => 0..0,
                }
            }
        };
        let (kept, n) = kept_capture(&text[span]);
        out.insert(var.clone(), kept);
        lines.insert(var.clone(), n);
    }
    (out, lines)
}

/// One match as a result shows it. Lines and columns are counted by [`agent_tier::lines`] from
/// the match's bytes (tree-sitter's rows end at `\n` only, so after a lone `\r` they are not the
/// file's lines); `cursor` walks the file forward, match by match.
fn to_match(
    rel: &str,
    text: &str,
    cursor: &mut lines::Cursor<'_>,
    compiled: &Compiled,
    nm: &NodeMatch<'_, StrDoc<Lang>>,
    max_lines: usize,
) -> Match {
    let range = nm.range();
    let bytes = text.as_bytes();
    let (start_line, first) = cursor.seek(range.start);
    let (end_line, _) = cursor.clone().seek(range.end);
    let last = lines::line_end(bytes, range.end).max(first);
    let shown = &text[first..last];
    let total = end_line - start_line + 1;
    let lines = lines::lines(shown)
        // A last line that is empty is a line too (`lines` yields none after a final ending).
        .chain((shown.is_empty() || shown.ends_with(['\n', '\r'])).then_some(""))
        .take(max_lines.max(1))
        .map(clip)
        .collect::<Vec<_>>();
    let (captures, capture_lines) = captures(text, compiled, nm);
    Match {
        file: rel.to_string(),
        line: start_line + 1,
        column: column_of(text, range.start),
        end_line: end_line + 1,
        end_column: column_of(text, range.end),
        more_lines: total.saturating_sub(lines.len()),
        lines,
        captures,
        capture_lines,
    }
}

/// The result of a search: the first matches in order (as many as asked for), how many were
/// found in all, and the walk's counts.
#[derive(Debug, Clone)]
pub struct SearchResult {
    pub matches: Vec<Match>,
    pub total: usize,
    pub files_matched: usize,
    pub stats: Stats,
}

/// Search `scope` for `compiled`, keeping the first `keep` matches (by path, then position)
/// and counting the rest: a match past them is never rendered, nor its captures copied.
pub fn search(
    scope: &Scope,
    compiled: &Compiled,
    config: &AstGrepConfig,
    cache: &ParseCache,
    budget: &Budget,
    keep: usize,
) -> SearchResult {
    let root = &scope.root;
    let kept = Kept::new(keep);
    let memo = cache.memo();
    let key = SearchKey {
        lang: compiled.lang,
        pattern: compiled.source.clone(),
        max_lines: config.max_match_lines,
    };
    let remember = |path: &Path, print: Option<Fingerprint>, count: usize, found: &[Match]| {
        if let (Some(memo), Some(print)) = (memo, print) {
            let answer = Answer {
                count,
                matches: found.to_vec().into(),
            };
            memo.remember(&key, path, print, answer);
        }
    };
    // Files whose remembered answer listed fewer matches than this result could take when the
    // walk came to them (the earlier search's parallel walk had already filled its first
    // matches from files sorting before them): their counts stand, and after the walk those
    // still within the first `keep` are parsed for their matches.
    let deferred: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    // A file this run's earlier search of the same pattern answered, unchanged since.
    let recall = |path: &Path, print: Fingerprint| {
        let answer = memo?.recall(&key, path, print)?;
        if answer.count == 0 {
            return Some(None);
        }
        let rel = relative(root, path);
        let room = kept.room(&rel);
        if answer.matches.len() < room.min(answer.count) {
            deferred.lock().push(path.to_path_buf());
        } else {
            kept.offer(rel, answer.matches.iter().take(room).cloned().collect());
        }
        Some(Some(answer.count))
    };
    let (mut per_file, mut stats) = walk(
        scope,
        compiled,
        config,
        cache,
        budget,
        recall,
        |path, ast, print| {
            let rel = relative(root, path);
            let (found, count) = file_matches(&rel, ast, compiled, kept.room(&rel), config);
            remember(path, print, count, &found);
            kept.offer(rel, found);
            (count > 0).then_some(count)
        },
    );
    let mut deferred = deferred.into_inner();
    deferred.sort();
    for path in deferred {
        if budget.exhausted() {
            stats.stopped_early = true;
            break;
        }
        let rel = relative(root, &path);
        let room = kept.room(&rel);
        if room == 0 {
            continue;
        }
        let Ok(at) = per_file.binary_search_by(|(p, _)| p.as_path().cmp(&path)) else {
            continue;
        };
        let print = std::fs::metadata(&path)
            .ok()
            .and_then(|m| Fingerprint::of(&m));
        if print.is_some_and(|p| p.len > config.max_file_bytes) {
            // Grown past the limit since the walk: skipped as the walk skips such a file.
            per_file.remove(at);
            stats.skipped_large += 1;
            continue;
        }
        let parsed = std::fs::read(&path)
            .ok()
            .filter(|b| b.len() as u64 <= config.max_file_bytes)
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|text| AstGrep::<StrDoc<Lang>>::try_new(&text, compiled.lang).ok());
        let Some(ast) = parsed else {
            // Gone or changed past reading since the walk: not searched after all.
            per_file.remove(at);
            stats.skipped_unreadable += 1;
            continue;
        };
        let (found, count) = file_matches(&rel, &ast, compiled, room, config);
        let whole = print.filter(|p| p.len == ast.get_text().len() as u64);
        remember(&path, whole, count, &found);
        kept.offer(rel, found);
        if count == 0 {
            per_file.remove(at);
        } else {
            per_file[at].1 = count;
        }
    }
    SearchResult {
        matches: kept.into_sorted(),
        total: per_file.iter().map(|(_, n)| n).sum(),
        files_matched: per_file.len(),
        stats,
    }
}

/// A file's first `room` matches (rendered, in position order) and how many it has in all.
fn file_matches(
    rel: &str,
    ast: &AstGrep<StrDoc<Lang>>,
    compiled: &Compiled,
    room: usize,
    config: &AstGrepConfig,
) -> (Vec<Match>, usize) {
    let text = ast.get_text();
    // find_all is pre-order: by start, an enclosing node before the nodes it encloses,
    // which is the order a result lists them in.
    let mut found = Vec::new();
    let mut count = 0usize;
    let mut cursor = lines::Cursor::new(text.as_bytes());
    for nm in ast.root().find_all(&compiled.pattern) {
        if found.len() < room {
            found.push(to_match(
                rel,
                text,
                &mut cursor,
                compiled,
                &nm,
                config.max_match_lines,
            ));
        }
        count += 1;
    }
    found.sort_by(|a, b| {
        (
            a.line,
            a.column,
            std::cmp::Reverse((a.end_line, a.end_column)),
        )
            .cmp(&(
                b.line,
                b.column,
                std::cmp::Reverse((b.end_line, b.end_column)),
            ))
    });
    (found, count)
}

/// One file's rewrite.
#[derive(Debug, Clone)]
pub struct FileRewrite {
    pub path: PathBuf,
    pub rel: String,
    pub old: String,
    pub new: String,
    pub replacements: usize,
    /// Matches nested inside a replaced match, left as they are.
    pub inner_skipped: usize,
    /// Where the rewritten file no longer parses (it parsed before).
    pub broken: Option<String>,
}

/// The first error or missing node, as `line L, column C: what`.
fn first_error(ast: &AstGrep<StrDoc<Lang>>, text: &str) -> Option<String> {
    let root = ast.root();
    if !root.get_inner_node().has_error() {
        return None;
    }
    let bad = root.dfs().find(|n| n.is_error() || n.is_missing())?;
    let pos = bad.range().start;
    let line = lines::Cursor::new(text.as_bytes()).seek(pos).0 + 1;
    let col = column_of(text, pos);
    let what = if bad.is_missing() {
        format!("missing `{}`", bad.kind())
    } else {
        let snippet: String = bad.text().chars().take(40).collect();
        format!("syntax error at `{}`", snippet.replace('\n', " "))
    };
    Some(format!("line {line}, column {col}: {what}"))
}

/// Compute the rewrite of every matching file in `scope`.
pub fn rewrite(
    scope: &Scope,
    compiled: &Compiled,
    fixer: &TemplateFix,
    config: &AstGrepConfig,
    cache: &ParseCache,
    budget: &Budget,
) -> (Vec<FileRewrite>, Stats) {
    let root = &scope.root;
    // A rewrite reads every file it may change: nothing is recalled.
    let recall = |_: &Path, _: Fingerprint| None;
    let (per_file, stats) = walk(
        scope,
        compiled,
        config,
        cache,
        budget,
        recall,
        |path, ast, _| {
            let text = ast.get_text();
            // Outermost wins. find_all is pre-order (by start, an enclosing node first), so a match
            // starting inside a kept one is skipped before its replacement is ever built: over a
            // deeply nested file, every node may match.
            let mut kept: Vec<(usize, usize, Vec<u8>)> = Vec::new();
            let mut inner_skipped = 0;
            let mut end = 0usize;
            for nm in ast.root().find_all(&compiled.pattern) {
                if !kept.is_empty() && nm.range().start < end {
                    inner_skipped += 1;
                    continue;
                }
                let e = nm.make_edit(&compiled.pattern, fixer);
                end = e.position + e.deleted_length;
                kept.push((e.position, e.deleted_length, e.inserted_text));
            }
            if kept.is_empty() {
                return None;
            }
            let mut new = Vec::with_capacity(text.len());
            let mut at = 0;
            for (pos, len, ins) in &kept {
                new.extend_from_slice(&text.as_bytes()[at..*pos]);
                new.extend_from_slice(ins);
                at = pos + len;
            }
            new.extend_from_slice(&text.as_bytes()[at..]);
            // Replacements are built from UTF-8 template text and slices of the UTF-8 source at
            // node boundaries, so this cannot fail; fall back to lossy decoding all the same.
            let new = String::from_utf8(new)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            let broken = if first_error(ast, text).is_none() {
                AstGrep::<StrDoc<Lang>>::try_new(&new, compiled.lang)
                    .ok()
                    .and_then(|a| first_error(&a, &new))
            } else {
                None
            };
            Some(FileRewrite {
                path: path.to_path_buf(),
                rel: relative(root, path),
                replacements: kept.len(),
                inner_skipped,
                broken,
                new,
                old: text.to_string(),
            })
        },
    );
    (per_file.into_iter().map(|(_, r)| r).collect(), stats)
}
