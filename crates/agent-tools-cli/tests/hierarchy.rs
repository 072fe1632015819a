//! Issue 42: call and type hierarchies through `agent-tools call` (a fresh host per call, so
//! every server is cold), on pyright, typescript-language-server, rust-analyzer, gopls and
//! clangd. `build` is called four times from three files and used once as a value; every call
//! is listed with its line, or the witness lists it as left out and the answer is partial —
//! never hidden. A server that lacks a hierarchy is named in the refusal.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use serde_json::{Value, json};

mod common;

use common::call_json as call;

struct Case {
    server: &'static str,
    program: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The file declaring `build`, and its 1-based line.
    decl: (&'static str, u32),
    /// The function that calls `build` twice: file and line.
    caller: (&'static str, u32, &'static str),
    /// A subtype: file, line, name; and the name of its supertype.
    child: (&'static str, u32, &'static str, &'static str),
    /// Whether the server offers outgoing calls and the type hierarchy (else the refusal
    /// names it).
    outgoing: bool,
    types: bool,
}

/// Every call of `build` in every case: four (one outside any function where the language
/// allows it).
const CALLS: usize = 4;

fn project(case: &Case) -> (tempfile::TempDir, tempfile::TempDir) {
    agent_testkit::require(case.program);
    let dir = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-tools")).unwrap();
    std::fs::write(cfg.path().join("agent-tools/lsp.json"), "{}").unwrap();
    for (rel, text) in case.files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (dir, cfg)
}

/// The calls listed (steps) and those the witness says were left out: entries whose line
/// calls `build` (rust-analyzer and gopls also list a use as a value among the callers).
fn calls(s: &Value) -> (usize, usize) {
    let count = |k: &str| {
        s[k].as_array().map_or(0, |a| {
            a.iter()
                .filter(|e| e["text"].as_str().unwrap_or("").contains("build("))
                .count()
        })
    };
    (count("steps"), count("left_out"))
}

fn check(case: Case) {
    let (dir, cfg) = project(&case);
    let root = dir.path().canonicalize().unwrap();
    let who = case.server;

    // Callers: every call, with its line, checked by the witness.
    let args = json!({"operation": "incoming_calls", "path": case.decl.0,
                      "line": case.decl.1, "symbol": "build"});
    let (err, text, s) = call(&root, cfg.path(), "lsp", args);
    assert!(!err, "{who}: {text}");
    assert!(text.contains("witness: `build` occurs"), "{who}: {text}");
    let (steps, left) = calls(&s);
    assert_eq!(
        steps + left,
        CALLS,
        "{who}: every call listed or left out: {text}"
    );
    assert_eq!(
        s["partial"] == json!(true),
        left > 0 || s["partial"] == json!(true)
    );
    if left > 0 {
        assert!(text.contains("partial: "), "{who}: {text}");
    }
    assert!(
        text.contains("build(3) + build(4)"),
        "{who}: the call's line: {text}"
    );
    // The use as a value: listed by servers that take any use for a caller, else counted as
    // a use that is not a call.
    let listed = s["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|st| st["text"].as_str().unwrap_or("").contains("handler"));
    assert!(
        listed || s["other_uses"].as_u64().unwrap() >= 1,
        "{who}: the use as a value is listed or counted: {text}"
    );

    // Callees: `build`, at the two calls' line.
    let (file, line, name) = case.caller;
    let args = json!({"operation": "outgoing_calls", "path": file, "line": line, "symbol": name});
    let (err, text, s) = call(&root, cfg.path(), "lsp", args);
    assert_eq!(err, !case.outgoing, "{who}: {text}");
    if err {
        // clangd 19 offers the call hierarchy without its outgoing half.
        assert!(
            text.contains("does not offer `outgoing_calls`") && text.contains(who),
            "{who}: {text}"
        );
        println!("{who}: outgoing_calls: not offered, and said");
    } else {
        let build = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|st| st["name"].as_str().unwrap_or("").starts_with("build"))
            .unwrap_or_else(|| panic!("{who}: `build` among the callees: {text}"));
        assert_eq!(build["called_at"], json!([line + 1]), "{who}: {text}");
        assert!(text.contains("(called at line"), "{who}: {text}");
    }

    // Types: the supertype, or the server named as not offering it.
    let (file, line, child, parent) = case.child;
    for (op, want) in [("supertypes", parent), ("subtypes", child)] {
        let at = if op == "supertypes" {
            json!({"operation": op, "path": file, "line": line, "symbol": child})
        } else {
            json!({"operation": op, "symbol": parent, "path": file})
        };
        let (err, text, s) = call(&root, cfg.path(), "lsp", at);
        assert_eq!(err, !case.types, "{who}: {op}: {text}");
        if err {
            assert!(
                text.contains(&format!("does not offer `{op}`")) && text.contains(who),
                "{who}: {text}"
            );
            println!("{who}: {op}: not offered, and said");
        } else {
            let names: Vec<&str> = s["steps"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|st| st["name"].as_str())
                .collect();
            assert!(names.contains(&want), "{who}: {op}: {text}");
            println!("{who}: {op}: {names:?}");
        }
    }
}

#[test]
fn pyright_hierarchies() {
    check(Case {
        server: "pyright",
        program: "pyright-langserver",
        files: &[
            (
                "pyproject.toml",
                "[project]\nname = \"h\"\nversion = \"0.1.0\"\n",
            ),
            (
                "lib.py",
                "def build(x):\n    return x\n\n\nclass Base:\n    pass\n\n\nclass Child(Base):\n    pass\n",
            ),
            (
                "a.py",
                "from lib import build\n\n\ndef use_a():\n    return build(1)\n",
            ),
            (
                "b.py",
                "from lib import build\n\nfirst = build(2)\n\n\ndef use_b():\n    return build(3) + build(4)\n",
            ),
            ("c.py", "from lib import build\n\nhandler = build\n"),
        ],
        decl: ("lib.py", 1),
        caller: ("b.py", 6, "use_b"),
        child: ("lib.py", 9, "Child", "Base"),
        outgoing: true,
        types: false,
    });
}

#[test]
fn typescript_hierarchies() {
    check(Case {
        server: "typescript-language-server",
        program: "typescript-language-server",
        files: &[
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true}}\n",
            ),
            (
                "src/lib.ts",
                "export function build(x: number): number {\n  return x;\n}\n\nexport class Base {}\n\nexport class Child extends Base {}\n",
            ),
            (
                "src/a.ts",
                "import { build } from \"./lib\";\n\nexport function useA(): number {\n  return build(1);\n}\n",
            ),
            (
                "src/b.ts",
                "import { build } from \"./lib\";\n\nexport const first = build(2);\n\nexport function useB(): number {\n  return build(3) + build(4);\n}\n",
            ),
            (
                "src/c.ts",
                "import { build } from \"./lib\";\n\nexport const handler = build;\n",
            ),
        ],
        decl: ("src/lib.ts", 1),
        caller: ("src/b.ts", 5, "useB"),
        child: ("src/lib.ts", 7, "Child", "Base"),
        outgoing: true,
        types: false,
    });
}

