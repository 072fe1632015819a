//! "Why does this test fail? Step through it.": one test under the debugger — pytest under
//! debugpy (by `test`, and by `module` + `args`), a Go test in delve's test mode, a Rust test
//! binary built by `cargo test --no-run` under lldb-dap — each stopped at a breakpoint inside
//! the test, the stop shown as for any launch.

use crate::common::{Fixture, config, filters, require};
use serde_json::json;

const PY_TEST: &str = r#"def add(a, b):
    return a + b


def test_add():
    x = 2
    got = add(x, 3)
    assert got == 6


def test_other():
    assert False
"#;

fn python_fixture() -> Fixture {
    require("python3");
    let f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("tests/test_calc.py", PY_TEST),
        ],
        config(),
    );
    f.link_venv();
    f
}

/// The stop's frames below the test's own depend on the runner's and toolchain's versions: the
/// snapshot keeps the top frame.
fn stop_filters() -> Vec<(&'static str, &'static str)> {
    let mut filters = filters();
    filters.push((r"\n#[1-9] frame_id \[id\]: [^\n]*", ""));
    filters.push((r"… \d+ more frame\(s\)", "… [n] more frame(s)"));
    filters.push((r"demo-[0-9a-f]{16}", "demo-[hash]"));
    // Go's `testing.T` has other fields in other Go versions.
    filters.push((r"- t: \*testing\.T = [^\n]*", "- t: *testing.T = [value]"));
    filters
}

/// `test` + the test's file: pytest runs that one test under debugpy and stops inside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_test_under_debugpy() {
    let mut f = python_fixture();
    f.ok(json!({"operation": "breakpoints", "path": "tests/test_calc.py", "lines": [8]}))
        .await;
    let launched = f
        .ok(json!({"operation": "launch", "test": "test_add", "program": "tests/test_calc.py"}))
        .await;
    for shown in [
        "launched test test_add in tests/test_calc.py (pytest) with debugpy",
        "stopped (breakpoint) at test_add (tests/test_calc.py:8)",
        ">  8 |     assert got == 6",
        "- got: int = 5",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    assert_eq!(launched.structured.as_ref().unwrap()["line"], 8);
    // Only that test ran: the other one, which fails, was not collected.
    let done = f.ok(json!({"operation": "continue"})).await;
    assert!(done.text.contains("exited with code 1"), "{}", done.text);
    let out = f.ok(json!({"operation": "output", "cursor": 0})).await;
    assert!(
        out.text.contains("1 failed") && !out.text.contains("test_other"),
        "{}",
        out.text
    );
    f.finish().await;
    let transcript: String = f
        .redacted()
        .split("\n\n> continue")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::with_settings!({filters => stop_filters()}, {
        insta::assert_snapshot!(transcript);
    });
}

/// `module` + `args`, with the old names `op` and `file`: `python -m pytest FILE::NAME`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_module_with_args_and_old_names() {
    let mut f = python_fixture();
    f.ok(json!({"op": "breakpoints", "file": "tests/test_calc.py", "lines": [7]}))
        .await;
    let launched = f
        .ok(json!({"op": "launch", "module": "pytest", "args": ["-q", "tests/test_calc.py::test_add"]}))
        .await;
    for shown in [
        "launched python -m pytest with debugpy",
        "stopped (breakpoint) at test_add (tests/test_calc.py:7)",
        "> 7 |     got = add(x, 3)",
        "- x: int = 2",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    f.finish().await;
}

const GO_CALC: &str = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";

const GO_TEST: &str = r#"package calc

import "testing"

func TestAdd(t *testing.T) {
	got := Add(2, 3)
	if got != 6 {
		t.Errorf("Add(2, 3) = %d", got)
	}
}

func TestOther(t *testing.T) {
	t.Fatal("not this one")
}
"#;

