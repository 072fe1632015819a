//! The run's definition finder ([`agent_tier::definitions::DefinitionFinder`]): a file's
//! definitions by name path, read from its grammar's tags queries — each `@definition.<kind>`
//! capture with its `@name` — so an edit by symbol needs no language server.
//!
//! A definition's path is the names of the definitions around it, outermost first; a Rust
//! `impl Greeter` block and a Go method's receiver add `Greeter`. Its span takes in what belongs
//! to it syntactically: Python's decorators (`decorated_definition`) and JavaScript's `export`.

use crate::lang::Lang;
use agent_tier::definitions::{Definition, DefinitionFinder};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tree_sitter::{Node, Parser, Query, QueryCursor, StreamingIterator};

/// Reads definitions from the bundled grammars.
pub(crate) struct Finder;

impl DefinitionFinder for Finder {
    fn definitions(&self, path: &Path, source: &str) -> Result<Vec<Definition>, String> {
        let lang = Lang::from_file(path).ok_or_else(|| {
            format!(
                "no bundled grammar reads `{}` files",
                path.extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "extension-less".into())
            )
        })?;
        definitions(lang, source)
    }
}

/// A language's compiled tags query, or why it has none.
type Compiled = Result<Arc<Query>, String>;

/// The compiled tags query of `lang` (compiled once per process).
fn query(lang: Lang) -> Compiled {
    static CACHE: OnceLock<Mutex<HashMap<Lang, Compiled>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock();
    cache
        .entry(lang)
        .or_insert_with(|| {
            let tags = lang.spec().tags;
            if tags.is_empty() {
                return Err(format!(
                    "the {} grammar has no definitions query, so its symbols cannot be found by name; edit by `old_string`",
                    lang.id()
                ));
            }
            Query::new(&lang.ts_language(), &tags.join("\n"))
                .map(Arc::new)
                .map_err(|e| format!("the {} tags query does not compile: {e}", lang.id()))
        })
        .clone()
}

/// Every definition in `source`, in file order.
pub(crate) fn definitions(lang: Lang, source: &str) -> Result<Vec<Definition>, String> {
    let q = query(lang)?;
    let mut parser = Parser::new();
    parser
        .set_language(&lang.ts_language())
        .map_err(|e| e.to_string())?;
    let tree = parser
        .parse(source, None)
        .ok_or("the parser gave no tree")?;
    let names = q.capture_names();
    // Each definition node once, with its name and kind (a node two patterns capture keeps the
    // more specific kind: a Rust function in an impl is a `method`).
    let mut found: Vec<(Node, String, String)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q, tree.root_node(), source.as_bytes());
    while let Some(m) = matches.next() {
        let mut def = None;
        let mut name = None;
        for c in m.captures() {
            let capture = names[c.index as usize];
            if capture == "name" {
                name = Some(c.node);
            } else if let Some(kind) = capture.strip_prefix("definition.") {
                def = Some((c.node, kind));
            }
        }
        let (Some((node, kind)), Some(name)) = (def, name) else {
            continue;
        };
        let text = source[name.byte_range()].to_string();
        match found.iter_mut().find(|(n, _, _)| n.id() == node.id()) {
            Some(seen) if seen.2 == "function" => seen.2 = kind.to_string(),
            Some(_) => {}
            None => found.push((node, text, kind.to_string())),
        }
    }
    let by_id: HashMap<usize, (&str, &str)> = found
        .iter()
        .map(|(n, t, k)| (n.id(), (t.as_str(), k.as_str())))
        .collect();
    let mut out: Vec<Definition> = found
        .iter()
        .map(|(node, name, kind)| {
            let mut path = vec![name.clone()];
            let mut kind = kind.clone();
            if let Some(recv) = receiver(*node, source) {
                path.insert(0, recv);
            }
            let mut up = node.parent();
            let mut nearest = true;
            while let Some(a) = up {
                if let Some((n, k)) = by_id.get(&a.id()) {
                    // A function defined in a class is its method (Python's tags say function).
                    if nearest && kind == "function" && matches!(*k, "class" | "interface") {
                        kind = "method".to_string();
                    }
                    nearest = false;
                    path.insert(0, n.to_string());
                } else if a.kind() == "impl_item"
                    && let Some(t) = a.child_by_field_name("type")
                {
                    path.insert(0, bare_type(&source[t.byte_range()]));
                }
                up = a.parent();
            }
            let mut outer = *node;
            while let Some(p) = outer.parent()
                && matches!(p.kind(), "decorated_definition" | "export_statement")
            {
                outer = p;
            }
            Definition {
                path,
                kind,
                start: outer.start_byte(),
                end: outer.end_byte(),
                line: outer.start_position().row as u32 + 1,
            }
        })
        .collect();
    out.sort_by_key(|d| (d.start, std::cmp::Reverse(d.end)));
    Ok(out)
}

