//! Unit tests of `locate`.

use super::*;
use serde_json::{Value, json};

/// `{start, end}` from line (and character) pairs.
fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
}

/// A `documentSymbol` answer read as the client reads it.
fn symbols_of(v: Value) -> Vec<DocumentSymbolItem> {
    serde_json::from_value(v).unwrap()
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
    let item = |name: &str, container: &str| -> SymbolInformation {
        serde_json::from_value(json!({"name": name, "containerName": container, "kind": 12,
            "location": {"uri": "file:///a.py"}}))
        .unwrap()
    };
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
    let doc = symbols_of(json!([{"name": "Greeter", "kind": 5,
        "range": range((0, 0), (9, 0)),
        "selectionRange": range((0, 0), (0, 0)),
        "children": [{"name": "greet", "kind": 6,
            "range": range((2, 0), (5, 0)),
            "selectionRange": range((3, 0), (3, 0))}]}]));
    let refine = |d: &[DocumentSymbolItem], n, l| {
        refine(d, n, l, Kinds::Callable).map(|(a, e, _)| (a, e))
    };
    assert_eq!(refine(&doc, "greet", 3), Some((4, Some(6))));
    let flat = symbols_of(json!([{"name": "add", "kind": 12,
        "location": {"uri": "file:///a.dart", "range": range((4, 0), (4, 0))}}]));
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
    let doc = symbols_of(json!([
        {"name": "Greeter", "kind": 5,
         "range": range((0, 0), (9, 0)),
         "selectionRange": range((0, 6), (0, 13)),
         "children": [{"name": "greet", "kind": 6,
            "range": range((2, 0), (5, 0)),
            "selectionRange": range((2, 8), (2, 13))}]},
        {"name": "Other", "kind": 5,
         "range": range((10, 0), (12, 0)),
         "selectionRange": range((10, 6), (10, 11)),
         "children": [{"name": "greet", "kind": 6,
            "range": range((11, 0), (12, 0)),
            "selectionRange": range((11, 8), (11, 13))}]},
        {"name": "(Greeter).Wave", "kind": 6,
         "range": range((14, 0), (15, 0)),
         "selectionRange": range((14, 18), (14, 22))}
    ]));
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
