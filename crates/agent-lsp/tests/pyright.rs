//! pyright (npm `pyright`) against the Python fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright() {
    python_cases::run("pyright", "pyright-langserver", true).await;
}

/// The run's symbol locator (what the debugger places function breakpoints with, for an
/// adapter without them) against real pyright: a qualified method, a function found from
/// another file, the name's line and the definition's last line, and nothing for a wrong
/// class.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_locates_functions_by_name() {
    use common::*;
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let locator = fx
        .reg
        .locator()
        .expect("agent-lsp provides the run's locator");
    let near = fx.root.join("main.py");
    let found = locator.locate("Greeter.greet", Some(&near)).await.unwrap();
    assert_eq!(found.by, "pyright");
    let [greet] = found.places.as_slice() else {
        panic!("one definition of Greeter.greet: {found:?}")
    };
    assert_eq!(
        (
            greet.path.as_path(),
            greet.line,
            greet.end_line,
            greet.kind.as_str()
        ),
        (fx.root.join("lib.py").as_path(), 7, Some(9), "method"),
        "{greet:?}"
    );
    let found = locator.locate("make_greeter", Some(&near)).await.unwrap();
    let [make] = found.places.as_slice() else {
        panic!("one make_greeter: {found:?}")
    };
    assert_eq!((make.line, make.end_line), (12, Some(14)), "{make:?}");
    let none = locator.locate("Other.greet", Some(&near)).await.unwrap();
    assert!(none.places.is_empty(), "{none:?}");
    let class = locator.locate("Greeter", Some(&near)).await.unwrap();
    assert!(
        class.places.is_empty(),
        "a class is not a function: {class:?}"
    );
}