/// A Go method's receiver type (`func (g *Greeter) Greet()` → `Greeter`).
fn receiver(node: Node, source: &str) -> Option<String> {
    if node.kind() != "method_declaration" {
        return None;
    }
    let list = node.child_by_field_name("receiver")?;
    let text = &source[list.byte_range()];
    let ty = text
        .trim_matches(|c| c == '(' || c == ')')
        .split_whitespace()
        .last()?;
    Some(bare_type(ty))
}

/// A type as a name: without pointers, references and generic arguments.
fn bare_type(ty: &str) -> String {
    let ty = ty.trim_start_matches(['*', '&']);
    let end = ty.find(['<', '[']).unwrap_or(ty.len());
    ty[..end].trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(lang: Lang, src: &str) -> Vec<(String, String, u32)> {
        definitions(lang, src)
            .unwrap()
            .into_iter()
            .map(|d| (d.name_path(), d.kind, d.line))
            .collect()
    }

    #[test]
    fn python_classes_methods_and_decorators() {
        let src = "import x\n\nclass Greeter:\n    @staticmethod\n    def greet():\n        pass\n\n\ndef make():\n    return 1\n";
        let defs = definitions(Lang::Python, src).unwrap();
        let greet = defs
            .iter()
            .find(|d| d.name_path() == "Greeter.greet")
            .unwrap();
        assert!(
            src[greet.start..greet.end].starts_with("@staticmethod"),
            "{greet:?}"
        );
        assert_eq!(greet.line, 4);
        assert!(paths(Lang::Python, src).contains(&("make".into(), "function".into(), 9)));
    }

    #[test]
    fn rust_impl_blocks_and_go_receivers_name_their_type() {
        let rs = "struct G;\nimpl<T> Greet for G {\n    fn greet(&self) {}\n}\nfn f() {}\n";
        let p = paths(Lang::Rust, rs);
        assert!(p.contains(&("G.greet".into(), "method".into(), 3)), "{p:?}");
        assert!(p.contains(&("f".into(), "function".into(), 5)), "{p:?}");
        let go = "package main\n\ntype G struct{}\n\nfunc (g *G) Greet() string { return \"\" }\n";
        let p = paths(Lang::Go, go);
        assert!(p.iter().any(|(n, _, l)| n == "G.Greet" && *l == 5), "{p:?}");
    }

    #[test]
    fn typescript_exports_are_part_of_the_definition() {
        let src = "export class Greeter {\n  greet(): string { return \"\"; }\n}\nexport function make() {}\n";
        let defs = definitions(Lang::TypeScript, src).unwrap();
        let make = defs.iter().find(|d| d.name_path() == "make").unwrap();
        assert!(
            src[make.start..make.end].starts_with("export function"),
            "{make:?}"
        );
        assert!(
            defs.iter().any(|d| d.name_path() == "Greeter.greet"),
            "{defs:?}"
        );
    }

    #[test]
    fn a_grammar_without_tags_says_so() {
        let e = definitions(Lang::Json, "{}").unwrap_err();
        assert!(e.contains("edit by `old_string`"), "{e}");
    }
}
