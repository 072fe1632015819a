//! `lsp` against the real pyright on files whose lines end with a lone `\r`, and with all three
//! endings mixed. The server counts lines as the LSP specification does (`\n`, `\r\n` or a lone
//! `\r`), and so must the tool: the `line` argument names that line, and the text printed for a
//! server's line N is line N (issue 23). Before, a lone `\r` ended no line: `hover line=2` on a
//! CR-only file was "not a line" of a one-line file, and a server's line printed another line's
//! text, or none.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;

use common::*;
use serde_json::json;

/// Lines 1–6: `def make_greeter(name):`, `    return "hi " + name`, (empty), (empty),
/// `def use():`, `    return make_greeter("x")`.
const CR_ONLY: &str = "def make_greeter(name):\r    return \"hi \" + name\r\r\rdef use():\r    return make_greeter(\"x\")\r";
/// Lines 1–5: `import os`, `def make_greeter(name):`, `    return name`, (empty),
/// `x = make_greeter(os.sep)` — ended by `\n`, `\r\n`, `\r`, `\r\n`, `\n`.
const MIXED: &str =
    "import os\ndef make_greeter(name):\r\n    return name\r\r\nx = make_greeter(os.sep)\n";
/// Line 3 uses an undefined name.
const BAD: &str = "x = 1\r\ry = undefined_thing\r";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_lines_end_at_lf_crlf_and_lone_cr() {
    require("pyright-langserver");
    let fx = fixture("", config("python", "pyright"));
    for (name, text) in [
        (
            "pyproject.toml",
            "[project]\nname = \"endings\"\nversion = \"0.1.0\"\n",
        ),
        ("cr.py", CR_ONLY),
        ("mixed.py", MIXED),
        ("bad.py", BAD),
    ] {
        std::fs::write(fx.root.join(name), text).unwrap();
    }
    let cases = [
        ok(
            json!({"operation": "hover", "file": "cr.py", "line": 2, "symbol": "name"}),
            &["name"],
        ),
        ok(
            json!({"operation": "definition", "file": "cr.py", "line": 6, "symbol": "make_greeter"}),
            &["cr.py:1:5: def make_greeter(name):"],
        ),
        ok(
            json!({"operation": "references", "file": "cr.py", "line": 1, "symbol": "make_greeter"}),
            &[
                "cr.py:1:5: def make_greeter(name):",
                "cr.py:6:12: return make_greeter(\"x\")",
            ],
        ),
        ok(
            json!({"operation": "hover", "file": "mixed.py", "line": 5, "symbol": "make_greeter"}),
            &["make_greeter"],
        ),
        ok(
            json!({"operation": "definition", "file": "mixed.py", "line": 5, "symbol": "make_greeter"}),
            &["mixed.py:2:5: def make_greeter(name):"],
        ),
        ok(
            json!({"operation": "references", "file": "mixed.py", "line": 3, "symbol": "name"}),
            &[
                "mixed.py:2:18: def make_greeter(name):",
                "mixed.py:3:12: return name",
            ],
        ),
        ok(
            json!({"operation": "diagnostics", "file": "bad.py"}),
            &["bad.py:3:5: error", "\n    y = undefined_thing"],
        ),
        // A line past the last is refused with the count of lines as `read` shows them.
        err(
            json!({"operation": "hover", "file": "cr.py", "line": 7, "symbol": "x"}),
            &["`line` = 7 is not a line of `cr.py` (it has 6 lines"],
        ),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let out = fx.lsp(case.args.clone()).await;
        let text = fx.red(&out.text);
        if out.is_error != case.error || case.expect.iter().any(|e| !text.contains(e)) {
            failures.push(format!(
                "{}: want {:?} (error: {}), got (error: {}):\n{text}",
                case.args, case.expect, case.error, out.is_error
            ));
        }
    }
    // A rename edits the lines the server named: every occurrence in place, the endings kept.
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "cr.py", "line": 1, "symbol": "make_greeter", "new_name": "build_greeter"}),
        )
        .await;
    let want = CR_ONLY.replace("make_greeter", "build_greeter");
    if out.is_error || fx.read("cr.py") != want {
        failures.push(format!(
            "lsp_rename in cr.py: want the file {want:?}, got {:?}:\n{}",
            fx.read("cr.py"),
            fx.red(&out.text)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
