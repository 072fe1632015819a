//! The crate's module graph has no cycle: in the library (`src/lib.rs`) and in the binary
//! (`src/main.rs`), no module imports one that imports it back, directly or around a loop; and
//! no source file is a module of both (the binary calls the library, it does not compile it
//! again).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules a crate root declares (`mod x;`, `pub mod x;`, cfg-gated or not).
fn declared(root: &str) -> BTreeSet<String> {
    root.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// The modules of `mods` that `src` names through `crate::` in code (a doc link to a module is
/// no import).
fn imports(src: &str, mods: &BTreeSet<String>) -> BTreeSet<String> {
    let flat: String = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(str::chars)
        .filter(|c| !c.is_whitespace())
        .collect();
    let mut out = BTreeSet::new();
    for (i, _) in flat.match_indices("crate::") {
        let rest = &flat[i + "crate::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .collect(),
            None => vec![rest],
        };
        for name in names {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if mods.contains(&name) {
                out.insert(name);
            }
        }
    }
    out
}

/// A cycle in `graph`, if there is one, as the path around it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut c = path[at..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

fn graph(src: &Path, mods: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    mods.iter()
        .map(|m| {
            let text = std::fs::read_to_string(src.join(format!("{m}.rs")))
                .unwrap_or_else(|e| panic!("module `{m}`: {e}"));
            let mut deps = imports(&text, mods);
            deps.remove(m);
            (m.clone(), deps)
        })
        .collect()
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = declared(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let bin = declared(&std::fs::read_to_string(src.join("main.rs")).unwrap());
    assert!(
        lib.contains("host") && bin.contains("args"),
        "{lib:?} {bin:?}"
    );
    let both: Vec<_> = lib.intersection(&bin).collect();
    assert!(
        both.is_empty(),
        "modules of both the library and the binary: {both:?}"
    );
    for (name, mods) in [("library", &lib), ("binary", &bin)] {
        if let Some(c) = cycle(&graph(&src, mods)) {
            panic!("the {name}'s modules import each other: {}", c.join(" → "));
        }
    }
}

#[test]
fn the_check_sees_imports_and_cycles() {
    let mods: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    assert_eq!(
        imports(
            "/// see [`crate::b`]\nuse crate::{a::X,\n  b};\nlet y = crate::c::f();",
            &mods
        ),
        mods
    );
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        g
    };
    assert!(cycle(&g(&[("a", "b"), ("b", "c")])).is_none());
    assert_eq!(
        cycle(&g(&[("a", "b"), ("b", "a")])).unwrap(),
        ["a", "b", "a"]
    );
    assert!(cycle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])).is_some());
}
