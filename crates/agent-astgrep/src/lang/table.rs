//! The grammar table: one entry per language, which declares its [`Lang`] variant and its
//! [`LangSpec`]. Adding a language is one entry here (and its grammar crate in Cargo.toml);
//! `lang/tests.rs` checks that every context parses its sample and that no two entries claim
//! the same name or extension.
//!
//! The entries are in the variants' declared order (which `Ord` on [`Lang`] follows);
//! [`Lang::ALL`] lists them by id.

use super::{Context, LangSpec, Metavars, cx, ind, term};

/// Declares [`Lang`] and [`TABLE`] from one list, so that neither can miss an entry and
/// `TABLE[lang as usize]` is `lang`'s.
macro_rules! languages {
    ($($(#[doc = $doc:literal])* $lang:ident => $spec:expr,)*) => {
        /// One bundled grammar.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Lang {
            $($(#[doc = $doc])* $lang,)*
        }

        /// Every language and its entry, in the variants' order.
        pub(super) const TABLE: &[(Lang, LangSpec)] = &[$((Lang::$lang, $spec),)*];
    };
}

/// JavaScript, TypeScript and TSX: one language server serves them together.
const JS_FAMILY: &[Lang] = &[Lang::TypeScript, Lang::Tsx, Lang::JavaScript];

/// C and C++: one language server serves them together.
const C_FAMILY: &[Lang] = &[Lang::C, Lang::Cpp];

/// JavaScript, TypeScript and TSX take a pattern in the same contexts.
const JS_CONTEXTS: &[Context] = &[
    cx("statement", "", "", "foo(x);"),
    cx("expression", "__sg_v = ", ";", "a + b"),
    cx("class member", "class __SgC {\n", "\n}", "m() {}"),
    cx("declaration", "", "", "function f() {}"),
];

/// The identifier kinds of JavaScript.
const JS_IDENTIFIERS: &[&str] = &[
    "identifier",
    "private_property_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "statement_identifier",
];

/// The identifier kinds of TypeScript and TSX.
const TS_IDENTIFIERS: &[&str] = &[
    "identifier",
    "private_property_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "statement_identifier",
    "type_identifier",
];

languages! {
    /// Dart.
    Dart => LangSpec {
        id: "dart",
        aliases: &[],
        extensions: &["dart"],
        grammar: || tree_sitter_dart::LANGUAGE.into(),
        tags: &[tree_sitter_dart::TAGS_QUERY],
        metavars: Metavars::Dollar,
        keywords_literal: true,
        keywords_whole: false,
        lexed_otherwise: &["(", ">"],
        identifier_kinds: &["identifier", "type_identifier"],
        comment_kinds: &[
            "block_comment",
            "comment",
            "documentation_block_comment",
            "documentation_comment",
        ],
        server_family: &[Lang::Dart],
        contexts: &[
            cx("statement", "void __sg_f() {\n", "\n}", "print(x);"),
            term("statement (`;` supplied)", "void __sg_f() {\n", "\n}", "print(x)"),
            cx("expression", "var __sg_v = ", ";", "a + b"),
            cx("class member", "class __SgC {\n", "\n}", "int x = 1;"),
            term("class member (`;` supplied)", "class __SgC {\n", "\n}", "int x = 1"),
            cx("declaration", "", "", "void main() {}"),
        ],
    },
    /// Python.
    Python => LangSpec {
        id: "python",
        aliases: &["py"],
        extensions: &["py", "pyi"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        tags: &[tree_sitter_python::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[")", "]", "except", "is not", "not in", "}"],
        identifier_kinds: &["identifier"],
        comment_kinds: &["comment"],
        server_family: &[Lang::Python],
        contexts: &[
            cx("statement", "", "", "print(x)"),
            cx("expression", "__sg_v = ", "", "a + b"),
            ind("class member", "class __SgC:\n", "", "def f(self):\n    pass"),
            ind("function body", "def __sg_f():\n", "", "return x"),
        ],
    },
    /// Rust.
    Rust => LangSpec {
        id: "rust",
        aliases: &["rs"],
        extensions: &["rs"],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        tags: &[tree_sitter_rust::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &["\""],
        identifier_kinds: &[
            "field_identifier",
            "identifier",
            "shorthand_field_identifier",
            "type_identifier",
        ],
        comment_kinds: &[
            "block_comment",
            "doc_comment",
            "inner_doc_comment_marker",
            "line_comment",
            "outer_doc_comment_marker",
        ],
        server_family: &[Lang::Rust],
        contexts: &[
            cx("statement", "fn __sg_f() {\n", "\n}", "let x = 1;"),
            term("statement (`;` supplied)", "fn __sg_f() {\n", "\n}", "let x = 1"),
            cx("expression", "fn __sg_f() {\nlet _ = ", ";\n}", "a + b"),
            cx("impl member", "impl __SgC {\n", "\n}", "fn f(&self) {}"),
            cx("declaration", "", "", "struct S;"),
            cx("match arm", "fn __sg_f() {\nmatch __sg_v {\n", "\n}\n}", "Some(x) => x,"),
        ],
    },
    /// C.
    C => LangSpec {
        id: "c",
        aliases: &[],
        extensions: &["c", "h"],
        grammar: || tree_sitter_c::LANGUAGE.into(),
        tags: &[tree_sitter_c::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[
            "#define", "#elif", "#elifdef", "#elifndef", "#else", "#endif", "#if", "#ifdef",
            "#ifndef", "#include",
        ],
        identifier_kinds: &[
            "field_identifier",
            "identifier",
            "statement_identifier",
            "type_identifier",
        ],
        comment_kinds: &["comment"],
        server_family: C_FAMILY,
        contexts: &[
            cx("statement", "void __sg_f(void) {\n", "\n}", "f(x);"),
            term("statement (`;` supplied)", "void __sg_f(void) {\n", "\n}", "f(x)"),
            cx("expression", "void __sg_f(void) {\n__sg_v = ", ";\n}", "a + b"),
            cx("struct member", "struct __SgC {\n", "\n};", "int x;"),
            cx("declaration", "", "", "int f(void) { return 0; }"),
        ],
    },
    /// C++.
    Cpp => LangSpec {
        id: "cpp",
        aliases: &["c++", "cxx"],
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp"],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        tags: &[tree_sitter_cpp::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[
            "#define", "#elif", "#elifdef", "#elifndef", "#else", "#endif", "#if", "#ifdef",
            "#ifndef", "#include", ">",
        ],
        identifier_kinds: &[
            "field_identifier",
            "identifier",
            "namespace_identifier",
            "statement_identifier",
            "type_identifier",
        ],
        comment_kinds: &["comment"],
        server_family: C_FAMILY,
        contexts: &[
            cx("statement", "void __sg_f() {\n", "\n}", "f(x);"),
            term("statement (`;` supplied)", "void __sg_f() {\n", "\n}", "f(x)"),
            cx("expression", "void __sg_f() {\n__sg_v = ", ";\n}", "a + b"),
            cx("class member", "class __SgC {\n", "\n};", "int x;"),
            cx("declaration", "", "", "int f() { return 0; }"),
        ],
    },
    /// Go.
    Go => LangSpec {
        id: "go",
        aliases: &["golang"],
        extensions: &["go"],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        tags: &[tree_sitter_go::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[],
        identifier_kinds: &[
            "blank_identifier",
            "field_identifier",
            "identifier",
            "package_identifier",
            "type_identifier",
        ],
        comment_kinds: &["comment"],
        server_family: &[Lang::Go],
        contexts: &[
            cx("statement", "package main\nfunc __sg_f() {\n", "\n}", "x := 1"),
            cx("expression", "package main\nvar __sg_v = ", "\n", "a + b"),
            cx("struct member", "package main\ntype __SgC struct {\n", "\n}", "X int"),
            cx("declaration", "package main\n", "\n", "func f() {}"),
        ],
    },
    /// Java.
    Java => LangSpec {
        id: "java",
        aliases: &[],
        extensions: &["java"],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        tags: &[tree_sitter_java::TAGS_QUERY],
        metavars: Metavars::Dollar,
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[],
        identifier_kinds: &["identifier", "type_identifier"],
        comment_kinds: &["block_comment", "line_comment"],
        server_family: &[Lang::Java],
        contexts: &[
            cx("statement", "class __SgC { void __sg_f() {\n", "\n} }", "f(x);"),
            term("statement (`;` supplied)", "class __SgC { void __sg_f() {\n", "\n} }", "f(x)"),
            cx("expression", "class __SgC { Object __sg_v = ", "; }", "a + b"),
            cx("class member", "class __SgC {\n", "\n}", "int x = 1;"),
            cx("declaration", "", "", "class A {}"),
        ],
    },
    /// JavaScript, JSX included.
    JavaScript => LangSpec {
        id: "javascript",
        aliases: &["js", "jsx"],
        extensions: &["js", "mjs", "cjs", "jsx"],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        tags: &[tree_sitter_javascript::TAGS_QUERY],
        metavars: Metavars::Dollar,
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &["?", "static get", "||"],
        identifier_kinds: JS_IDENTIFIERS,
        comment_kinds: &["comment", "html_comment"],
        server_family: JS_FAMILY,
        contexts: JS_CONTEXTS,
    },
    /// TypeScript.
    TypeScript => LangSpec {
        id: "typescript",
        aliases: &["ts"],
        extensions: &["ts", "mts", "cts"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        tags: &[tree_sitter_javascript::TAGS_QUERY, tree_sitter_typescript::TAGS_QUERY],
        metavars: Metavars::Dollar,
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &["?", "unique symbol", "||"],
        identifier_kinds: TS_IDENTIFIERS,
        comment_kinds: &["comment", "html_comment"],
        server_family: JS_FAMILY,
        contexts: JS_CONTEXTS,
    },
    /// TypeScript with JSX (`.tsx`).
    Tsx => LangSpec {
        id: "tsx",
        aliases: &[],
        extensions: &["tsx"],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        tags: &[tree_sitter_javascript::TAGS_QUERY, tree_sitter_typescript::TAGS_QUERY],
        metavars: Metavars::Dollar,
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &["?", "unique symbol", "||"],
        identifier_kinds: TS_IDENTIFIERS,
        comment_kinds: &["comment", "html_comment"],
        server_family: JS_FAMILY,
        contexts: JS_CONTEXTS,
    },
    /// JSON.
    Json => LangSpec {
        id: "json",
        aliases: &[],
        extensions: &["json"],
        grammar: || tree_sitter_json::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Quoted,
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &[],
        comment_kinds: &["comment"],
        server_family: &[],
        contexts: &[
            cx("value", "", "", "[1, 2]"),
            cx("object member", "{", "}", "\"a\": 1"),
        ],
    },
    /// Bash.
    Bash => LangSpec {
        id: "bash",
        aliases: &["sh", "shell"],
        extensions: &["sh", "bash"],
        grammar: || tree_sitter_bash::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Dollar,
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &["word"],
        comment_kinds: &["comment"],
        server_family: &[Lang::Bash],
        contexts: &[
            cx("statement", "", "", "echo hi"),
            cx("function body", "__sg_f() {\n", "\n}", "echo hi"),
            cx("command substitution", "echo $(", ")", "ls -l"),
        ],
    },
    /// Ruby.
    Ruby => LangSpec {
        id: "ruby",
        aliases: &["rb"],
        extensions: &["rb", "rake", "gemspec"],
        grammar: || tree_sitter_ruby::LANGUAGE.into(),
        tags: &[tree_sitter_ruby::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: false,
        lexed_otherwise: &[
            "\"", "%i(", "%w(", "&", ")", "*", "**", "-", "/", ":\"", "<<", "[", "`",
        ],
        identifier_kinds: &["constant", "identifier"],
        comment_kinds: &["comment"],
        server_family: &[Lang::Ruby],
        contexts: &[
            cx("statement", "", "", "puts x"),
            cx("expression", "__sg_v = ", "", "a + b"),
            cx("method body", "def __sg_f\n", "\nend", "return x"),
            cx("class member", "class SgC\n", "\nend", "attr_reader :x"),
        ],
    },
    /// Kotlin.
    Kotlin => LangSpec {
        id: "kotlin",
        aliases: &["kt"],
        extensions: &["kt", "kts"],
        grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: false,
        lexed_otherwise: &["!is", "$", "?.", "constructor", "get", "in", "set"],
        identifier_kinds: &["identifier"],
        comment_kinds: &["block_comment", "line_comment"],
        server_family: &[Lang::Kotlin],
        contexts: &[
            cx("statement", "fun __sg_f() {\n", "\n}", "val x = 1"),
            cx("expression", "val __sg_v = ", "\n", "a + b"),
            cx("class member", "class __SgC {\n", "\n}", "val x = 1"),
            cx("declaration", "", "", "fun f() {}"),
        ],
    },
    /// Swift.
    Swift => LangSpec {
        id: "swift",
        aliases: &[],
        extensions: &["swift"],
        grammar: || tree_sitter_swift::LANGUAGE.into(),
        tags: &[tree_sitter_swift::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: false,
        lexed_otherwise: &[
            "#", "#else", "#elseif", "#endif", "#if", "&&", "+", "-", "->", ".", "/", "=", "==",
            "?", "??", "as", "as!", "as?", "async", "try!", "try?", "||",
        ],
        identifier_kinds: &["simple_identifier", "type_identifier"],
        comment_kinds: &["comment", "multiline_comment"],
        server_family: &[Lang::Swift],
        contexts: &[
            cx("statement", "func __sg_f() {\n", "\n}", "let x = 1"),
            cx("expression", "let __sg_v = ", "\n", "a + b"),
            cx("class member", "class __SgC {\n", "\n}", "var x = 1"),
            cx("declaration", "", "", "func f() {}"),
        ],
    },
    /// C#.
    CSharp => LangSpec {
        id: "c_sharp",
        aliases: &["cs", "c#", "csharp", "c-sharp"],
        extensions: &["cs"],
        grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
        tags: &[tree_sitter_c_sharp::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &[
            "\"", "#define", "#elif", "#else", "#endif", "#endregion", "#error", "#if", "#line",
            "#nullable", "#pragma", "#region", "#undef", "#warning",
        ],
        identifier_kinds: &["identifier"],
        comment_kinds: &["comment"],
        server_family: &[Lang::CSharp],
        contexts: &[
            cx("statement", "class __SgC { void __sg_f() {\n", "\n} }", "F(x);"),
            term("statement (`;` supplied)", "class __SgC { void __sg_f() {\n", "\n} }", "F(x)"),
            cx("expression", "class __SgC { object __sg_v = ", "; }", "a + b"),
            cx("class member", "class __SgC {\n", "\n}", "int x = 1;"),
            cx("declaration", "", "", "class A {}"),
        ],
    },
    /// PHP.
    Php => LangSpec {
        id: "php",
        aliases: &[],
        extensions: &["php"],
        grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
        tags: &[tree_sitter_php::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &["name"],
        comment_kinds: &["comment"],
        server_family: &[Lang::Php],
        contexts: &[
            cx("statement", "<?php\n", "", "echo $x;"),
            term("statement (`;` supplied)", "<?php\n", "", "echo $x"),
            cx("expression", "<?php\n$__sg_v = ", ";", "$a + $b"),
            cx("class member", "<?php\nclass __SgC {\n", "\n}", "public $x = 1;"),
        ],
    },
    /// Lua.
    Lua => LangSpec {
        id: "lua",
        aliases: &[],
        extensions: &["lua"],
        grammar: || tree_sitter_lua::LANGUAGE.into(),
        tags: &[tree_sitter_lua::TAGS_QUERY],
        metavars: Metavars::Expando('µ'),
        keywords_literal: true,
        keywords_whole: true,
        lexed_otherwise: &["[[", "]]"],
        identifier_kinds: &["identifier"],
        comment_kinds: &["comment", "comment_content"],
        server_family: &[Lang::Lua],
        contexts: &[
            cx("statement", "", "", "print(x)"),
            cx("expression", "local __sg_v = ", "", "a + b"),
            cx("table field", "local __sg_v = {\n", "\n}", "x = 1"),
            cx("function body", "function __sg_f()\n", "\nend", "return x"),
        ],
    },
    /// YAML.
    Yaml => LangSpec {
        id: "yaml",
        aliases: &["yml"],
        extensions: &["yaml", "yml"],
        grammar: || tree_sitter_yaml::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Dollar,
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &[],
        comment_kinds: &["comment"],
        server_family: &[],
        contexts: &[cx("document", "", "", "a: 1")],
    },
    /// TOML.
    Toml => LangSpec {
        id: "toml",
        aliases: &[],
        extensions: &["toml"],
        grammar: || tree_sitter_toml_ng::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Quoted,
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &[],
        comment_kinds: &["comment"],
        server_family: &[],
        contexts: &[
            cx("document", "", "", "a = 1"),
            cx("value", "__sg_k = ", "", "[1, 2]"),
        ],
    },
    /// HTML.
    Html => LangSpec {
        id: "html",
        aliases: &[],
        extensions: &["html", "htm"],
        grammar: || tree_sitter_html::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Expando('z'),
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &[],
        comment_kinds: &["comment"],
        server_family: &[],
        contexts: &[cx("document", "", "", "<p>hi</p>")],
    },
    /// CSS.
    Css => LangSpec {
        id: "css",
        aliases: &[],
        extensions: &["css"],
        grammar: || tree_sitter_css::LANGUAGE.into(),
        tags: &[],
        metavars: Metavars::Expando('_'),
        keywords_literal: false,
        keywords_whole: false,
        lexed_otherwise: &[],
        identifier_kinds: &["identifier"],
        comment_kinds: &["comment", "js_comment"],
        server_family: &[],
        contexts: &[
            cx("stylesheet", "", "", "a { color: red; }"),
            cx("declaration", "__sg_c {\n", "\n}", "color: red;"),
        ],
    },
}
