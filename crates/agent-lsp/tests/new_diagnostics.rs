//! Diagnostics on write that are really new, against pyright: a problem already in the file is
//! not reported as new by a write that leaves it alone; a write that introduces one reports
//! exactly that one; the budget caps what is shown and says how to see the rest.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;

const HEAD: &str = "The language server reports these new problems";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_what_the_write_introduced_is_new() {
    require("pyright-langserver");
    let fx = fixture("", config("python", "pyright"));
    std::fs::write(fx.root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    // The file already has a type error before the run writes anything.
    let old = "def f() -> int:\n    return \"not an int\"\n";
    std::fs::write(fx.root.join("mod.py"), old).unwrap();

    // A comment-only write: the old error is not new.
    let out = fx.write("mod.py", &format!("# a comment\n{old}")).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        !out.text.contains(HEAD),
        "old error reported as new:\n{}",
        out.text
    );
    assert!(
        !out.text.contains("not checked for newness"),
        "{}",
        out.text
    );
    // Silence is never the answer: the state of the check is said.
    assert!(
        out.text.contains(
            "No new problems (pyright on `mod.py`: fresh for the written content; checked mod.py;"
        ),
        "{}",
        out.text
    );

    // A write that adds one error reports exactly that one.
    let out = fx
        .write(
            "mod.py",
            &format!("# a comment\n{old}\ndef g() -> str:\n    return 42\n"),
        )
        .await;
    let text = fx.red(&out.text);
    assert!(text.contains(HEAD), "{text}");
    let reported: Vec<&str> = text.lines().filter(|l| l.starts_with("mod.py:")).collect();
    assert_eq!(reported.len(), 1, "{text}");
    assert!(reported[0].starts_with("mod.py:6:"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_caps_and_counts() {
    require("pyright-langserver");
    let fx = fixture("", config("python", "pyright"));
    std::fs::write(fx.root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(fx.root.join("many.py"), "x = 1\n").unwrap();
    let bad: String = (0..12)
        .map(|i| format!("def f{i}() -> int:\n    return \"s{i}\"\n"))
        .collect();
    let out = fx.write("many.py", &bad).await;
    let text = fx.red(&out.text);
    let shown = text.lines().filter(|l| l.starts_with("many.py:")).count();
    assert_eq!(shown, 10, "{text}");
    assert!(
        text.contains("(2 more in `many.py` not shown: lsp {\"operation\": \"diagnostics\", \"file\": \"many.py\"} lists all)"),
        "{text}"
    );
}

/// A change that breaks a caller in another open file (gopls publishes for it): the caller's new
/// error is listed separately, as possibly related — never as a problem of the written file.
/// (Servers that answer diagnostics only when asked — pull, like pyright — publish nothing for
/// other files, so nothing is listed for them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problems_in_other_files_are_listed_apart() {
    require("gopls");
    require("go");
    let fx = fixture("go", config("go", "gopls"));
    // Open main.go (its diagnostics are known: none).
    let main = fx.read("main.go");
    let out = fx.write("main.go", &format!("{main}\n")).await;
    assert!(!out.is_error, "{}", out.text);
    // `again` returns a Greeter: once MakeGreeter returns an int, main.go breaks.
    let lib = fx.read("lib.go").replace(
        "func MakeGreeter() Greeter {\n\treturn Greeter{Name: \"x\"}\n}",
        "func MakeGreeter() int {\n\treturn 1\n}",
    );
    let out = fx.write("lib.go", &lib).await;
    let text = fx.red(&out.text);
    assert!(
        text.contains("Problems that appeared in other files since the write"),
        "{text}"
    );
    assert!(text.contains("main.go:"), "{text}");
    assert!(!text.contains("lib.go:"), "{text}");
}
