//! The model's first call works (issue 25): one row per call as a model writes it — from its
//! habits, not from our schema — each through `agent-tools serve` over MCP stdio, against the
//! real servers, adapters and interpreters. Every row either succeeds or fails with an error that
//! names the one fix.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::Path;

/// What a row expects of its call.
enum Expect {
    /// Succeeds, and its text holds every one of these.
    Ok(&'static [&'static str]),
    /// Fails, and its text names the fix (holds every one of these).
    Fix(&'static [&'static str]),
}

/// One call as a model writes it.
struct Row {
    what: &'static str,
    tool: &'static str,
    args: Value,
    expect: Expect,
}

fn row(what: &'static str, tool: &'static str, args: Value, expect: Expect) -> Row {
    Row {
        what,
        tool,
        args,
        expect,
    }
}

/// `tools/call` as id `id`; a question the host puts to this client (`elicitation/create`) is
/// answered with `answer`. Returns (is_error, text).
fn call(c: &mut Client, id: i64, tool: &str, args: &Value, answer: &Value) -> (bool, String) {
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}));
    loop {
        let mut line = String::new();
        assert!(
            c.stdout.read_line(&mut line).unwrap() > 0,
            "serve closed stdout"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "elicitation/create" {
            let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": answer});
            writeln!(c.stdin, "{reply}").unwrap();
            continue;
        }
        if v["id"] == id && v.get("method").is_none() {
            let r = &v["result"];
            let text = r["content"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_else(|| v.to_string());
            return (r["isError"].as_bool().unwrap_or(true), text);
        }
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Run every row against one host; report every failing row at once.
fn run_rows(c: &mut Client, rows: Vec<Row>, answer: &Value) {
    let mut failed = Vec::new();
    for (i, r) in rows.into_iter().enumerate() {
        let (is_error, text) = call(c, 100 + i as i64, r.tool, &r.args, answer);
        let (ok, wanted) = match r.expect {
            Expect::Ok(w) => (!is_error, w),
            Expect::Fix(w) => (is_error, w),
        };
        let missing: Vec<&&str> = wanted.iter().filter(|w| !text.contains(**w)).collect();
        if !ok || !missing.is_empty() {
            failed.push(format!(
                "- {} ({} {}): is_error={is_error}, missing {missing:?}\n{text}",
                r.what, r.tool, r.args
            ));
        }
    }
    assert!(failed.is_empty(), "rows failed:\n{}", failed.join("\n\n"));
}

fn initialize(c: &mut Client, capabilities: Value) -> Value {
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "first-calls", "version": "0"}}),
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    init
}