#[test]
fn rust_analyzer_hierarchies() {
    check(Case {
        server: "rust-analyzer",
        program: "rust-analyzer",
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"h\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                "pub mod a;\npub mod b;\npub mod c;\n\npub fn build(x: i32) -> i32 {\n    x\n}\n\npub trait Base {}\n\npub struct Child;\n\nimpl Base for Child {}\n",
            ),
            (
                "src/a.rs",
                "use crate::build;\n\npub fn use_a() -> i32 {\n    build(1)\n}\n",
            ),
            (
                "src/b.rs",
                "use crate::build;\n\npub fn first() -> i32 {\n    build(2)\n}\n\npub fn use_b() -> i32 {\n    build(3) + build(4)\n}\n",
            ),
            (
                "src/c.rs",
                "use crate::build;\n\npub fn handler() -> fn(i32) -> i32 {\n    build\n}\n",
            ),
        ],
        decl: ("src/lib.rs", 5),
        caller: ("src/b.rs", 7, "use_b"),
        child: ("src/lib.rs", 11, "Child", "Base"),
        outgoing: true,
        types: false,
    });
}

#[test]
fn gopls_hierarchies() {
    check(Case {
        server: "gopls",
        program: "gopls",
        files: &[
            ("go.mod", "module example.com/h\n\ngo 1.19\n"),
            (
                "lib.go",
                "package main\n\nfunc build(x int) int {\n\treturn x\n}\n\ntype Base interface {\n\tName() string\n}\n\ntype Child struct{}\n\nfunc (Child) Name() string { return \"c\" }\n",
            ),
            (
                "a.go",
                "package main\n\nfunc useA() int {\n\treturn build(1)\n}\n",
            ),
            (
                "b.go",
                "package main\n\nvar first = build(2)\n\nfunc useB() int {\n\treturn build(3) + build(4)\n}\n",
            ),
            (
                "c.go",
                "package main\n\nvar handler = build\n\nfunc main() {}\n",
            ),
        ],
        decl: ("lib.go", 3),
        caller: ("b.go", 5, "useB"),
        child: ("lib.go", 11, "Child", "Base"),
        outgoing: true,
        types: false,
    });
}

