//! A search's use of the walk: each parsed file's matches, listed (the first `keep` of the
//! whole result, by path then position) and counted; files the run's memo of an earlier search
//! of the same pattern answers without a read; the answers remembered for the next.

use super::{Budget, Scope, walk};
use crate::AstGrepConfig;
use crate::cache::ParseCache;
use crate::fingerprint::Fingerprint;
use crate::lang::Lang;
use crate::limits::Kept;
use crate::memo::{Answer, SearchKey};
use crate::pattern::Compiled;
use crate::shown::{Match, clip, column_of, kept_capture, relative};
use crate::stats::Stats;
use agent_tier::lines;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, NodeMatch};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    let below = agent_tier::workspace::Beneath::open(root).ok();
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
        let parsed = below
            .as_ref()
            .and_then(|b| b.read_regular(&path, config.max_file_bytes + 1).ok())
            .map(|r| r.bytes)
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
    // The walk is pre-order: by start, an enclosing node before the nodes it encloses,
    // which is the order a result lists them in.
    let mut found = Vec::new();
    let mut count = 0usize;
    let mut cursor = lines::Cursor::new(text.as_bytes());
    for nm in compiled.find_all(ast) {
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