/// `test` + a Go package: delve's test mode with `-test.run ^TestAdd$`, stopped inside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_test_under_delve_test_mode() {
    require("go");
    require("dlv");
    let mut f = Fixture::new(
        &[
            ("go.mod", "module demo\n\ngo 1.19\n"),
            ("calc/calc.go", GO_CALC),
            ("calc/calc_test.go", GO_TEST),
        ],
        config(),
    );
    f.ok(json!({"operation": "breakpoints", "path": "calc/calc_test.go", "lines": [7]}))
        .await;
    let launched = f
        .ok(json!({"operation": "launch", "test": "TestAdd", "program": "calc"}))
        .await;
    for shown in [
        "launched test TestAdd in calc (go test) with delve",
        "at demo/calc.TestAdd (calc/calc_test.go:7)",
        "> 7 | \tif got != 6 {",
        "- got: int = 5",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    assert_eq!(launched.structured.as_ref().unwrap()["line"], 7);
    let done = f.ok(json!({"operation": "continue"})).await;
    let out = f.ok(json!({"operation": "output", "cursor": 0})).await;
    assert!(
        out.text.contains("Add(2, 3) = 5") && !out.text.contains("not this one"),
        "{}\n{}",
        done.text,
        out.text
    );
    // Delve built the test binary outside the workspace.
    let left: Vec<String> = std::fs::read_dir(f.root().join("calc"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("__debug_bin"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
    f.finish().await;
    let transcript: String = f
        .redacted()
        .split("\n\n> continue")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::with_settings!({filters => stop_filters()}, {
        insta::assert_snapshot!(transcript);
    });
}

const RUST_LIB: &str = r#"pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        let got = add(2, 3);
        assert_eq!(got, 6);
    }

    #[test]
    fn other() {
        panic!("not this one");
    }
}
"#;

/// `test` + a Rust file: `cargo test --no-run` builds the test binary (the result says so), the
/// binary holding `adds` runs `tests::adds --exact --nocapture` under lldb-dap, stopped inside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_test_binary_under_lldb() {
    require("cargo");
    let mut f = Fixture::new(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", RUST_LIB),
        ],
        config(),
    );
    // The test's own cargo build goes to the fixture, not the target directory the tests run
    // from (which the outer cargo holds).
    let target = f.root().join("target").display().to_string();
    f.ok(json!({"operation": "breakpoints", "path": "src/lib.rs", "lines": [12]}))
        .await;
    let launched = f
        .ok(json!({
            "operation": "launch", "test": "adds", "program": "src/lib.rs",
            "env": {"CARGO_TARGET_DIR": target},
        }))
        .await;
    for shown in [
        "launched test tests::adds in src/lib.rs (cargo test) with lldb",
        "built by `cargo test --no-run --message-format=json --manifest-path Cargo.toml`: target/debug/deps/demo-",
        "(the lib demo test binary)",
        "at demo::tests::adds",
        "(src/lib.rs:12)",
        "> 12 |         assert_eq!(got, 6);",
        "- got: int = 5",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    let snap = launched.structured.as_ref().unwrap();
    assert_eq!(snap["line"], 12, "{snap}");
    assert_eq!(snap["built"]["target"], "lib demo", "{snap}");
    let done = f.ok(json!({"operation": "continue"})).await;
    let out = f.ok(json!({"operation": "output", "cursor": 0})).await;
    assert!(
        out.text.contains("running 1 test") && !out.text.contains("not this one"),
        "{}\n{}",
        done.text,
        out.text
    );
    f.finish().await;
    let transcript: String = f
        .redacted()
        .split("\n\n> continue")
        .next()
        .unwrap_or_default()
        .to_string();
    insta::with_settings!({filters => stop_filters()}, {
        insta::assert_snapshot!(transcript);
    });
}

/// A test name that is not there, or names several: the error lists what to pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_test_not_found_lists_the_tests() {
    require("cargo");
    let mut f = Fixture::new(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", RUST_LIB),
        ],
        config(),
    );
    let target = f.root().join("target").display().to_string();
    let err = f
        .err(json!({
            "operation": "launch", "test": "missing", "program": ".",
            "env": {"CARGO_TARGET_DIR": target},
        }))
        .await;
    assert_eq!(
        err.text,
        "`launch` needs `test`: no test `missing` in what `cargo test --no-run --message-format=json --manifest-path Cargo.toml` built (lib demo); pass one of: tests::adds, tests::other"
    );
}
