//! The bundled grammars: ids, aliases, file extensions, metavariable expando characters, and
//! the scaffolding contexts in which a pattern snippet is parsed.

use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};
use ast_grep_core::{Language, Pattern, PatternError};
use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

/// One bundled grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Lang {
    /// Dart.
    Dart,
    /// Python.
    Python,
    /// Rust.
    Rust,
    /// C.
    C,
    /// C++.
    Cpp,
    /// Go.
    Go,
    /// Java.
    Java,
    /// JavaScript, JSX included.
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// JSON.
    Json,
    /// Bash.
    Bash,
    /// Ruby.
    Ruby,
    /// Kotlin.
    Kotlin,
    /// Swift.
    Swift,
    /// C#.
    CSharp,
    /// PHP.
    Php,
    /// Lua.
    Lua,
    /// YAML.
    Yaml,
    /// TOML.
    Toml,
    /// HTML.
    Html,
    /// CSS.
    Css,
}

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
}

const fn cx(name: &'static str, prefix: &'static str, suffix: &'static str) -> Context {
    Context {
        name,
        prefix,
        suffix,
        terminator: "",
        indent: 0,
    }
}

const fn term(name: &'static str, prefix: &'static str, suffix: &'static str) -> Context {
    Context {
        name,
        prefix,
        suffix,
        terminator: ";",
        indent: 0,
    }
}

const fn ind(name: &'static str, prefix: &'static str, suffix: &'static str) -> Context {
    Context {
        name,
        prefix,
        suffix,
        terminator: "",
        indent: 4,
    }
}

impl Lang {
    /// Every bundled grammar, in the order ids are listed in messages.
    pub const ALL: [Lang; 22] = [
        Lang::Bash,
        Lang::C,
        Lang::CSharp,
        Lang::Cpp,
        Lang::Css,
        Lang::Dart,
        Lang::Go,
        Lang::Html,
        Lang::Java,
        Lang::JavaScript,
        Lang::Json,
        Lang::Kotlin,
        Lang::Lua,
        Lang::Php,
        Lang::Python,
        Lang::Ruby,
        Lang::Rust,
        Lang::Swift,
        Lang::Toml,
        Lang::Tsx,
        Lang::TypeScript,
        Lang::Yaml,
    ];

