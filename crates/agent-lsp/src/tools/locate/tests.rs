//! Unit tests of `locate`.

use super::*;
use crate::protocol::{DocumentSymbol, List, Position, Range, SymbolLocation};
use std::path::Path;

/// A range from (line, character) pairs.
fn range(start: (u32, u32), end: (u32, u32)) -> Range {
    let at = |(line, character)| Position { line, character };
    Range {
        start: at(start),
        end: at(end),
    }
}

/// A hierarchical symbol: its whole range, its name's range, its children.
fn nested(
    name: &str,
    kind: SymbolKind,
    whole: Range,
    selection: Range,
    children: Vec<DocumentSymbolItem>,
) -> DocumentSymbolItem {
    DocumentSymbolItem::Nested(DocumentSymbol {
        name: name.to_string(),
        kind,
        range: whole,
        selection_range: Some(selection),
        children: List(children),
    })
}

/// A flat symbol.
fn flat(name: &str, container: &str, kind: SymbolKind, at: Option<Range>) -> SymbolInformation {
    SymbolInformation {
        name: name.to_string(),
        kind,
        location: SymbolLocation {
            uri: "file:///a.dart".to_string(),
            range: at,
        },
        container_name: Some(container.to_string()),
    }
}

#[test]
fn names_split_on_their_last_separator() {
    assert_eq!(split_name("add"), (None, "add"));
    assert_eq!(split_name("Greeter.greet"), (Some("Greeter"), "greet"));
    assert_eq!(split_name("a::b::helper"), (Some("a::b"), "helper"));
    assert_eq!(split_name(".x"), (None, ".x"));
}

#[test]
fn reported_names_match_by_bare_name_and_container() {
    let item = |name: &str, container: &str| flat(name, container, 12, None);
    let matches = |i: &SymbolInformation, q, l| matches(i, q, l, None);
    assert!(matches(&item("add(int a, int b)", ""), None, "add"));
    assert!(matches(&item("greet", "Greeter"), Some("Greeter"), "greet"));
    assert!(matches(
        &item("greet", "mod.Greeter"),
        Some("Greeter"),
        "greet"
    ));
    assert!(matches(
        &item("(*Server).Start", "main"),
        Some("Server"),
        "Start"
    ));
    assert!(matches(
        &item("Greeter.greet", ""),
        Some("Greeter"),
        "greet"
    ));
    assert!(!matches(&item("greet", "Other"), Some("Greeter"), "greet"));
    assert!(!matches(&item("greeting", ""), None, "greet"));
    assert!(!matches(
        &item("greet", "MyGreeter"),
        Some("Greeter"),
        "greet"
    ));
}

#[test]
fn document_symbols_give_the_name_line_and_the_last_line() {
    let doc = vec![nested(
        "Greeter",
        5,
        range((0, 0), (9, 0)),
        range((0, 0), (0, 0)),
        vec![nested(
            "greet",
            6,
            range((2, 0), (5, 0)),
            range((3, 0), (3, 0)),
            Vec::new(),
        )],
    )];
    let refine =
        |d: &[DocumentSymbolItem], n, l| refine(d, n, l, Kinds::Callable).map(|(a, e, _)| (a, e));
    assert_eq!(refine(&doc, "greet", 3), Some((4, Some(6))));
    let flat = vec![DocumentSymbolItem::Flat(flat(
        "add",
        "",
        12,
        Some(range((4, 0), (4, 0))),
    ))];
    assert_eq!(
        refine(&flat, "add", 5),
        Some((5, None)),
        "a name range is not the definition's end"
    );
    assert_eq!(refine(&doc, "greet", 9), None);
    assert_eq!(refine(&doc, "Greeter", 1), None, "a class is not callable");
}

#[test]
fn qualifiers_match_the_container_chain_or_the_module() {
    let lib = Path::new("/w/pkg/lib.py");
    // (chain, qualifier, path, matches)
    let cases: [(&str, &str, Option<&Path>, bool); 9] = [
        ("Greeter", "Greeter", None, true),
        ("mod.Greeter", "Greeter", None, true),
        ("outer::Greeter", "outer::Greeter", None, true),
        ("MyGreeter", "Greeter", None, false),
        ("", "Greeter", None, false),
        ("", "lib", Some(lib), true),
        ("", "pkg", Some(lib), true),
        ("Greeter", "lib.Greeter", Some(lib), true),
        ("", "crate::lib", Some(lib), true),
    ];
    for (chain, q, path, want) in cases {
        assert_eq!(qualifies(chain, q, path), want, "{chain:?} {q:?} {path:?}");
    }
}

#[test]
fn document_declarations_follow_the_hierarchy() {
    let method = |line, column| {
        nested(
            "greet",
            6,
            range((line, 0), (line + 3, 0)),
            range((line, column), (line, column + 5)),
            Vec::new(),
        )
    };
    let doc = vec![
        nested(
            "Greeter",
            5,
            range((0, 0), (9, 0)),
            range((0, 6), (0, 13)),
            vec![method(2, 8)],
        ),
        nested(
            "Other",
            5,
            range((10, 0), (12, 0)),
            range((10, 6), (10, 11)),
            vec![method(11, 8)],
        ),
        nested(
            "(Greeter).Wave",
            6,
            range((14, 0), (15, 0)),
            range((14, 18), (14, 22)),
            Vec::new(),
        ),
    ];
    let path = Path::new("/w/lib.py");
    let find = |q, last, kinds| {
        in_document(&doc, path, q, last, kinds)
            .into_iter()
            .map(|(d, c)| (d.line, c, d.container))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        find(None, "greet", Kinds::Any),
        vec![
            (3, 8, Some("Greeter".into())),
            (12, 8, Some("Other".into()))
        ]
    );
    assert_eq!(
        find(Some("Other"), "greet", Kinds::Any),
        vec![(12, 8, Some("Other".into()))]
    );
    assert_eq!(find(Some("lib.Greeter"), "greet", Kinds::Any).len(), 1);
    assert_eq!(find(None, "Greeter", Kinds::Any), vec![(1, 6, None)]);
    assert!(find(None, "Greeter", Kinds::Callable).is_empty());
    assert_eq!(
        find(Some("Greeter"), "Wave", Kinds::Any),
        vec![(15, 18, None)]
    );
    assert!(find(Some("Other"), "Wave", Kinds::Any).is_empty());
}