/// The file, search and question tools, and the old names every tool still takes.
#[test]
fn everyday_first_calls_through_serve() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "src/app.py",
        "# TODO: remove the fallback\nNAME = \"app\"\nNAME = \"app\"\n",
    );
    write(r, "src/lib.rs", "// TODO: document\npub fn f() {}\n");
    write(r, "src/deep/mod.rs", "pub fn g() {}\n");
    write(r, "notes.txt", "alpha  \nbeta\t\ngamma\n");
    write(r, "quote.py", "msg = \"it's done\"\nprint(msg)\n");
    let mut c = Client::start(r, &["--vibe"]);
    initialize(&mut c, json!({"elicitation": {}}));
    let answer = json!({"action": "accept", "content": {"choice": "sqlite"}});
    let rows = vec![
        row(
            "ask_user with options as plain strings",
            "ask_user",
            json!({"question": "Which database?", "options": ["postgres", "sqlite"]}),
            Expect::Ok(&["chosen: sqlite"]),
        ),
        row(
            "resolve's old selector `action`",
            "resolve",
            json!({"edit_id": "edit_9", "action": "accept"}),
            Expect::Fix(&["no edit is staged", "call ast_edit first"]),
        ),
        row(
            "vibe_wait's old `timeout_seconds`",
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 1}),
            Expect::Fix(&["w1", "vibe_spawn"]),
        ),
        row(
            "grep for a TODO in comments",
            "grep",
            json!({"pattern": "TODO"}),
            Expect::Ok(&["src/app.py:1:", "src/lib.rs:1:"]),
        ),
        row(
            "glob for src/**/*.rs",
            "glob",
            json!({"pattern": "src/**/*.rs"}),
            Expect::Ok(&["src/lib.rs", "src/deep/mod.rs"]),
        ),
        row(
            "edit with replace_all",
            "edit",
            json!({"path": "src/app.py", "old_string": "\"app\"", "new_string": "\"web\"", "replace_all": true}),
            Expect::Ok(&["2"]),
        ),
        row(
            "a patch whose context lost its trailing whitespace",
            "apply_patch",
            json!({"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"}),
            Expect::Ok(&["trailing whitespace"]),
        ),
        row(
            "a patch with typographic quotes",
            "apply_patch",
            json!({"patch": "--- a/quote.py\n+++ b/quote.py\n@@ -1,2 +1,2 @@\n-msg = \"it\u{2019}s done\"\n+msg = \"it's finished\"\n print(msg)\n"}),
            Expect::Ok(&["quote.py"]),
        ),
        row(
            "lsp's `op` and `file`",
            "lsp",
            json!({"op": "status", "file": "src/app.py"}),
            Expect::Ok(&[]),
        ),
        row(
            "debug's `op`",
            "debug",
            json!({"op": "status"}),
            Expect::Ok(&["no debug session"]),
        ),
        row(
            "debug with reveal (secrets shown)",
            "debug",
            json!({"op": "status", "reveal": true}),
            Expect::Ok(&["no debug session"]),
        ),
        row(
            "debug restart before any launch names the way",
            "debug",
            json!({"op": "restart"}),
            Expect::Fix(&["`launch`"]),
        ),
        row(
            "ast_grep's syntax tree of a pattern that finds nothing",
            "ast_grep",
            json!({"pattern": "fn f()", "path": "src/lib.rs", "tree": true}),
            Expect::Ok(&["parsed in context", "function_item"]),
        ),
    ];
    run_rows(&mut c, rows, &answer);
    let app = std::fs::read_to_string(r.join("src/app.py")).unwrap();
    assert_eq!(app.matches("\"web\"").count(), 2, "{app}");
    let notes = std::fs::read_to_string(r.join("notes.txt")).unwrap();
    assert_eq!(notes, "alpha  \nBETA\ngamma\n");
    let quote = std::fs::read_to_string(r.join("quote.py")).unwrap();
    assert_eq!(quote, "msg = \"it's finished\"\nprint(msg)\n");
}

/// A client that cannot elicit is not offered `ask_user`, and a call anyway names why.
#[test]
fn a_client_without_elicitation_is_not_promised_a_person() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start(root.path(), &[]);
    let init = initialize(&mut c, json!({}));
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(!instructions.contains("ask_user"), "{instructions}");
    let rows = vec![row(
        "ask_user from a client without elicitation",
        "ask_user",
        json!({"question": "Which database?", "options": ["postgres", "sqlite"]}),
        Expect::Fix(&["elicitation", "Proceed under an assumption"]),
    )];
    run_rows(&mut c, rows, &Value::Null);
}