    /// The id used in arguments and messages.
    pub fn id(self) -> &'static str {
        match self {
            Lang::Dart => "dart",
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Json => "json",
            Lang::Bash => "bash",
            Lang::Ruby => "ruby",
            Lang::Kotlin => "kotlin",
            Lang::Swift => "swift",
            Lang::CSharp => "c_sharp",
            Lang::Php => "php",
            Lang::Lua => "lua",
            Lang::Yaml => "yaml",
            Lang::Toml => "toml",
            Lang::Html => "html",
            Lang::Css => "css",
        }
    }

    /// Aliases accepted besides the id.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["py"],
            Lang::Rust => &["rs"],
            Lang::Cpp => &["c++", "cxx"],
            Lang::Go => &["golang"],
            Lang::JavaScript => &["js", "jsx"],
            Lang::TypeScript => &["ts"],
            Lang::Bash => &["sh", "shell"],
            Lang::Ruby => &["rb"],
            Lang::Kotlin => &["kt"],
            Lang::CSharp => &["cs", "c#", "csharp", "c-sharp"],
            Lang::Yaml => &["yml"],
            _ => &[],
        }
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
        match self {
            Lang::Dart => &["dart"],
            Lang::Python => &["py", "pyi"],
            Lang::Rust => &["rs"],
            Lang::C => &["c", "h"],
            Lang::Cpp => &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp"],
            Lang::Go => &["go"],
            Lang::Java => &["java"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::Json => &["json"],
            Lang::Bash => &["sh", "bash"],
            Lang::Ruby => &["rb", "rake", "gemspec"],
            Lang::Kotlin => &["kt", "kts"],
            Lang::Swift => &["swift"],
            Lang::CSharp => &["cs"],
            Lang::Php => &["php"],
            Lang::Lua => &["lua"],
            Lang::Yaml => &["yaml", "yml"],
            Lang::Toml => &["toml"],
            Lang::Html => &["html", "htm"],
            Lang::Css => &["css"],
        }
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

    fn ts_language_uncached(self) -> TSLanguage {
        match self {
            Lang::Dart => tree_sitter_dart::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Json => tree_sitter_json::LANGUAGE.into(),
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
            Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Lang::Swift => tree_sitter_swift::LANGUAGE.into(),
            Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Lang::Lua => tree_sitter_lua::LANGUAGE.into(),
            Lang::Yaml => tree_sitter_yaml::LANGUAGE.into(),
            Lang::Toml => tree_sitter_toml_ng::LANGUAGE.into(),
            Lang::Html => tree_sitter_html::LANGUAGE.into(),
            Lang::Css => tree_sitter_css::LANGUAGE.into(),
        }
    }

    /// The tree-sitter grammar (built once per process).
    pub fn ts_language(self) -> TSLanguage {
        static CACHE: OnceLock<Vec<TSLanguage>> = OnceLock::new();
        let all =
            CACHE.get_or_init(|| Lang::ALL.iter().map(|l| l.ts_language_uncached()).collect());
        match Lang::ALL.iter().position(|l| *l == self) {
            Some(i) => all[i].clone(),
            None => self.ts_language_uncached(),
        }
    }

    /// The character that stands for `$` while the pattern is parsed, in grammars where `$`
    /// cannot start an identifier.
    fn expando(self) -> char {
        match self {
            Lang::Python
            | Lang::Rust
            | Lang::C
            | Lang::Cpp
            | Lang::Go
            | Lang::Ruby
            | Lang::Kotlin
            | Lang::Swift
            | Lang::CSharp
            | Lang::Php
            | Lang::Lua => 'µ',
            Lang::Css => '_',
            Lang::Html => 'z',
            _ => '$',
        }
    }

    /// The scaffolding contexts tried in order for a pattern snippet.
    pub fn contexts(self) -> &'static [Context] {
        match self {
            Lang::Dart => {
                const C: &[Context] = &[
                    cx("statement", "void __sg_f() {\n", "\n}"),
                    term("statement (`;` supplied)", "void __sg_f() {\n", "\n}"),
                    cx("expression", "var __sg_v = ", ";"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    term("class member (`;` supplied)", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Python => {
                const C: &[Context] = &[
                    cx("statement", "", ""),
                    cx("expression", "__sg_v = ", ""),
                    ind("class member", "class __SgC:\n", ""),
                    ind("function body", "def __sg_f():\n", ""),
                ];
                C
            }
            Lang::Rust => {
                const C: &[Context] = &[
                    cx("statement", "fn __sg_f() {\n", "\n}"),
                    term("statement (`;` supplied)", "fn __sg_f() {\n", "\n}"),
                    cx("expression", "fn __sg_f() {\nlet _ = ", ";\n}"),
                    cx("impl member", "impl __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                    cx("match arm", "fn __sg_f() {\nmatch __sg_v {\n", "\n}\n}"),
                ];
                C
            }
            Lang::C => {
                const C: &[Context] = &[
                    cx("statement", "void __sg_f(void) {\n", "\n}"),
                    term("statement (`;` supplied)", "void __sg_f(void) {\n", "\n}"),
                    cx("expression", "void __sg_f(void) {\n__sg_v = ", ";\n}"),
                    cx("struct member", "struct __SgC {\n", "\n};"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Cpp => {
                const C: &[Context] = &[
                    cx("statement", "void __sg_f() {\n", "\n}"),
                    term("statement (`;` supplied)", "void __sg_f() {\n", "\n}"),
                    cx("expression", "void __sg_f() {\n__sg_v = ", ";\n}"),
                    cx("class member", "class __SgC {\n", "\n};"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Go => {
                const C: &[Context] = &[
                    cx("statement", "package main\nfunc __sg_f() {\n", "\n}"),
                    cx("expression", "package main\nvar __sg_v = ", "\n"),
                    cx(
                        "struct member",
                        "package main\ntype __SgC struct {\n",
                        "\n}",
                    ),
                    cx("declaration", "package main\n", "\n"),
                ];
                C
            }
            Lang::Java => {
                const C: &[Context] = &[
                    cx("statement", "class __SgC { void __sg_f() {\n", "\n} }"),
                    term(
                        "statement (`;` supplied)",
                        "class __SgC { void __sg_f() {\n",
                        "\n} }",
                    ),
                    cx("expression", "class __SgC { Object __sg_v = ", "; }"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                const C: &[Context] = &[
                    cx("statement", "", ""),
                    cx("expression", "__sg_v = ", ";"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Json => {
                const C: &[Context] = &[cx("value", "", ""), cx("object member", "{", "}")];
                C
            }
            Lang::Bash => {
                const C: &[Context] = &[
                    cx("statement", "", ""),
                    cx("function body", "__sg_f() {\n", "\n}"),
                    cx("command substitution", "echo $(", ")"),
                ];
                C
            }
            Lang::Ruby => {
                const C: &[Context] = &[
                    cx("statement", "", ""),
                    cx("expression", "__sg_v = ", ""),
                    cx("method body", "def __sg_f\n", "\nend"),
                    cx("class member", "class SgC\n", "\nend"),
                ];
                C
            }
            Lang::Kotlin => {
                const C: &[Context] = &[
                    cx("statement", "fun __sg_f() {\n", "\n}"),
                    cx("expression", "val __sg_v = ", "\n"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Swift => {
                const C: &[Context] = &[
                    cx("statement", "func __sg_f() {\n", "\n}"),
                    cx("expression", "let __sg_v = ", "\n"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::CSharp => {
                const C: &[Context] = &[
                    cx("statement", "class __SgC { void __sg_f() {\n", "\n} }"),
                    term(
                        "statement (`;` supplied)",
                        "class __SgC { void __sg_f() {\n",
                        "\n} }",
                    ),
                    cx("expression", "class __SgC { object __sg_v = ", "; }"),
                    cx("class member", "class __SgC {\n", "\n}"),
                    cx("declaration", "", ""),
                ];
                C
            }
            Lang::Php => {
                const C: &[Context] = &[
                    cx("statement", "<?php\n", ""),
                    term("statement (`;` supplied)", "<?php\n", ""),
                    cx("expression", "<?php\n$__sg_v = ", ";"),
                    cx("class member", "<?php\nclass __SgC {\n", "\n}"),
                ];
                C
            }
            Lang::Lua => {
                const C: &[Context] = &[
                    cx("statement", "", ""),
                    cx("expression", "local __sg_v = ", ""),
                    cx("table field", "local __sg_v = {\n", "\n}"),
                    cx("function body", "function __sg_f()\n", "\nend"),
                ];
                C
            }
            Lang::Yaml => {
                const C: &[Context] = &[cx("document", "", "")];
                C
            }
            Lang::Toml => {
                const C: &[Context] = &[cx("document", "", ""), cx("value", "__sg_k = ", "")];
                C
            }
            Lang::Html => {
                const C: &[Context] = &[cx("document", "", "")];
                C
            }
            Lang::Css => {
                const C: &[Context] = &[
                    cx("stylesheet", "", ""),
                    cx("declaration", "__sg_c {\n", "\n}"),
                ];
                C
            }
        }
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
        let source = match self {
            Lang::Json | Lang::Toml => source
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(source),
            _ => source,
        };
        parse_meta_var(source, self.expando_char())
    }

    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        if matches!(self, Lang::Json | Lang::Toml) {
            return Cow::Owned(quote_metavars(query));
        }
        if self.expando() == '$' {
            Cow::Borrowed(query)
        } else {
            Cow::Owned(expand_metavars(self.expando(), query))
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
