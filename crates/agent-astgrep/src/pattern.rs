//! Pattern compilation: the snippet is parsed by the file's grammar inside scaffolding contexts,
//! and the first context whose parse is clean and has one node spanning exactly the snippet
//! gives the pattern.

use crate::error::AstGrepError;
use crate::lang::{Context, Lang};
use crate::limits;
use crate::needle::Needle;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Pattern};
use std::collections::BTreeSet;

mod find;
mod matcher;
pub use matcher::SgMatcher;

/// A compiled pattern and what the search needs to know about it.
#[derive(Clone)]
pub struct Compiled {
    pub lang: Lang,
    pub pattern: SgMatcher,
    /// The context that accepted the snippet (and any alternatives).
    pub context: String,
    /// The kind of the pattern's root node (`call`, `function_definition`, …).
    pub kind: String,
    /// Identifiers the pattern contains literally: a file lacking any of them cannot match.
    pub literals: Vec<String>,
    /// Those of the literals that are keywords of a grammar whose keywords are only ever whole
    /// words ([`crate::lang::LangSpec::keywords_whole`]): a file holds one only where no ASCII
    /// letter, digit or `_` follows it.
    pub keywords: Vec<String>,
    /// The pattern's other tokens that appear verbatim wherever it matches (operators and
    /// punctuation only ever lexed from their own spelling, `==`, `=>`): a file whose text
    /// lacks one cannot match. Not words, so never looked up in the token index.
    pub texts: Vec<String>,
    /// Metavariable names bound by the pattern (`$X` and `$$$X`), sorted.
    pub vars: Vec<String>,
    /// The snippet as given: with the language, what names this search in the run's memo.
    pub source: String,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("lang", &self.lang)
            .field("context", &self.context)
            .field("pattern", &self.pattern)
            .field("literals", &self.literals)
            .field("keywords", &self.keywords)
            .field("texts", &self.texts)
            .finish()
    }
}