#[test]
fn clangd_hierarchies() {
    check(Case {
        server: "clangd",
        program: "clangd-19",
        files: &[
            ("compile_flags.txt", "-std=c++17\n"),
            (
                "lib.h",
                "int build(int x);\n\nstruct Base {};\n\nstruct Child : Base {};\n",
            ),
            (
                "lib.cpp",
                "#include \"lib.h\"\n\nint build(int x) {\n    return x;\n}\n",
            ),
            (
                "a.cpp",
                "#include \"lib.h\"\n\nint use_a() {\n    return build(1);\n}\n",
            ),
            (
                "b.cpp",
                "#include \"lib.h\"\n\nint first() {\n    return build(2);\n}\n\nint use_b() {\n    return build(3) + build(4);\n}\n",
            ),
            (
                "c.cpp",
                "#include \"lib.h\"\n\nint (*handler)(int) = build;\n",
            ),
        ],
        decl: ("lib.cpp", 3),
        caller: ("b.cpp", 7, "use_b"),
        child: ("lib.h", 5, "Child", "Base"),
        outgoing: false,
        types: true,
    });
}

/// The witness disagrees: a call from a file outside the tsconfig's `include` is not in
/// tsserver's call hierarchy, but its definition is `build`; it is listed as left out, with its
/// line, and the answer is partial.
#[test]
fn typescript_left_out_call_is_flagged() {
    let case = Case {
        server: "typescript-language-server",
        program: "typescript-language-server",
        files: &[
            ("tsconfig.json", "{\"include\": [\"src\"]}\n"),
            (
                "src/lib.ts",
                "export function build(x: number): number {\n  return x;\n}\n",
            ),
            (
                "src/a.ts",
                "import { build } from \"./lib\";\n\nexport function useA(): number {\n  return build(1);\n}\n",
            ),
            (
                "scripts/s.ts",
                "import { build } from \"../src/lib\";\n\nexport const s = build(7);\n",
            ),
        ],
        decl: ("src/lib.ts", 1),
        caller: ("src/a.ts", 3, "useA"),
        child: ("src/lib.ts", 1, "build", "build"),
        outgoing: true,
        types: false,
    };
    let (dir, cfg) = project(&case);
    let root = dir.path().canonicalize().unwrap();
    let args = json!({"operation": "incoming_calls", "symbol": "build"});
    let (err, text, s) = call(&root, cfg.path(), "lsp", args);
    assert!(!err, "{text}");
    assert_eq!(calls(&s), (1, 1), "one call listed, one left out: {text}");
    assert_eq!(s["left_out"][0]["path"], "scripts/s.ts", "{text}");
    assert_eq!(s["left_out"][0]["line"], 3, "{text}");
    assert_eq!(s["partial"], true, "{text}");
    assert!(
        text.contains("left out 1 call(s)") && text.contains("export const s = build(7);"),
        "{text}"
    );
    assert!(!text.contains("had not finished loading"), "{text}");
}