/// "Why does this test fail? Step through it." — a test under the debugger as a model asks for
/// it: a breakpoint in the test, then `launch` with the test's name and its file; pytest under
/// debugpy, a Go test under delve's test mode, a Rust test binary under lldb-dap.
#[test]
fn a_test_is_stepped_into_under_the_debugger() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "pyproject.toml", "[project]\nname = \"demo\"\n");
    write(
        r,
        "tests/test_calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    got = add(2, 3)\n    assert got == 6\n",
    );
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"));
    std::os::unix::fs::symlink(&venv, r.join(".venv")).unwrap();
    write(r, "calc/go.mod", "module example.com/calc\n\ngo 1.21\n");
    write(
        r,
        "calc/calc.go",
        "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    write(
        r,
        "calc/calc_test.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tgot := Add(2, 3)\n\tif got != 6 {\n\t\tt.Fatal(got)\n\t}\n}\n",
    );
    write(
        r,
        "demo/Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(
        r,
        "demo/src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        let got = super::add(2, 3);\n        assert_eq!(got, 6);\n    }\n}\n",
    );
    let target = tempfile::tempdir().unwrap();
    let target_dir = target.path().to_str().unwrap();
    let mut c = Client::start(r, &[]);
    initialize(&mut c, json!({}));
    let rows = vec![
        row(
            "a breakpoint in a pytest test (old names `op`, `file`)",
            "debug",
            json!({"op": "breakpoints", "file": "tests/test_calc.py", "lines": [7]}),
            Expect::Ok(&["tests/test_calc.py (lines 7)"]),
        ),
        row(
            "the pytest test under debugpy",
            "debug",
            json!({"operation": "launch", "test": "test_add", "program": "tests/test_calc.py"}),
            Expect::Ok(&[
                "stopped (breakpoint) at test_add (tests/test_calc.py:7)",
                "got",
            ]),
        ),
        row(
            "end it",
            "debug",
            json!({"operation": "terminate"}),
            Expect::Ok(&[]),
        ),
        row(
            "a breakpoint in a Go test",
            "debug",
            json!({"operation": "breakpoints", "path": "calc/calc_test.go", "lines": [7]}),
            Expect::Ok(&["calc/calc_test.go (lines 7)"]),
        ),
        row(
            "the Go test under delve's test mode",
            "debug",
            json!({"operation": "launch", "test": "TestAdd", "program": "calc"}),
            Expect::Ok(&["calc/calc_test.go:7"]),
        ),
        row(
            "end it",
            "debug",
            json!({"operation": "terminate"}),
            Expect::Ok(&[]),
        ),
        row(
            "a breakpoint in a Rust test",
            "debug",
            json!({"operation": "breakpoints", "path": "demo/src/lib.rs", "lines": [10]}),
            Expect::Ok(&["demo/src/lib.rs (lines 10)"]),
        ),
        row(
            "the Rust test binary under lldb-dap",
            "debug",
            json!({"operation": "launch", "test": "adds", "program": "demo", "env": {"CARGO_TARGET_DIR": target_dir}}),
            Expect::Ok(&["demo/src/lib.rs:10", "built by"]),
        ),
        row(
            "end it",
            "debug",
            json!({"operation": "terminate"}),
            Expect::Ok(&[]),
        ),
    ];
    run_rows(&mut c, rows, &Value::Null);
}