impl Compiled {
    /// What a file's bytes are searched for: the pattern's words (a keyword lexed only as a
    /// whole word, as one), then its other verbatim tokens.
    pub(crate) fn needles(&self) -> (Vec<Needle>, Vec<Needle>) {
        let words = self
            .literals
            .iter()
            .map(|w| Needle::new(w, self.keywords.contains(w)))
            .collect();
        let texts = self.texts.iter().map(|t| Needle::new(t, false)).collect();
        (words, texts)
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

pub(crate) enum Attempt {
    Accepted(Pattern, String),
    Rejected(String),
    /// The context accepted the snippet, but it nests this many levels deep, past the limit.
    TooDeep(usize),
}

/// A snippet set in a context's scaffolding: the source to parse and where the snippet lies in
/// it.
pub(crate) struct Scaffolded {
    pub(crate) src: String,
    /// The snippet as indented for the context.
    pub(crate) body: String,
    pub(crate) start: usize,
    /// The snippet's first token, after the indentation the context added to its first line.
    pub(crate) first: usize,
    pub(crate) end: usize,
    /// The end with the context's terminator (`;`) after the snippet.
    pub(crate) end_term: usize,
}

impl Scaffolded {
    pub(crate) fn new(body: &str, ctx: &Context) -> Scaffolded {
        let body = indent_body(body, ctx.indent);
        let src = format!("{}{}{}{}", ctx.prefix, body, ctx.terminator, ctx.suffix);
        let start = ctx.prefix.len();
        let end = start + body.len();
        let end_term = end + ctx.terminator.len();
        let first = start + body.len() - body.trim_start_matches(' ').len();
        Scaffolded {
            src,
            body,
            start,
            first,
            end,
            end_term,
        }
    }
}

pub(crate) fn try_context(lang: Lang, body: &str, ctx: &Context) -> Attempt {
    let Scaffolded {
        src,
        body,
        start,
        first,
        end,
        end_term,
    } = Scaffolded::new(body, ctx);
    let root = match AstGrep::<StrDoc<Lang>>::try_new(&src, lang) {
        Ok(r) => r,
        Err(e) => return Attempt::Rejected(format!("the parser failed: {e}")),
    };
    let top = root.root();
    // A missing token right after a metavariable (the `;` after `$$$BODY` in a Dart block) is
    // not a broken pattern: the metavariable stands for whole statements; likewise an ERROR
    // node that holds nothing but a metavariable (Dart's `{ $$$BODY }`). Any other error or
    // missing node rejects the context.
    let tolerable = |n: &ast_grep_core::Node<'_, StrDoc<Lang>>| {
        if n.is_missing() {
            n.prev()
                .is_some_and(|p| lang.extract_meta_var(&p.text()).is_some())
        } else {
            lang.extract_meta_var(&n.text()).is_some()
        }
    };
    let bad = if top.get_inner_node().has_error() {
        top.dfs()
            .find(|n| (n.is_error() || n.is_missing()) && !tolerable(n))
    } else {
        None
    };
    if let Some(bad) = bad {
        // Report the first error or missing node, relative to the snippet.
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
        if r.start == first && r.end == end {
            exact = Some(n);
        } else if !ctx.terminator.is_empty() && r.start == first && r.end == end_term {
            with_term = Some(n);
        } else if r.start > end_term {
            break;
        }
    }
    let supplied = exact.is_none() && with_term.is_some();
    match exact.or(with_term) {
        Some(node) => {
            // Checked before the pattern is built: building, matching and dropping it recurse
            // once per level.
            let depth = limits::tree_depth(node.get_inner_node());
            if depth > limits::MAX_PATTERN_DEPTH {
                return Attempt::TooDeep(depth);
            }
            let kind = node.kind().to_string();
            let mut pattern = Pattern::from(node);
            if supplied {
                // The terminator is the context's, not the user's: drop it, so that the match
                // (and a rewrite) ends where the snippet ends and the file keeps its own `;`.
                strip_trailing(&mut pattern.node, ctx.terminator);
            }
            Attempt::Accepted(pattern, kind)
        }
        None => Attempt::Rejected(
            "parses cleanly, but no single node spans the whole snippet (several sibling nodes?)"
                .into(),
        ),
    }
}

/// Remove the last token of the pattern when it is `terminator`.
fn strip_trailing(node: &mut PatternNode, terminator: &str) -> bool {
    let PatternNode::Internal { children, .. } = node else {
        return false;
    };
    match children.last_mut() {
        Some(PatternNode::Terminal { text, .. }) if text == terminator => {
            children.pop();
            true
        }
        Some(last) => strip_trailing(last, terminator),
        None => false,
    }
}

fn is_word(text: &str) -> bool {
    text.len() >= 2 && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// What every file a pattern matches in holds: its literal words, and its other verbatim
/// tokens ([`Compiled::texts`]).
#[derive(Default)]
struct Literals {
    words: BTreeSet<String>,
    /// Of the words, the keywords lexed only as whole words.
    keywords: BTreeSet<String>,
    texts: BTreeSet<String>,
}

fn collect(lang: Lang, node: &PatternNode, literals: &mut Literals, vars: &mut BTreeSet<String>) {
    let expando = lang.expando_char();
    match node {
        PatternNode::MetaVar { meta_var } => match meta_var {
            MetaVariable::Capture(name, _) | MetaVariable::MultiCapture(name) => {
                vars.insert(name.clone());
            }
            _ => {}
        },
        PatternNode::Terminal {
            text,
            is_named,
            kind_id,
        } => {
            if text.contains(expando) || text.contains('$') {
                return;
            }
            // A named leaf matches by its text. An anonymous token matches by kind (whatever
            // its text: ast-grep-core's work-around for spans tree-sitter gets wrong); a token
            // whose kind is its own spelling, and that no other text is lexed as, appears
            // verbatim wherever it matches.
            let verbatim = !*is_named
                && lang.ts_language().node_kind_for_id(*kind_id) == Some(text.as_str())
                && lang.spelled_as_written(text);
            if is_word(text) {
                if *is_named || verbatim {
                    literals.words.insert(text.clone());
                }
                if verbatim && lang.keywords_whole() {
                    literals.keywords.insert(text.clone());
                }
            } else if verbatim && !text.is_empty() && !text.contains(char::is_whitespace) {
                literals.texts.insert(text.clone());
            }
        }
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect(lang, c, literals, vars);
            }
        }
    }
}

