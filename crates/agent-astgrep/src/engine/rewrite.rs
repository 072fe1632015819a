//! A rewrite's use of the walk: each matching file's new text, the outermost of nested
//! matches replaced, and where the new text stops parsing when the old one did not.

use super::{Budget, Scope, walk};
use crate::AstGrepConfig;
use crate::cache::ParseCache;
use crate::fingerprint::Fingerprint;
use crate::lang::Lang;
use crate::pattern::Compiled;
use crate::shown::{column_of, relative};
use crate::stats::Stats;
use agent_tier::lines;
use ast_grep_core::AstGrep;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::StrDoc;
use std::path::{Path, PathBuf};

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

/// The most one file's rewritten text may hold: what the file tools change.
pub const REWRITE_FILE_CAP: u64 = 64 << 20;
/// The most the rewritten texts of one call may hold together.
pub const REWRITE_TOTAL_CAP: u64 = 256 << 20;

/// What a rewrite's size is checked against before its text is built.
#[derive(Debug, Clone, Copy)]
pub struct RewriteBound {
    /// The template's length in bytes.
    pub template_bytes: u64,
    /// How many `$` it holds: at most how many captures it repeats.
    pub template_refs: u64,
}

impl RewriteBound {
    /// The bound of `template`.
    pub fn of(template: &str) -> Self {
        RewriteBound {
            template_bytes: template.len() as u64,
            template_refs: template.matches('$').count() as u64,
        }
    }
}

/// A rewrite that would pass [`REWRITE_FILE_CAP`] or [`REWRITE_TOTAL_CAP`]: where, and how large
/// at least.
#[derive(Debug, Clone)]
pub struct TooLarge {
    /// The file's path relative to the root, or `None` for the files together.
    pub file: Option<String>,
    /// Bytes it would hold, at least.
    pub bytes: u64,
    /// The cap passed.
    pub cap: u64,
}

/// Compute the rewrite of every matching file in `scope`. Size before memory: each replacement
/// is bounded before it is built (every capture lies inside its match, so a replacement holds at
/// most the template plus, for each `$` in it, the match's length), and a file or the call whose
/// rewritten text would pass its cap ends the rewrite with [`TooLarge`].
pub fn rewrite(
    scope: &Scope,
    compiled: &Compiled,
    fixer: &TemplateFix,
    bound: RewriteBound,
    config: &AstGrepConfig,
    cache: &ParseCache,
    budget: &Budget,
) -> Result<(Vec<FileRewrite>, Stats), TooLarge> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let total = AtomicU64::new(0);
    let too_large: parking_lot::Mutex<Option<TooLarge>> = parking_lot::Mutex::new(None);
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
            if too_large.lock().is_some() {
                return None;
            }
            let text = ast.get_text();
            let over = |bytes: u64, file: bool| {
                let mut slot = too_large.lock();
                if slot.is_none() {
                    *slot = Some(TooLarge {
                        file: file.then(|| relative(root, path)),
                        bytes,
                        cap: if file {
                            REWRITE_FILE_CAP
                        } else {
                            REWRITE_TOTAL_CAP
                        },
                    });
                }
            };
            // The file's rewritten length so far (kept text plus replacements).
            let mut projected = text.len() as u64;
            // Outermost wins. The walk is pre-order (by start, an enclosing node first), so a match
            // starting inside a kept one is skipped before its replacement is ever built: over a
            // deeply nested file, every node may match.
            let mut kept: Vec<(usize, usize, Vec<u8>)> = Vec::new();
            let mut inner_skipped = 0;
            let mut end = 0usize;
            for nm in compiled.find_all(ast) {
                if !kept.is_empty() && nm.range().start < end {
                    inner_skipped += 1;
                    continue;
                }
                let matched = (nm.range().end - nm.range().start) as u64;
                let most = bound.template_bytes + bound.template_refs.saturating_mul(matched);
                if projected.saturating_add(most) > REWRITE_FILE_CAP {
                    // Built exactly only when even the bound fits; else refuse from the bound.
                    over(projected.saturating_add(most), true);
                    return None;
                }
                let e = nm.make_edit(&compiled.pattern, fixer);
                projected = projected
                    .saturating_sub(e.deleted_length as u64)
                    .saturating_add(e.inserted_text.len() as u64);
                end = e.position + e.deleted_length;
                kept.push((e.position, e.deleted_length, e.inserted_text));
            }
            if kept.is_empty() {
                return None;
            }
            let all = total.fetch_add(projected, Ordering::Relaxed) + projected;
            if all > REWRITE_TOTAL_CAP {
                over(all, false);
                return None;
            }
            let mut new = Vec::with_capacity(projected as usize);
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
    if let Some(t) = too_large.into_inner() {
        return Err(t);
    }
    Ok((per_file.into_iter().map(|(_, r)| r).collect(), stats))
}
