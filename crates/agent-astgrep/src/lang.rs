//! The bundled grammars as data: each language is one entry of the table in `lang/table.rs`
//! ([`LangSpec`]: its id and aliases, file extensions, tree-sitter grammar, metavariable
//! spelling, identifier and comment kinds, the language server family its files belong to, and
//! the scaffolding contexts in which a pattern snippet is parsed). Everything here reads the
//! table; nothing names a language.

use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};
use ast_grep_core::{Language, Pattern, PatternError};
use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

mod table;

pub use table::Lang;
use table::TABLE;

/// Where a pattern snippet is placed to be parsed: `prefix`, the snippet (indented by `indent`
/// spaces on every line when the grammar is indentation-sensitive), then `terminator` (a token
/// the context supplies, such as the `;` a statement needs) and `suffix`.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub name: &'static str,
    pub prefix: &'static str,
    pub suffix: &'static str,
    pub terminator: &'static str,
    pub indent: usize,
    /// A snippet this context parses (the table's tests parse each in its context).
    pub sample: &'static str,
}

/// A context that adds nothing around the snippet but `prefix` and `suffix`.
const fn cx(
    name: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    sample: &'static str,
) -> Context {
    Context {
        name,
        prefix,
        suffix,
        terminator: "",
        indent: 0,
        sample,
    }
}

/// A context that supplies the `;` that ends the snippet.
const fn term(
    name: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    sample: &'static str,
) -> Context {
    Context {
        terminator: ";",
        ..cx(name, prefix, suffix, sample)
    }
}

/// A context whose body is indented four spaces (an indentation-sensitive grammar).
const fn ind(
    name: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    sample: &'static str,
) -> Context {
    Context {
        indent: 4,
        ..cx(name, prefix, suffix, sample)
    }
}

/// How a pattern's metavariables are written while the grammar parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metavars {
    /// `$` starts an identifier in this grammar: the pattern is parsed as written.
    Dollar,
    /// `$` cannot start an identifier: it stands as this character while the pattern is parsed
    /// (`$X` → `µX`).
    Expando(char),
    /// No identifier can stand where a value goes (JSON, TOML): a metavariable is parsed as a
    /// string, `$X` as `"$X"`, and the quotes are stripped again when it is recognised.
    Quoted,
}

/// One language: everything the crate knows of it. Adding a language is one entry of the
/// table (`lang/table.rs`), which also declares its [`Lang`] variant.
#[derive(Debug, Clone, Copy)]
pub struct LangSpec {
    /// The id used in arguments and messages.
    pub id: &'static str,
    /// Other names accepted for `language` (matched case-insensitively, like the id).
    pub aliases: &'static [&'static str],
    /// File extensions (without the dot, lowercase) searched for this language.
    pub extensions: &'static [&'static str],
    /// The tree-sitter grammar, statically linked.
    pub grammar: fn() -> TSLanguage,
    /// The grammar's tags queries (its `queries/tags.scm`, TypeScript's after JavaScript's, as
    /// tree-sitter combines them): where its definitions and their names are. Empty: none.
    pub tags: &'static [&'static str],
    /// How metavariables are spelled while the grammar parses a pattern.
    pub metavars: Metavars,
    /// Whether anonymous keyword tokens always appear in the source as written (no
    /// case-insensitive keywords), so that a keyword of a pattern can prefilter files.
    pub keywords_literal: bool,
    /// The anonymous kinds a token of other text can carry, read from the grammar's
    /// `grammar.json`: an alias of another rule (C's `#define` is lexed from `#  define`) or a
    /// token an external scanner emits. The other anonymous kinds are only ever lexed from
    /// their own spelling, so where keywords are literal, such a token of a pattern appears
    /// verbatim in every file it matches in, and prefilters files; these never do.
    pub lexed_otherwise: &'static [&'static str],
    /// Whether every keyword is lexed by keyword extraction: the grammar's `grammar.json` names
    /// a `word` token whose pattern continues over every ASCII letter, digit and `_`, and its
    /// `parser.c` accepts no word-shaped anonymous token outside `ts_lex_keywords`. The lexer
    /// then reads a whole run of the word token before it asks whether it is a keyword, so a
    /// keyword token is never followed by one of those bytes, and an occurrence of a keyword's
    /// spelling that is (`raise` in `raised`) does not admit a file (`needle.rs`). Read from each
    /// bundled grammar's sources; false where a grammar has no `word` (Swift, CSS) or lexes
    /// some keywords in its main lexer (Kotlin, Dart, Ruby's `BEGIN`, Bash's `in`).
    pub keywords_whole: bool,
    /// The named node kinds whose leaves are identifier tokens (what the identifier witness
    /// reports): never a string or a comment.
    pub identifier_kinds: &'static [&'static str],
    /// The named node kinds of comments (left out when two captures are compared).
    pub comment_kinds: &'static [&'static str],
    /// The grammars whose files one language server serves together (the witness's search);
    /// empty: no language server, no identifiers to witness.
    pub server_family: &'static [Lang],
    /// The scaffolding contexts tried in order for a pattern snippet.
    pub contexts: &'static [Context],
}