/// Whether a node kind declares a function or method, which other contexts may declare differently (a
/// Dart function in a block is a local function; in a class body, a method).
fn is_declaration(kind: &str) -> bool {
    ["function", "method", "constructor"]
        .iter()
        .any(|k| kind.contains(k))
        && !kind.contains("call")
        && !kind.contains("expression")
}

/// Compile `snippet` for `lang`: the first context that accepts it gives the pattern. When that
/// pattern is a declaration, later contexts that accept the snippet as a declaration of another
/// kind are matched too, so `void $NAME() { $$$BODY }` finds both local functions and methods.
pub fn compile(lang: Lang, snippet: &str) -> Result<Compiled, AstGrepError> {
    let trimmed = snippet.trim();
    if trimmed.is_empty() {
        return Err(AstGrepError::EmptyPattern);
    }
    let body = lang.pre_process_pattern(trimmed);
    let mut tried = Vec::new();
    let mut accepted: Vec<(&'static str, Pattern, String)> = Vec::new();
    for ctx in lang.contexts() {
        match try_context(lang, &body, ctx) {
            Attempt::Accepted(pattern, kind) => {
                let Some((_, _, first_kind)) = accepted.first() else {
                    let declaration = is_declaration(&kind);
                    accepted.push((ctx.name, pattern, kind));
                    if declaration {
                        continue;
                    }
                    break;
                };
                if is_declaration(&kind)
                    && *first_kind != kind
                    && !accepted.iter().any(|(_, _, k)| *k == kind)
                {
                    accepted.push((ctx.name, pattern, kind));
                }
            }
            Attempt::TooDeep(depth) => {
                return Err(AstGrepError::PatternTooDeep {
                    language: lang.id(),
                    depth,
                    limit: limits::MAX_PATTERN_DEPTH,
                });
            }
            Attempt::Rejected(why) => {
                if accepted.is_empty() {
                    tried.push(format!("{}: {why}", ctx.name));
                }
            }
        }
    }
    if accepted.is_empty() {
        return Err(AstGrepError::UnparseablePattern {
            language: lang.id(),
            pattern: trimmed.to_string(),
            tried: tried.join("\n  - "),
        });
    }
    let first = &accepted[0].1;
    if let PatternNode::MetaVar {
        meta_var: MetaVariable::MultiCapture(_) | MetaVariable::Multiple,
    } = &first.node
    {
        return Err(AstGrepError::BarePattern {
            pattern: trimmed.to_string(),
        });
    }
    // A file can match if it matches any alternative: keep the literals they all share.
    let mut literals: Option<Literals> = None;
    let mut vars = BTreeSet::new();
    for (_, p, _) in &accepted {
        let mut lits = Literals::default();
        collect(lang, &p.node, &mut lits, &mut vars);
        literals = Some(match literals {
            None => lits,
            Some(prev) => Literals {
                words: prev.words.intersection(&lits.words).cloned().collect(),
                keywords: prev
                    .keywords
                    .intersection(&lits.keywords)
                    .cloned()
                    .collect(),
                texts: prev.texts.intersection(&lits.texts).cloned().collect(),
            },
        });
    }
    let literals = literals.unwrap_or_default();
    let context = if accepted.len() == 1 {
        accepted[0].0.to_string()
    } else {
        let others: Vec<&str> = accepted[1..].iter().map(|(n, _, _)| *n).collect();
        format!("{} (also as {})", accepted[0].0, others.join(", "))
    };
    let kind = accepted[0].2.clone();
    Ok(Compiled {
        lang,
        kind,
        pattern: SgMatcher::new(
            accepted.into_iter().map(|(_, p, _)| p),
            lang.comment_kinds(),
        ),
        context,
        literals: literals.words.into_iter().collect(),
        keywords: literals.keywords.into_iter().collect(),
        texts: literals.texts.into_iter().collect(),
        vars: vars.into_iter().collect(),
        source: snippet.to_string(),
    })
}

/// The metavariables written in `text` (as `$NAME`) that `compiled` does not bind: the grammar
/// read them as part of a token, identifier or string (`foo($A$B)`), so they can never bind.
pub fn swallowed_metavars(text: &str, compiled: &Compiled) -> Vec<String> {
    written_metavars(text)
        .into_iter()
        .filter(|v| !compiled.vars.contains(v))
        .map(|v| format!("${v}"))
        .collect()
}

/// The capturing metavariable names written in `text` (`$X`, `$$X`, `$$$X`; not `$_…`), in
/// order of first appearance.
pub fn written_metavars(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && bytes[j] == b'$' && j - i < 3 {
            j += 1;
        }
        let start = j;
        while j < bytes.len()
            && (bytes[j].is_ascii_uppercase() || bytes[j].is_ascii_digit() || bytes[j] == b'_')
        {
            j += 1;
        }
        let name = &text[start..j];
        if name.starts_with(|c: char| c.is_ascii_uppercase()) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn words_go_to_the_index_and_other_verbatim_tokens_to_the_byte_prefilter() {
        let c = compile(Lang::Python, "$A == $A").unwrap();
        assert!(c.literals.is_empty(), "{:?}", c.literals);
        assert_eq!(c.texts, ["=="]);
        let c = compile(Lang::JavaScript, "typeof $X === $Y").unwrap();
        assert_eq!(c.literals, ["typeof"]);
        assert_eq!(c.texts, ["==="]);
        let c = compile(Lang::Rust, "$E.unwrap()").unwrap();
        assert_eq!(c.literals, ["unwrap"]);
        assert_eq!(c.texts, ["(", ")", "."]);
        // A directive C lexes from `#  define`, and a keyword Kotlin's scanner emits: neither.
        let c = compile(Lang::C, "#define $N 1").unwrap();
        assert!(c.texts.iter().all(|t| !t.starts_with('#')), "{:?}", c.texts);
        let c = compile(Lang::Kotlin, "for ($X in $Y) { $$$B }").unwrap();
        assert!(!c.literals.iter().any(|l| l == "in"), "{:?}", c.literals);
        assert!(c.literals.iter().any(|l| l == "for"), "{:?}", c.literals);
        // Python's `not in` is an alias of a rule that allows any spacing; its two keywords
        // are tokens of their own, each spelled as written.
        let c = compile(Lang::Python, "$A not in $B").unwrap();
        assert_eq!(c.literals, ["in", "not"]);
        assert!(c.texts.is_empty(), "{c:?}");
    }

    #[test]
    fn keywords_of_a_grammar_that_extracts_them_are_whole_words() {
        let c = compile(Lang::Python, "raise $E($$$ARGS)").unwrap();
        assert_eq!(c.literals, ["raise"]);
        assert_eq!(c.keywords, ["raise"]);
        // An identifier is matched by its text, not lexed as a keyword.
        let c = compile(Lang::Python, "isinstance($X, $T)").unwrap();
        assert_eq!(c.literals, ["isinstance"]);
        assert!(c.keywords.is_empty(), "{c:?}");
        let c = compile(Lang::Rust, "impl $T for $U { $$$ }").unwrap();
        assert_eq!(c.keywords, ["for", "impl"]);
        // Swift's main lexer reads keywords itself: `break` may end inside `breakpoint`.
        let c = compile(Lang::Swift, "break").unwrap();
        assert!(c.keywords.is_empty(), "{c:?}");
    }
}
