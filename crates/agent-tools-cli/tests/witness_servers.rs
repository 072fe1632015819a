//! Issue 22 beyond Python: a cold `references` and a cold `lsp_rename` (each a fresh
//! `agent-tools call`) on a multi-file project, with typescript-language-server, gopls,
//! rust-analyzer and clangd. Each answer is complete or honest: `references` lists every site
//! or is flagged partial, and a rename changes every site or writes nothing. The witness's
//! summary is part of every answer.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use serde_json::json;
use std::path::Path;

mod common;

use common::call_json as call;

struct Case {
    server: &'static str,
    program: &'static str,
    files: Vec<(String, String)>,
    /// Where the symbol is declared: file, 1-based line.
    at: (&'static str, u32),
    old: &'static str,
    new: &'static str,
    /// Every site of the symbol.
    sites: usize,
}

/// Whole-word occurrences of `name` in every file of the case.
fn count(root: &Path, case: &Case, name: &str) -> usize {
    case.files
        .iter()
        .map(|(rel, _)| {
            let text = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
            text.match_indices(name)
                .filter(|(i, _)| {
                    let before = text[..*i].chars().next_back();
                    let after = text[i + name.len()..].chars().next();
                    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !word(before) && !word(after)
                })
                .count()
        })
        .sum()
}

fn check(case: Case) {
    agent_testkit::require(case.program);
    let dir = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-tools")).unwrap();
    std::fs::write(cfg.path().join("agent-tools/lsp.json"), "{}").unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (rel, text) in &case.files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    assert_eq!(count(&root, &case, case.old), case.sites);
    let at = json!({"operation": "references", "file": case.at.0, "line": case.at.1,
                    "symbol": case.old});
    let (err, text, s) = call(&root, cfg.path(), "lsp", at);
    assert!(!err, "{}: {text}", case.server);
    assert!(text.contains("witness: `"), "{}: {text}", case.server);
    let complete = s["total"].as_u64() == Some(case.sites as u64);
    let partial = s["partial"] == json!(true);
    assert!(
        complete || partial,
        "{}: neither complete ({} of {} sites) nor flagged partial: {text}",
        case.server,
        s["total"],
        case.sites
    );
    let args = json!({"file": case.at.0, "line": case.at.1, "symbol": case.old,
                      "new_name": case.new});
    let (err, text, _) = call(&root, cfg.path(), "lsp_rename", args);
    if err {
        assert!(
            text.contains("nothing was written"),
            "{}: {text}",
            case.server
        );
        assert_eq!(
            count(&root, &case, case.old),
            case.sites,
            "{}: {text}",
            case.server
        );
    } else {
        assert_eq!(
            (count(&root, &case, case.old), count(&root, &case, case.new)),
            (0, case.sites),
            "{}: a rename that left sites: {text}",
            case.server
        );
    }
    println!(
        "{}: references {}; rename {}",
        case.server,
        if complete {
            "complete"
        } else {
            "flagged partial"
        },
        if err {
            "wrote nothing"
        } else {
            "renamed every site"
        }
    );
}

/// The three users of the symbol: `path` and `template` with `{n}` replaced by a, b and c.
fn users(path: &str, template: &str) -> Vec<(String, String)> {
    ["a", "b", "c"]
        .into_iter()
        .map(|n| (path.replace("{n}", n), template.replace("{n}", n)))
        .collect()
}

/// Files from literals.
fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

#[test]
fn typescript_cold_answers_are_complete_or_honest() {
    let mut files = files(&[
        (
            "tsconfig.json",
            r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#,
        ),
        (
            "src/util.ts",
            "export function makeGreeter(name: string): string {\n  return \"hi \" + name;\n}\n",
        ),
    ]);
    files.extend(users(
        "src/{n}.ts",
        "import { makeGreeter } from \"./util\";\nexport const {n} = makeGreeter(\"{n}\");\n",
    ));
    check(Case {
        server: "typescript-language-server",
        program: "typescript-language-server",
        files,
        at: ("src/util.ts", 1),
        old: "makeGreeter",
        new: "buildGreeter",
        sites: 7,
    });
}

#[test]
fn gopls_cold_answers_are_complete_or_honest() {
    let mut files = files(&[
        ("go.mod", "module example.com/demo\n\ngo 1.19\n"),
        (
            "util.go",
            "package demo\n\nfunc MakeGreeter(name string) string {\n\treturn \"hi \" + name\n}\n",
        ),
    ]);
    files.extend(users(
        "{n}.go",
        "package demo\n\nfunc Use_{n}() string {\n\treturn MakeGreeter(\"{n}\")\n}\n",
    ));
    check(Case {
        server: "gopls",
        program: "gopls",
        files,
        at: ("util.go", 3),
        old: "MakeGreeter",
        new: "BuildGreeter",
        sites: 4,
    });
}

#[test]
fn rust_analyzer_cold_answers_are_complete_or_honest() {
    let mut files = files(&[
        (
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "Cargo.lock",
            "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        ),
        (
            "src/lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod util;\n",
        ),
        (
            "src/util.rs",
            "pub fn make_greeter(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
        ),
    ]);
    files.extend(users("src/{n}.rs", "use crate::util::make_greeter;\n\npub fn use_{n}() -> String {\n    make_greeter(\"{n}\")\n}\n"));
    check(Case {
        server: "rust-analyzer",
        program: "rust-analyzer",
        files,
        at: ("src/util.rs", 1),
        old: "make_greeter",
        new: "build_greeter",
        sites: 7,
    });
}

#[test]
fn clangd_cold_answers_are_complete_or_honest() {
    let mut files = files(&[
        ("compile_flags.txt", "-xc\n-std=c11\n"),
        ("util.h", "#pragma once\nint make_greeter(int n);\n"),
        (
            "util.c",
            "#include \"util.h\"\n\nint make_greeter(int n) {\n    return n + 1;\n}\n",
        ),
    ]);
    files.extend(users(
        "{n}.c",
        "#include \"util.h\"\n\nint use_{n}(void) {\n    return make_greeter(1);\n}\n",
    ));
    check(Case {
        server: "clangd",
        program: "clangd-19",
        files,
        at: ("util.c", 3),
        old: "make_greeter",
        new: "build_greeter",
        sites: 5,
    });
}

/// `implementation`: the witness cannot tell an implementation from another same-named
/// symbol, so it says where else the name occurs and that those were not checked.
#[test]
fn typescript_implementation_says_what_the_witness_could_not_check() {
    agent_testkit::require("typescript-language-server");
    let dir = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-tools")).unwrap();
    std::fs::write(cfg.path().join("agent-tools/lsp.json"), "{}").unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (rel, text) in files(&[
        (
            "tsconfig.json",
            r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#,
        ),
        (
            "src/shape.ts",
            "export interface Shape {\n  area(): number;\n}\n",
        ),
        (
            "src/sq.ts",
            "import { Shape } from \"./shape\";\nexport class Sq implements Shape {\n  area(): number { return 4; }\n}\n",
        ),
        (
            "src/circle.ts",
            "import { Shape } from \"./shape\";\nexport class Circle implements Shape {\n  area(): number { return 3; }\n}\n",
        ),
        ("src/room.ts", "export const room = { area: 12 };\n"),
    ]) {
        let p = root.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let args =
        json!({"operation": "implementation", "file": "src/shape.ts", "line": 2, "symbol": "area"});
    let (err, text, s) = call(&root, cfg.path(), "lsp", args);
    assert!(!err, "{text}");
    assert!(
        text.contains("witness: `area` occurs 4 time(s)") && text.contains("not checked"),
        "{text}"
    );
    assert!(
        s["total"] == json!(2) || s["partial"] == json!(true),
        "neither both implementations nor flagged partial: {text}"
    );
}
