//! Unit tests of `args`.

use super::*;

/// Parse `args` (JSON, as a model writes it; read as the registry reads it, from a value) and
/// render the command or the error.
fn check(args: &str, expect: &str) {
    let value: serde_json::Value = serde_json::from_str(args).expect("the case is JSON");
    let parsed = serde_json::from_value::<DebugArgs>(value)
        .map_err(|e| e.to_string())
        .and_then(|a| DebugCommand::parse(a).map_err(|e| e.to_string()));
    let got = match parsed {
        Ok(c) => format!("{c:?}"),
        Err(e) => format!("error: {e}"),
    };
    assert_eq!(got, expect, "{args}");
}

#[test]
fn parses_each_operation_into_its_fields() {
    let cases = [
        (r#"{"operation": "status"}"#, "Status"),
        (
            r#"{"op": "breakpoints", "file": "a.py", "lines": []}"#,
            r#"Breakpoints { file: "a.py", lines: [], options: BreakpointOptions { condition: None, hit_count: None, log_message: None } }"#,
        ),
        (
            r#"{"op": "breakpoints", "function": "main.helper", "condition": "n > 1"}"#,
            r#"FunctionBreakpoints { names: ["main.helper"], options: BreakpointOptions { condition: Some("n > 1"), hit_count: None, log_message: None } }"#,
        ),
        (
            r#"{"op": "breakpoints", "function": []}"#,
            "FunctionBreakpoints { names: [], options: BreakpointOptions { condition: None, hit_count: None, log_message: None } }",
        ),
        (
            r#"{"op": "launch", "program": "a.py", "file": "ignored.py"}"#,
            r#"Launch { target: Program("a.py"), args: [], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        // `path` (the file argument of every tool) stands for `program` when that is absent.
        (
            r#"{"operation": "launch", "path": "a.py"}"#,
            r#"Launch { target: Program("a.py"), args: [], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        (
            r#"{"operation": "launch", "module": "pytest", "args": ["-x"]}"#,
            r#"Launch { target: Module("pytest"), args: ["-x"], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        (
            r#"{"operation": "launch", "test": "test_y", "program": "tests/test_x.py"}"#,
            r#"Launch { target: Test { path: "tests/test_x.py", name: "test_y" }, args: [], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        (
            r#"{"operation": "launch", "test": "TestY", "path": "pkg"}"#,
            r#"Launch { target: Test { path: "pkg", name: "TestY" }, args: [], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        (
            r#"{"operation": "launch", "test": "tests/test_x.py::TestC::test_y"}"#,
            r#"Launch { target: Test { path: "tests/test_x.py", name: "TestC::test_y" }, args: [], cwd: None, env: {}, adapter: None, exceptions: Uncaught }"#,
        ),
        // The old names still work: `op` for `operation`, `file` for `path`.
        (
            r#"{"operation": "breakpoints", "path": "a.py", "lines": [2]}"#,
            r#"Breakpoints { file: "a.py", lines: [2], options: BreakpointOptions { condition: None, hit_count: None, log_message: None } }"#,
        ),
        (
            r#"{"op": "attach", "port": 5678, "adapter": "lldb", "exceptions": "all"}"#,
            "Attach { port: 5678, adapter: Some(Lldb), exceptions: All }",
        ),
        (
            r#"{"op": "step_in", "thread_id": 3}"#,
            "Move { motion: StepIn, thread_id: Some(3) }",
        ),
        (
            r#"{"op": "evaluate", "expression": "x"}"#,
            r#"Evaluate { expression: "x", frame_id: None }"#,
        ),
        (
            r#"{"op": "output", "cursor": 0}"#,
            "Output { cursor: Some(0) }",
        ),
    ];
    for (args, expect) in cases {
        check(args, expect);
    }
}

#[test]
fn argument_errors_name_the_argument() {
    let cases = [
        (
            r#"{"op": "evaluate"}"#,
            "error: `evaluate` needs `expression`: the expression to evaluate",
        ),
        (
            r#"{"op": "attach", "port": 0}"#,
            "error: `attach` needs `port`: port 0 is not a port anything listens on; pass the debuggee's port, from 1 to 65535",
        ),
        (
            r#"{"op": "breakpoints", "file": "a.py", "lines": [3, 0]}"#,
            "error: `breakpoints` needs `lines`: line 0 is invalid; lines are 1-based",
        ),
        (
            r#"{"op": "breakpoints", "function": ["add"], "file": "a.c"}"#,
            "error: `breakpoints` needs `function`: pass either `function` (function names) or `path` and `lines`, not both",
        ),
        (
            r#"{"op": "breakpoints", "function": ["add"], "log_message": "x"}"#,
            "error: `breakpoints` needs `log_message`: a function breakpoint cannot log; set a log_message on `path` and `lines`",
        ),
        (
            r#"{"operation": "breakpoints", "lines": [1]}"#,
            "error: `breakpoints` needs `path`: the source file, relative to the workspace root (or `function`: function names)",
        ),
        // Launch combinations that cannot be meant: each names the one fix.
        (
            r#"{"operation": "launch", "module": "pytest", "test": "test_y", "program": "t.py"}"#,
            "error: `launch`: drop `module`; `test` runs pytest, go test or cargo test itself, on `program` (the test's file or package)",
        ),
        (
            r#"{"operation": "launch", "module": "pytest", "program": "t.py"}"#,
            "error: `launch`: pass `module` (run as python -m MODULE, `args` after it) or `program`, not both",
        ),
        (
            r#"{"operation": "launch", "module": "pytest", "adapter": "lldb"}"#,
            "error: `launch`: drop `adapter`; `module` runs as python -m under debugpy",
        ),
        (
            r#"{"operation": "launch", "test": "TestY"}"#,
            "error: `launch` needs `program`: with `test`, the test's file (.py, .go, .rs) or package directory, relative to the workspace root",
        ),
        (
            r#"{"operation": "launch", "test": " ", "program": "pkg"}"#,
            "error: `launch` needs `test`: it is empty; pass the test's name, such as `test_parse` or `TestParse`",
        ),
        (
            r#"{"operation": "launch", "operation_": 1}"#,
            "error: unknown field `operation_`, expected one of `op`, `operation`, `file`, `path`, `lines`, `function`, `condition`, `hit_count`, `log_message`, `program`, `module`, `test`, `args`, `cwd`, `env`, `adapter`, `port`, `exceptions`, `thread_id`, `frame_id`, `reference`, `expression`, `cursor`, `reveal`",
        ),
    ];
    for (args, expect) in cases {
        check(args, expect);
    }
}

/// The filters each setting turns on, for what debugpy, lldb-dap, delve and dart advertise.
#[test]
fn exceptions_map_onto_advertised_filters() {
    let debugpy = ["raised", "uncaught", "userUnhandled"];
    let lldb = ["cpp_catch", "cpp_throw", "objc_catch", "objc_throw"];
    let dart = ["All", "Unhandled"];
    assert_eq!(Exceptions::Uncaught.filters(&debugpy), ["uncaught"]);
    assert_eq!(Exceptions::All.filters(&debugpy), ["raised", "uncaught"]);
    assert!(Exceptions::None.filters(&debugpy).is_empty());
    assert!(Exceptions::Uncaught.filters(&lldb).is_empty());
    assert_eq!(Exceptions::All.filters(&lldb), ["cpp_throw", "objc_throw"]);
    assert!(Exceptions::All.filters(&[]).is_empty());
    assert_eq!(Exceptions::Uncaught.filters(&dart), ["Unhandled"]);
    assert_eq!(Exceptions::All.filters(&dart), ["All", "Unhandled"]);
}

#[test]
fn every_motion_names_its_request() {
    let all = [
        Motion::Continue,
        Motion::Pause,
        Motion::StepOver,
        Motion::StepIn,
        Motion::StepOut,
    ];
    let names: Vec<_> = all.iter().map(|m| (m.name(), m.request())).collect();
    assert_eq!(
        names,
        [
            ("continue", "continue"),
            ("pause", "pause"),
            ("step_over", "next"),
            ("step_in", "stepIn"),
            ("step_out", "stepOut"),
        ]
    );
}
