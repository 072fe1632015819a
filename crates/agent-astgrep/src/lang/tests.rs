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