/// Whether id `a` sorts before id `b` (bytewise), at compile time.
const fn sorts_before(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

/// The table's languages ordered by id.
const fn by_id() -> [Lang; TABLE.len()] {
    let mut all = [TABLE[0].0; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        all[i] = TABLE[i].0;
        i += 1;
    }
    // Insertion sort: 22 entries, once, at compile time.
    let mut i = 1;
    while i < all.len() {
        let mut j = i;
        while j > 0 && sorts_before(TABLE[all[j] as usize].1.id, TABLE[all[j - 1] as usize].1.id) {
            let t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    all
}

impl Lang {
    /// Every bundled grammar, in the order ids are listed in messages (by id).
    pub const ALL: [Lang; TABLE.len()] = by_id();

    /// This language's entry of the table.
    pub(crate) fn spec(self) -> &'static LangSpec {
        // The table lists the variants in their declared order (one macro writes both).
        &TABLE[self as usize].1
    }

    /// The id used in arguments and messages.
    pub fn id(self) -> &'static str {
        self.spec().id
    }

    /// Aliases accepted besides the id.
    pub fn aliases(self) -> &'static [&'static str] {
        self.spec().aliases
    }

    /// Every id, comma-separated, for messages.
    pub fn ids() -> String {
        Lang::ALL.map(Lang::id).join(", ")
    }

    /// Look up an id or alias (case-insensitive).
    pub fn from_id(s: &str) -> Option<Lang> {
        let s = s.trim().to_ascii_lowercase();
        Lang::ALL
            .into_iter()
            .find(|l| l.id() == s || l.aliases().contains(&s.as_str()))
    }

    /// File extensions (without the dot) searched for this language.
    pub fn extensions(self) -> &'static [&'static str] {
        self.spec().extensions
    }

    /// The language of a file, from its extension.
    pub fn from_file(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Lang::ALL
            .into_iter()
            .find(|l| l.extensions().contains(&ext.as_str()))
    }

    /// Whether a file of this name belongs to this language.
    pub fn owns(self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions().iter().any(|x| x.eq_ignore_ascii_case(e)))
    }

    /// The tree-sitter grammar (built once per process).
    pub fn ts_language(self) -> TSLanguage {
        static CACHE: OnceLock<Vec<TSLanguage>> = OnceLock::new();
        let all = CACHE.get_or_init(|| TABLE.iter().map(|(_, spec)| (spec.grammar)()).collect());
        all[self as usize].clone()
    }

    /// The character that stands for `$` while the pattern is parsed.
    fn expando(self) -> char {
        match self.spec().metavars {
            Metavars::Expando(c) => c,
            Metavars::Dollar | Metavars::Quoted => '$',
        }
    }

    /// The scaffolding contexts tried in order for a pattern snippet.
    pub fn contexts(self) -> &'static [Context] {
        self.spec().contexts
    }

    /// Whether an anonymous token of kind `kind`, spelled as its kind, appears in a matching
    /// file as written: keywords are literal in the language, and no other text is lexed as
    /// that kind.
    pub(crate) fn spelled_as_written(self, kind: &str) -> bool {
        self.spec().keywords_literal && !self.spec().lexed_otherwise.contains(&kind)
    }

    /// Whether this grammar's keywords are only ever whole words ([`LangSpec::keywords_whole`]).
    pub(crate) fn keywords_whole(self) -> bool {
        self.spec().keywords_whole
    }

    /// Whether a named leaf of this kind is an identifier token.
    pub(crate) fn is_identifier_kind(self, kind: &str) -> bool {
        self.spec().identifier_kinds.contains(&kind)
    }

    /// The named node kinds of this grammar's comments.
    pub(crate) fn comment_kinds(self) -> &'static [&'static str] {
        self.spec().comment_kinds
    }

    /// The grammars whose files one language server serves together with this one's; empty
    /// when no language server serves it.
    pub(crate) fn server_family(self) -> &'static [Lang] {
        self.spec().server_family
    }
}

