//! Issue 38: a change made outside our write tools (a client's own Edit, a cell, a person) is
//! found at the next call of any tool, checked like a write (the same ledger and baseline: only
//! what the change introduced, once), and carried by that call's answer, naming the file. A
//! write by our own tools is reported by its own call only.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

const OUTSIDE: &str = "Changed outside agent-tools' write tools: `app.py`.";
const NEW: &str = "The language server reports these new problems";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_outside_is_checked_at_the_next_call_of_any_tool_once() {
    require("pyright-langserver");
    let fx = fixture("", config("python", "pyright"));
    std::fs::write(fx.root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    // One problem is there before the run: it is never reported as new.
    let old =
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\nx: int = \"already wrong\"\n";
    std::fs::write(fx.root.join("app.py"), old).unwrap();
    std::fs::write(fx.root.join("other.py"), "y = 1\n").unwrap();
    let out = fx
        .lsp(json!({"operation": "diagnostics", "file": "app.py"}))
        .await;
    assert!(out.text.contains("already wrong"), "{}", out.text);
    assert!(!out.text.contains("Changed outside"), "{}", out.text);

    // Outside: a type error, written the way a client's own edit tool writes it.
    let broken = old.replace("return \"hi \" + name", "return 42");
    std::fs::write(fx.root.join("app.py"), &broken).unwrap();

    // The next call, of a tool on another file, carries the new problem, and only it.
    let out = fx
        .lsp(json!({"operation": "symbols", "file": "other.py"}))
        .await;
    let text = fx.red(&out.text);
    assert!(text.contains(OUTSIDE), "{text}");
    assert!(
        text.contains(NEW),
        "{text}\n{:#}",
        out.structured.as_ref().unwrap()
    );
    let reported: Vec<&str> = text.lines().filter(|l| l.starts_with("app.py:")).collect();
    assert_eq!(reported.len(), 1, "only the new problem:\n{text}");
    assert!(
        reported[0].starts_with("app.py:2:") && reported[0].contains("is not assignable"),
        "{text}"
    );
    let structured = out.structured.as_ref().unwrap();
    assert_eq!(
        structured["changed_outside"]["changed_outside"],
        json!(["app.py"]),
        "{structured}"
    );

    // Once: the next call says nothing more about it.
    let out = fx
        .lsp(json!({"operation": "symbols", "file": "other.py"}))
        .await;
    assert!(!out.text.contains("Changed outside"), "{}", out.text);

    // A second outside change, found by a call on the changed file itself (whose own sync
    // must not hide it): a new problem on line 5's neighbour.
    let again = format!("{broken}\n\nz: str = 3\n");
    std::fs::write(fx.root.join("app.py"), &again).unwrap();
    let out = fx
        .lsp(json!({"operation": "hover", "file": "app.py", "line": 1, "symbol": "greet"}))
        .await;
    let text = fx.red(&out.text);
    assert!(text.contains("(name: str) -> str"), "{text}");
    assert!(text.contains(OUTSIDE), "{text}");
    let reported: Vec<&str> = text.lines().filter(|l| l.starts_with("app.py:")).collect();
    assert_eq!(reported.len(), 1, "only the newest problem:\n{text}");
    assert!(reported[0].starts_with("app.py:8:"), "{text}");

    // A write through a write tool is its own call's report, never an outside change.
    let out = fx
        .write("app.py", &format!("{again}\nw: bytes = 'no'\n"))
        .await;
    let text = fx.red(&out.text);
    assert!(text.contains("The write succeeded."), "{text}");
    assert!(!text.contains("Changed outside"), "{text}");
    let out = fx
        .lsp(json!({"operation": "symbols", "file": "other.py"}))
        .await;
    assert!(!out.text.contains("Changed outside"), "{}", out.text);
}
