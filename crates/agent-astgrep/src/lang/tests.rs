//! Unit tests of the grammar table and of the metavariable rewriting.

use super::*;

#[test]
fn ids_aliases_and_extensions() {
    assert_eq!(Lang::ALL.len(), 22);
    for lang in Lang::ALL {
        assert_eq!(Lang::from_id(lang.id()), Some(lang), "{}", lang.id());
        for ext in lang.extensions() {
            let file = format!("x.{ext}");
            // `.h` belongs to C, and every other extension to exactly its language.
            assert_eq!(Lang::from_file(Path::new(&file)), Some(lang), "{file}");
        }
        assert!(!lang.contexts().is_empty(), "{}", lang.id());
    }
    let aliases = [
        ("py", Lang::Python),
        ("rs", Lang::Rust),
        ("ts", Lang::TypeScript),
        ("js", Lang::JavaScript),
        ("cs", Lang::CSharp),
        ("c#", Lang::CSharp),
        ("sh", Lang::Bash),
        ("yml", Lang::Yaml),
        ("Dart", Lang::Dart),
    ];
    for (alias, lang) in aliases {
        assert_eq!(Lang::from_id(alias), Some(lang), "{alias}");
    }
    assert_eq!(Lang::from_id("cobol"), None);
    assert_eq!(Lang::from_file(Path::new("README")), None);
}