/// Replace the `$` of metavariables with the grammar's expando character.
pub fn expand_metavars(expando: char, query: &str) -> String {
    if expando == '$' {
        return query.to_string();
    }
    let mut ret = String::with_capacity(query.len());
    let mut dollars = 0usize;
    for c in query.chars() {
        if c == '$' {
            dollars += 1;
            continue;
        }
        let replace = matches!(c, 'A'..='Z' | '_') || dollars == 3;
        let sigil = if replace { expando } else { '$' };
        ret.extend(std::iter::repeat_n(sigil, dollars));
        dollars = 0;
        ret.push(c);
    }
    let sigil = if dollars == 3 { expando } else { '$' };
    ret.extend(std::iter::repeat_n(sigil, dollars));
    ret
}

/// In JSON and TOML no identifier can stand where a value goes, so a metavariable is parsed as
/// a string: `$X` becomes `"$X"` (and the quotes are stripped again when it is recognised).
fn quote_metavars(query: &str) -> String {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' && (i == 0 || chars[i - 1] != '"') {
            let mut j = i;
            while j < chars.len() && chars[j] == '$' && j - i < 3 {
                j += 1;
            }
            let name_start = j;
            while j < chars.len()
                && (chars[j].is_ascii_uppercase() || chars[j] == '_' || chars[j].is_ascii_digit())
            {
                j += 1;
            }
            let valid = j > name_start && !chars[name_start].is_ascii_digit()
                || (j - i == 3 && j == name_start);
            if valid {
                out.push('"');
                out.extend(&chars[i..j]);
                out.push('"');
                i = j;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Recognise `$A`, `$$A` (unnamed nodes too), `$_`, `$$$` and `$$$A` written with `sigil`
/// (the same rules as ast-grep-core, whose own function is private).
fn parse_meta_var(src: &str, sigil: char) -> Option<MetaVariable> {
    let first = |c: char| c.is_ascii_uppercase() || c == '_';
    let rest = |c: char| first(c) || c.is_ascii_digit();
    let ellipsis: String = std::iter::repeat_n(sigil, 3).collect();
    if src == ellipsis {
        return Some(MetaVariable::Multiple);
    }
    if let Some(name) = src.strip_prefix(&ellipsis) {
        if !name.starts_with(first) || !name.chars().all(rest) {
            return None;
        }
        return Some(if name.starts_with('_') {
            MetaVariable::Multiple
        } else {
            MetaVariable::MultiCapture(name.to_string())
        });
    }
    let name = src.strip_prefix(sigil)?;
    let (name, named) = match name.strip_prefix(sigil) {
        Some(n) => (n, false),
        None => (name, true),
    };
    if !name.starts_with(first) || !name.chars().all(rest) {
        return None;
    }
    Some(if name.starts_with('_') {
        MetaVariable::Dropped(named)
    } else {
        MetaVariable::Capture(name.to_string(), named)
    })
}

impl Language for Lang {
    fn extract_meta_var(&self, source: &str) -> Option<MetaVariable> {
        let source = match self.spec().metavars {
            Metavars::Quoted => source
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(source),
            Metavars::Dollar | Metavars::Expando(_) => source,
        };
        parse_meta_var(source, self.expando_char())
    }

    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self.spec().metavars {
            Metavars::Quoted => Cow::Owned(quote_metavars(query)),
            Metavars::Expando(c) => Cow::Owned(expand_metavars(c, query)),
            Metavars::Dollar => Cow::Borrowed(query),
        }
    }

    fn expando_char(&self) -> char {
        self.expando()
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::from_file(path.as_ref())
    }

    fn kind_to_id(&self, kind: &str) -> u16 {
        self.ts_language().id_for_node_kind(kind, true)
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.ts_language().field_id_for_name(field).map(|f| f.get())
    }

    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        self.ts_language()
    }
}

#[cfg(test)]
mod tests;
