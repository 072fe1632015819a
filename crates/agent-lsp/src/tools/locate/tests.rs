//! Unit tests of `locate`.

use super::*;

#[test]
fn names_split_on_their_last_separator() {
    assert_eq!(split_name("add"), (None, "add"));
    assert_eq!(split_name("Greeter.greet"), (Some("Greeter"), "greet"));
    assert_eq!(split_name("a::b::helper"), (Some("a::b"), "helper"));
    assert_eq!(split_name(".x"), (None, ".x"));
}

#[test]
fn reported_names_match_by_bare_name_and_container() {
    let item = |name: &str, container: &str| json!({"name": name, "containerName": container});
    let matches = |i: &Value, q, l| matches(i, q, l, None);
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
    let doc = json!([{"name": "Greeter", "kind": 5,
        "range": {"start": {"line": 0}, "end": {"line": 9}},
        "selectionRange": {"start": {"line": 0}},
        "children": [{"name": "greet", "kind": 6,
            "range": {"start": {"line": 2}, "end": {"line": 5}},
            "selectionRange": {"start": {"line": 3}}}]}]);
    let refine = |d: &Value, n, l| refine(d, n, l, Kinds::Callable).map(|(a, e, _)| (a, e));
    assert_eq!(refine(&doc, "greet", 3), Some((4, Some(6))));
    let flat = json!([{"name": "add", "kind": 12,
        "location": {"uri": "file:///a.dart", "range": {"start": {"line": 4}, "end": {"line": 4}}}}]);
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
    let doc = json!([
        {"name": "Greeter", "kind": 5,
         "range": {"start": {"line": 0}, "end": {"line": 9}},
         "selectionRange": {"start": {"line": 0, "character": 6}},
         "children": [{"name": "greet", "kind": 6,
            "range": {"start": {"line": 2}, "end": {"line": 5}},
            "selectionRange": {"start": {"line": 2, "character": 8}}}]},
        {"name": "Other", "kind": 5,
         "range": {"start": {"line": 10}, "end": {"line": 12}},
         "selectionRange": {"start": {"line": 10, "character": 6}},
         "children": [{"name": "greet", "kind": 6,
            "range": {"start": {"line": 11}, "end": {"line": 12}},
            "selectionRange": {"start": {"line": 11, "character": 8}}}]},
        {"name": "(Greeter).Wave", "kind": 6,
         "range": {"start": {"line": 14}, "end": {"line": 15}},
         "selectionRange": {"start": {"line": 14, "character": 18}}}
    ]);
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