#[test]
fn metavariable_rewriting_for_the_parser() {
    let cases = [
        (
            'µ',
            "foo($X, $$$ARGS, $_, $$$)",
            "foo(µX, µµµARGS, µ_, µµµ)",
        ),
        ('µ', "$x + $1 + $", "$x + $1 + $"),
        ('$', "foo($X)", "foo($X)"),
    ];
    for (expando, input, want) in cases {
        assert_eq!(expand_metavars(expando, input), want, "{input}");
    }
    assert_eq!(quote_metavars(r#""a": $V"#), r#""a": "$V""#);
    assert_eq!(quote_metavars(r#"["$V", $$$]"#), r#"["$V", "$$$"]"#);
    assert_eq!(quote_metavars("$K = $lower"), r#""$K" = $lower"#);
    assert_eq!(
        parse_meta_var("µµµARGS", 'µ'),
        Some(MetaVariable::MultiCapture("ARGS".into()))
    );
    assert_eq!(parse_meta_var("$_", '$'), Some(MetaVariable::Dropped(true)));
    assert_eq!(
        parse_meta_var("$$X", '$'),
        Some(MetaVariable::Capture("X".into(), false))
    );
    assert_eq!(parse_meta_var("$x", '$'), None);
}

#[test]
fn every_grammar_loads() {
    for lang in Lang::ALL {
        let mut parser = tree_sitter::Parser::new();
        assert!(
            parser.set_language(&lang.ts_language()).is_ok(),
            "{}",
            lang.id()
        );
    }
}

/// Every context of every entry accepts its sample (the sample parses cleanly there, as one
/// node spanning it), and the sample compiles as a pattern.
#[test]
fn every_context_parses_its_sample() {
    use crate::pattern::{Attempt, compile, try_context};
    for lang in Lang::ALL {
        for ctx in lang.contexts() {
            let body = lang.pre_process_pattern(ctx.sample);
            match try_context(lang, &body, ctx) {
                Attempt::Accepted(..) => {}
                Attempt::Rejected(why) => {
                    panic!(
                        "{} `{}` rejects {:?}: {why}",
                        lang.id(),
                        ctx.name,
                        ctx.sample
                    )
                }
                Attempt::TooDeep(depth) => panic!("{} `{}`: {depth} deep", lang.id(), ctx.name),
            }
            if let Err(e) = compile(lang, ctx.sample) {
                panic!(
                    "{} `{}`: {:?} does not compile: {e}",
                    lang.id(),
                    ctx.name,
                    ctx.sample
                );
            }
        }
    }
}

/// No name (id or alias) and no extension is claimed twice, ids are listed sorted, and every
/// entry's kinds are kinds of its grammar.
#[test]
fn no_two_entries_claim_a_name_or_an_extension() {
    let mut names = std::collections::BTreeMap::new();
    let mut extensions = std::collections::BTreeMap::new();
    for lang in Lang::ALL {
        for name in std::iter::once(&lang.id()).chain(lang.aliases()) {
            assert_eq!(
                name.to_ascii_lowercase(),
                *name,
                "{name}: names are lowercase"
            );
            if let Some(other) = names.insert(*name, lang) {
                panic!("`{name}` names both {other:?} and {lang:?}");
            }
        }
        for ext in lang.extensions() {
            assert_eq!(
                ext.to_ascii_lowercase(),
                *ext,
                "{ext}: extensions are lowercase"
            );
            if let Some(other) = extensions.insert(*ext, lang) {
                panic!("`.{ext}` is claimed by both {other:?} and {lang:?}");
            }
        }
    }
    let ids: Vec<&str> = Lang::ALL.iter().map(|l| l.id()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "Lang::ALL lists ids in order");
    for (i, (lang, _)) in table::TABLE.iter().enumerate() {
        assert_eq!(
            *lang as usize, i,
            "{lang:?}: the table follows the variants"
        );
    }
    for lang in Lang::ALL {
        let spec = lang.spec();
        assert_ne!(spec.metavars, Metavars::Expando('$'), "{}", spec.id);
        let ts = lang.ts_language();
        for kind in spec.identifier_kinds.iter().chain(spec.comment_kinds) {
            assert_ne!(
                ts.id_for_node_kind(kind, true),
                0,
                "{}: no kind `{kind}`",
                spec.id
            );
        }
        for member in spec.server_family {
            assert_eq!(
                member.server_family(),
                spec.server_family,
                "{}: a family is the same from each member",
                spec.id
            );
        }
        assert!(
            spec.server_family.is_empty() || spec.server_family.contains(&lang),
            "{}",
            spec.id
        );
    }
}

/// Every file of `dir` (recursively) with one of `lang`'s extensions.
fn sources(dir: &Path, lang: Lang, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, lang, out);
        } else if lang.owns(&path) {
            out.push(path);
        }
    }
}

/// Every node of `tree`, in pre-order (a cursor walk: no recursion).
fn each_node(tree: &tree_sitter::Tree, mut f: impl FnMut(tree_sitter::Node<'_>)) {
    let mut cursor = tree.walk();
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// An anonymous token a pattern may prefilter by (`spelled_as_written`) is its kind's spelling
/// wherever the grammar lexes it: every such node of the per-language test corpora, and of
/// this crate's own Rust sources, has exactly that text (a token the parser inserted to recover
/// from an error has none, and is left out).
#[test]
fn an_anonymous_token_spelled_as_written_is_its_kinds_spelling_in_every_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<(Lang, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(root.join("tests/corpus")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if let Some(lang) = Lang::from_id(&stem) {
            files.push((lang, path));
        }
    }
    let mut own = Vec::new();
    sources(&root.join("src"), Lang::Rust, &mut own);
    files.extend(own.into_iter().map(|p| (Lang::Rust, p)));
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    for (lang, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&lang.ts_language()).unwrap();
        let tree = parser.parse(&text, None).unwrap();
        each_node(&tree, |node| {
            let kind = node.kind();
            if !node.is_named() && !node.is_missing() && lang.spelled_as_written(kind) {
                assert_eq!(
                    &text[node.byte_range()],
                    kind,
                    "{lang:?} in {}: a `{kind}` token of other text",
                    path.display()
                );
                *checked.entry(lang.id()).or_default() += 1;
            }
        });
    }
    assert!(
        checked.get("rust").is_some_and(|n| *n > 10_000),
        "{checked:?}"
    );
    assert!(
        checked.get("python").is_some_and(|n| *n > 100),
        "{checked:?}"
    );
}

/// Why the exclusions exist: where a grammar lexes other text as a kind (an alias of a pattern,
/// a token an external scanner emits), that kind's spelling need not be in the file.
#[test]
fn a_kind_lexed_from_other_text_never_prefilters() {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&Lang::C.ts_language()).unwrap();
    let text = "#  define X 1\n";
    let tree = parser.parse(text, None).unwrap();
    let directive = tree.root_node().child(0).unwrap().child(0).unwrap();
    assert_eq!(directive.kind(), "#define");
    assert_eq!(&text[directive.byte_range()], "#  define");
    assert!(!Lang::C.spelled_as_written("#define"));
    assert!(Lang::C.spelled_as_written("=="));
    // Keywords a scanner emits (Kotlin's `in`), and languages whose keywords are not literal.
    assert!(!Lang::Kotlin.spelled_as_written("in"));
    assert!(Lang::Python.spelled_as_written("=="));
    assert!(!Lang::Python.spelled_as_written("not in"));
    for lang in Lang::ALL {
        if !lang.spec().keywords_literal {
            assert!(!lang.spelled_as_written("=="), "{lang:?}");
        }
    }
}

/// Every word-shaped anonymous kind of `lang` (its keywords).
fn keyword_kinds(lang: Lang) -> Vec<String> {
    let ts = lang.ts_language();
    let kinds: std::collections::BTreeSet<String> = (0..ts.node_kind_count() as u16)
        .filter(|&id| !ts.node_kind_is_named(id) && ts.node_kind_is_visible(id))
        .filter_map(|id| ts.node_kind_for_id(id))
        .filter(|k| {
            k.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(str::to_string)
        .collect();
    kinds.into_iter().collect()
}

/// The keyword tokens of `text` (as `lang` parses it) that a word byte follows: `(kind, at)`.
fn keywords_ending_inside_a_word(lang: Lang, text: &str) -> Vec<(String, usize)> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.ts_language()).unwrap();
    let tree = parser.parse(text, None).unwrap();
    let mut out = Vec::new();
    each_node(&tree, |node| {
        let kind = node.kind();
        if !node.is_named()
            && !node.is_missing()
            && lang.spelled_as_written(kind)
            && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && text.as_bytes()[node.end_byte()..]
                .first()
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            out.push((kind.to_string(), node.start_byte()));
        }
    });
    out
}

/// Where a grammar's keywords are whole words (`keywords_whole`), no keyword token is ever
/// followed by an ASCII letter, digit or `_`: every keyword of the grammar, glued to word
/// bytes before and after, in statement, expression and argument position and at the top of
/// each of the grammar's pattern contexts, parsed with whatever error recovery that takes.
/// The test can fail: a grammar whose main lexer reads keywords itself (Swift's) yields such
/// tokens from the same inputs, which is why it is not listed.
#[test]
fn a_whole_keyword_is_never_followed_by_a_word_byte_even_in_error_recovery() {
    let shapes = |kw: &str| {
        [
            format!("{kw}x\n"),
            format!("{kw}_ y\n"),
            format!("{kw}1 y\n"),
            format!("x {kw}x y\n"),
            format!("f({kw}x)\n"),
            format!("x = {kw}y;\n"),
            format!("{kw}{kw} {kw}X{kw}\n"),
            format!("1{kw}x 1 {kw}\n"),
            format!("class A {{ {kw}x y; }}\n"),
            format!("fun f() {{ {kw}x }}\n"),
        ]
    };
    let mut checked = 0usize;
    for lang in Lang::ALL.iter().copied().filter(|l| l.keywords_whole()) {
        let keywords = keyword_kinds(lang);
        assert!(keywords.len() > 10, "{lang:?}: {keywords:?}");
        for kw in &keywords {
            let mut texts = shapes(kw).to_vec();
            for ctx in lang.contexts() {
                texts.push(format!("{}{kw}x{}", ctx.prefix, ctx.suffix));
            }
            for text in texts {
                let bad = keywords_ending_inside_a_word(lang, &text);
                assert!(bad.is_empty(), "{lang:?}: {bad:?} in {text:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
    // The same inputs in Swift, whose grammar has no `word` token: its main lexer reads
    // keywords itself, and `Protocol` comes out of `Protocolx`.
    assert!(!Lang::Swift.keywords_whole());
    let swift: Vec<_> = keyword_kinds(Lang::Swift)
        .iter()
        .flat_map(|kw| shapes(kw).to_vec())
        .flat_map(|t| keywords_ending_inside_a_word(Lang::Swift, &t))
        .collect();
    assert!(
        swift.iter().any(|(kind, _)| kind == "Protocol"),
        "{swift:?}"
    );
}
