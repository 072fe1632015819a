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