/// "Where is `make_greeter` used?" — a model knows a name, not a line: references, definition
/// and a rename by name alone (pyright), `Class.method`, and an ambiguous name refused with the
/// candidates and the exact next call.
#[test]
fn names_without_lines() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "pyproject.toml", "[project]\nname = \"demo\"\n");
    write(
        r,
        "lib.py",
        "class Greeter:\n    def greet(self) -> str:\n        return \"hi\"\n\n\nclass Other:\n    def greet(self) -> str:\n        return \"other\"\n\n\ndef make_greeter() -> Greeter:\n    return Greeter()\n",
    );
    write(
        r,
        "main.py",
        "from lib import make_greeter\n\n\ndef main() -> str:\n    return make_greeter().greet()\n",
    );
    let mut c = Client::start(r, &[]);
    initialize(&mut c, json!({}));
    let rows = vec![
        row(
            "references by name alone",
            "lsp",
            json!({"operation": "references", "symbol": "make_greeter"}),
            Expect::Ok(&["resolved `make_greeter` to lib.py:11", "main.py:5:"]),
        ),
        row(
            "definition by name from the file that imports it",
            "lsp",
            json!({"operation": "definition", "path": "main.py", "symbol": "make_greeter"}),
            Expect::Ok(&["lib.py:11:5: def make_greeter() -> Greeter:"]),
        ),
        row(
            "a method by Class.method",
            "lsp",
            json!({"operation": "hover", "symbol": "Greeter.greet"}),
            Expect::Ok(&["resolved `Greeter.greet` to lib.py:2"]),
        ),
        row(
            "callers by name alone, as a model asks for them",
            "lsp",
            json!({"operation": "incoming_calls", "symbol": "make_greeter"}),
            Expect::Ok(&[
                "main.py:5:12: return make_greeter().greet() — in function main",
                "witness: `make_greeter` occurs",
            ]),
        ),
        row(
            "callees of a function",
            "lsp",
            json!({"operation": "outgoing_calls", "symbol": "main"}),
            Expect::Ok(&["function make_greeter — lib.py:11:5", "(called at line 5)"]),
        ),
        row(
            "text inserted after a definition, by name",
            "edit",
            json!({"path": "lib.py", "symbol": "make_greeter", "insert": "after", "new_string": "def other_greeter() -> Greeter:\n    return Greeter()"}),
            Expect::Ok(&["inserted after function make_greeter"]),
        ),
        row(
            "supertypes the server lacks names it",
            "lsp",
            json!({"operation": "supertypes", "symbol": "Greeter"}),
            Expect::Fix(&["pyright does not offer `supertypes`"]),
        ),
        row(
            "a type hierarchy the server lacks names it and the way on",
            "lsp",
            json!({"operation": "subtypes", "symbol": "Greeter"}),
            Expect::Fix(&["pyright does not offer `subtypes`", "languages"]),
        ),
        row(
            "an ambiguous name names the candidates and the next call",
            "lsp",
            json!({"operation": "references", "symbol": "greet"}),
            Expect::Fix(&["lib.py:2", "lib.py:7", "\"line\""]),
        ),
        row(
            "an ambiguous rename writes nothing",
            "lsp_rename",
            json!({"symbol": "greet", "new_name": "hello"}),
            Expect::Fix(&["lib.py:2", "lib.py:7"]),
        ),
        row(
            "a rename checked before it is written",
            "lsp_rename",
            json!({"symbol": "make_greeter", "new_name": "new_greeter", "dry_run": true}),
            Expect::Ok(&["dry run: nothing was written", "would write", "main.py"]),
        ),
        row(
            "an edit checked before it is written",
            "edit",
            json!({"path": "main.py", "old_string": "make_greeter()", "new_string": "make_greeter(1)", "dry_run": true}),
            Expect::Ok(&[
                "dry run: nothing was written",
                "Expected 0 positional arguments",
            ]),
        ),
        row(
            "a method replaced by its name path, re-indented",
            "edit",
            json!({"path": "lib.py", "symbol": "Other.greet", "new_string": "def greet(self) -> str:\n    return \"other!\""}),
            Expect::Ok(&["replaced method Other.greet (line 7)"]),
        ),
        row(
            "an ambiguous symbol edit names the candidates",
            "edit",
            json!({"path": "lib.py", "symbol": "greet", "new_string": "x"}),
            Expect::Fix(&[
                "lib.py:2 method Greeter.greet",
                "lib.py:7 method Other.greet",
            ]),
        ),
        row(
            "a file move a server cannot plan names the way on",
            "lsp_rename",
            json!({"path": "lib.py", "new_path": "pkg/lib.py"}),
            Expect::Fix(&["does not offer `workspace/willRenameFiles`", "apply_patch"]),
        ),
        row(
            "a rename by name alone",
            "lsp_rename",
            json!({"symbol": "make_greeter", "new_name": "new_greeter"}),
            Expect::Ok(&["main.py", "lib.py"]),
        ),
    ];
    run_rows(&mut c, rows, &Value::Null);
    let main = std::fs::read_to_string(r.join("main.py")).unwrap();
    assert!(main.contains("from lib import new_greeter"), "{main}");
    let lib = std::fs::read_to_string(r.join("lib.py")).unwrap();
    assert!(
        lib.contains("def greet(self)"),
        "the ambiguous rename wrote: {lib}"
    );
}
