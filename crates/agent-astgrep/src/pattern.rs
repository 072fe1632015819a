//! Pattern compilation: the snippet is parsed by the file's grammar inside scaffolding contexts,
//! and the first context whose parse is clean and has one node spanning exactly the snippet
//! gives the pattern.

use crate::error::AstGrepError;
use crate::lang::{Context, Lang};
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Pattern};
use std::collections::BTreeSet;

/// A compiled pattern and what the search needs to know about it.
#[derive(Clone)]
pub struct Compiled {
    pub lang: Lang,
    pub pattern: Pattern,
    /// The context that accepted the snippet.
    pub context: &'static str,
    /// Identifiers the pattern contains literally: a file lacking any of them cannot match.
    pub literals: Vec<String>,
    /// Metavariable names bound by the pattern (`$X` and `$$$X`), sorted.
    pub vars: Vec<String>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("lang", &self.lang)
            .field("context", &self.context)
            .field("pattern", &self.pattern)
            .field("literals", &self.literals)
            .finish()
    }
}

/// Indent every non-empty line (for indentation-sensitive grammars).
fn indent_body(body: &str, indent: usize) -> String {
    if indent == 0 {
        return body.to_string();
    }
    let pad = " ".repeat(indent);
    body.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// 1-based line and column of byte `offset` inside `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

enum Attempt {
    Accepted(Pattern),
    Rejected(String),
}

fn try_context(lang: Lang, body: &str, ctx: &Context) -> Attempt {
    let body = indent_body(body, ctx.indent);
    let src = format!("{}{}{}{}", ctx.prefix, body, ctx.terminator, ctx.suffix);
    let start = ctx.prefix.len();
    let end = start + body.len();
    let end_term = end + ctx.terminator.len();
    let root = match AstGrep::<StrDoc<Lang>>::try_new(&src, lang) {
        Ok(r) => r,
        Err(e) => return Attempt::Rejected(format!("the parser failed: {e}")),
    };
    let top = root.root();
    if top.get_inner_node().has_error() {
        // Report the first error or missing node, relative to the snippet.
        let bad = top.dfs().find(|n| n.is_error() || n.is_missing());
        let Some(bad) = bad else {
            return Attempt::Rejected("the parse has an error".into());
        };
        let r = bad.range();
        let what = if bad.is_missing() {
            format!("missing `{}`", bad.kind())
        } else {
            let text: String = bad.text().chars().take(30).collect();
            format!("syntax error at `{}`", text.replace('\n', " "))
        };
        let location = if r.start < start {
            "in the scaffolding before the snippet".to_string()
        } else if r.start > end {
            "after the end of the snippet".to_string()
        } else {
            let (l, c) = line_col(&body, r.start - start);
            // Columns are counted in the snippet as given, not as indented.
            let c = if ctx.indent > 0 && c > ctx.indent {
                c - ctx.indent
            } else {
                c
            };
            if r.start == end {
                "at the end of the snippet".to_string()
            } else {
                format!("at line {l}, column {c} of the pattern")
            }
        };
        return Attempt::Rejected(format!("{what} {location}"));
    }
    let top_id = top.node_id();
    let mut exact = None;
    let mut with_term = None;
    for n in top.dfs() {
        if n.node_id() == top_id {
            continue;
        }
        let r = n.range();
        if r.start == start && r.end == end {
            exact = Some(n);
        } else if !ctx.terminator.is_empty() && r.start == start && r.end == end_term {
            with_term = Some(n);
        } else if r.start > end_term {
            break;
        }
    }
    match exact.or(with_term) {
        Some(node) => Attempt::Accepted(Pattern::from(node)),
        None => Attempt::Rejected(
            "parses cleanly, but no single node spans the whole snippet (several sibling nodes?)"
                .into(),
        ),
    }
}

fn collect(
    node: &PatternNode,
    expando: char,
    literals: &mut BTreeSet<String>,
    vars: &mut BTreeSet<String>,
) {
    match node {
        PatternNode::MetaVar { meta_var } => match meta_var {
            MetaVariable::Capture(name, _) | MetaVariable::MultiCapture(name) => {
                vars.insert(name.clone());
            }
            _ => {}
        },
        PatternNode::Terminal { text, is_named, .. } => {
            if *is_named
                && text.len() >= 2
                && !text.contains(expando)
                && !text.contains('$')
                && text.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                literals.insert(text.clone());
            }
        }
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect(c, expando, literals, vars);
            }
        }
    }
}

/// Compile `snippet` for `lang`.
pub fn compile(lang: Lang, snippet: &str) -> Result<Compiled, AstGrepError> {
    let trimmed = snippet.trim();
    if trimmed.is_empty() {
        return Err(AstGrepError::EmptyPattern);
    }
    let body = lang.pre_process_pattern(trimmed);
    let mut tried = Vec::new();
    for ctx in lang.contexts() {
        match try_context(lang, &body, ctx) {
            Attempt::Accepted(pattern) => {
                if let PatternNode::MetaVar {
                    meta_var: MetaVariable::MultiCapture(_) | MetaVariable::Multiple,
                } = &pattern.node
                {
                    return Err(AstGrepError::BarePattern {
                        pattern: trimmed.to_string(),
                    });
                }
                let mut literals = BTreeSet::new();
                let mut vars = BTreeSet::new();
                collect(&pattern.node, lang.expando_char(), &mut literals, &mut vars);
                return Ok(Compiled {
                    lang,
                    pattern,
                    context: ctx.name,
                    literals: literals.into_iter().collect(),
                    vars: vars.into_iter().collect(),
                });
            }
            Attempt::Rejected(why) => tried.push(format!("{}: {why}", ctx.name)),
        }
    }
    Err(AstGrepError::UnparseablePattern {
        language: lang.id(),
        pattern: trimmed.to_string(),
        tried: tried.join("\n  - "),
    })
}

#[cfg(test)]
mod probe {
    use super::*;
    #[test]
    fn probe() {
        let cases = std::env::var("PROBE").unwrap_or_default();
        for case in cases.split("|||") {
            let Some((l, p)) = case.split_once(':') else {
                continue;
            };
            let lang = Lang::from_id(l).unwrap();
            match compile(lang, p) {
                Ok(c) => eprintln!(
                    "{l} `{p}` -> {} {:?} lits={:?}",
                    c.context, c.pattern, c.literals
                ),
                Err(e) => eprintln!("{l} `{p}` -> ERR {e}"),
            }
        }
    }
}
