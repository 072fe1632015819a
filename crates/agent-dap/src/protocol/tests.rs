//! Unit tests of `protocol`: the shapes real adapters send are read, a body of another shape
//! is an error naming the command and the field, and what is sent has the wire's names.

use super::*;
use agent_rpc::Request;
use agent_rpc::request::{params, reply};
use serde_json::Value;

/// JSON text as a value.
fn wire(text: &str) -> Value {
    serde_json::from_str(text).expect("the case is JSON")
}

/// Read `body` (JSON text, as an adapter sends it) as `R`'s reply and render it (`Debug`), or
/// the error.
fn read<R: Request>(body: &str) -> String
where
    R::Result: std::fmt::Debug,
{
    match reply::<R>(wire(body)) {
        Ok(r) => format!("{r:?}"),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn replies_are_read_as_real_adapters_send_them() {
    let cases: [(String, &str); 10] = [
        // debugpy's capabilities (abridged): extra fields ignored.
        (
            read::<Initialize>(
                r#"{"supportsConfigurationDoneRequest": true, "supportsExceptionInfoRequest": true, "exceptionBreakpointFilters": [{"filter": "raised", "label": "Raised Exceptions", "default": false}, {"filter": "uncaught", "label": "Uncaught Exceptions", "default": true}], "supportsGotoTargetsRequest": true}"#,
            ),
            r#"Some(Capabilities { supports_configuration_done_request: true, supports_function_breakpoints: false, supports_conditional_breakpoints: false, supports_hit_conditional_breakpoints: false, supports_log_points: false, supports_exception_info_request: true, exception_breakpoint_filters: List([ExceptionBreakpointsFilter { filter: "raised" }, ExceptionBreakpointsFilter { filter: "uncaught" }]) })"#,
        ),
        // No body, and a list sent as null: nothing offered.
        (read::<Initialize>("null"), "None"),
        (
            read::<Initialize>(r#"{"exceptionBreakpointFilters": null}"#),
            "Some(Capabilities { supports_configuration_done_request: false, supports_function_breakpoints: false, supports_conditional_breakpoints: false, supports_hit_conditional_breakpoints: false, supports_log_points: false, supports_exception_info_request: false, exception_breakpoint_filters: List([]) })",
        ),
        // lldb-dap: a frame without source has line 0; delve: a runtime frame with a path.
        (
            read::<StackTrace>(
                r#"{"stackFrames": [{"id": 1, "name": "main", "line": 7, "column": 5, "source": {"name": "main.c", "path": "/w/main.c"}}, {"id": 2, "name": "_start", "line": 0, "column": 0, "instructionPointerReference": "0x1"}, {"id": 3, "name": "runtime.main", "source": {"path": "/usr/lib/go/src/runtime/proc.go"}}], "totalFrames": 3}"#,
            ),
            r#"StackTraceBody { stack_frames: List([StackFrame { id: 1, name: "main", source: Some(Source { path: Some("/w/main.c"), name: Some("main.c") }), line: Some(7) }, StackFrame { id: 2, name: "_start", source: None, line: None }, StackFrame { id: 3, name: "runtime.main", source: Some(Source { path: Some("/usr/lib/go/src/runtime/proc.go"), name: None }), line: None }]), total_frames: Some(3) }"#,
        ),
        (
            read::<Scopes>(
                r#"{"scopes": [{"name": "Locals", "variablesReference": 4, "namedVariables": 2}]}"#,
            ),
            r#"ScopesBody { scopes: List([Scope { name: "Locals", variables_reference: 4, named_variables: Some(2), expensive: false }]) }"#,
        ),
        (
            read::<Variables>(
                r#"{"variables": [{"name": "special variables", "value": "", "variablesReference": 9, "presentationHint": {"kind": "class"}}]}"#,
            ),
            r#"VariablesBody { variables: List([Variable { name: "special variables", value: "", ty: None, variables_reference: 9 }]) }"#,
        ),
        (
            read::<SetBreakpoints>(
                r#"{"breakpoints": [{"verified": false, "message": "no code", "line": 99}, {"verified": true, "id": 2}]}"#,
            ),
            r#"Breakpoints { breakpoints: List([Breakpoint { verified: false, message: Some("no code"), source: None, line: Some(99) }, Breakpoint { verified: true, message: None, source: None, line: None }]) }"#,
        ),
        (
            read::<ExceptionInfo>(
                r#"{"exceptionId": "ValueError", "breakMode": "unhandled", "details": {"message": "bad value"}}"#,
            ),
            r#"ExceptionInfoBody { exception_id: "ValueError", description: None, details: Some(ExceptionDetails { message: Some("bad value") }) }"#,
        ),
        // A frame without a name, a variable whose reference is a string: named, not defaulted.
        (
            read::<StackTrace>(r#"{"stackFrames": [{"id": 1, "line": 3}]}"#),
            "error: the peer's stackTrace reply is malformed: missing field `name`",
        ),
        (
            read::<Variables>(
                r#"{"variables": [{"name": "x", "value": "1", "variablesReference": "0"}]}"#,
            ),
            "error: the peer's variables reply is malformed: invalid type: string \"0\", expected i64",
        ),
    ];
    for (got, expect) in cases {
        assert_eq!(got, expect);
    }
}

#[test]
fn arguments_carry_the_wire_names() {
    let init = params::<Initialize>(&InitializeArguments::new("debugpy")).unwrap();
    assert_eq!(init["clientID"], "agent-dap");
    assert_eq!(init["adapterID"], "debugpy");
    assert_eq!(init["linesStartAt1"], true);
    assert_eq!(init["supportsRunInTerminalRequest"], false);
    let set = SetBreakpointsArguments {
        source: Source {
            path: Some("/w/a.py".into()),
            name: Some("a.py".into()),
        },
        breakpoints: vec![SourceBreakpoint {
            line: 4,
            condition: None,
            hit_condition: Some("2".into()),
            log_message: None,
        }],
        lines: vec![4],
        source_modified: false,
    };
    assert_eq!(
        params::<SetBreakpoints>(&set).unwrap(),
        wire(
            r#"{"source": {"path": "/w/a.py", "name": "a.py"}, "breakpoints": [{"line": 4, "hitCondition": "2"}], "lines": [4], "sourceModified": false}"#
        )
    );
    assert_eq!(
        params::<StackTrace>(&StackTraceArguments {
            thread_id: 1,
            start_frame: 0,
            levels: 5
        })
        .unwrap(),
        wire(r#"{"threadId": 1, "startFrame": 0, "levels": 5}"#)
    );
    assert_eq!(params::<Threads>(&NoArguments {}).unwrap(), wire(r#"{}"#));
}

#[test]
fn events_are_read_by_name() {
    let cases = [
        (
            "stopped",
            r#"{"reason": "exception", "text": "ValueError", "threadId": 1, "allThreadsStopped": true}"#,
            r#"Ok(Stopped(StoppedBody { reason: "exception", description: None, text: Some("ValueError"), thread_id: Some(1) }))"#,
        ),
        ("terminated", "null", "Ok(Terminated)"),
        ("terminated", r#"{"restart": false}"#, "Ok(Terminated)"),
        ("initialized", "null", "Ok(Initialized)"),
        (
            "process",
            r#"{"name": "demo", "systemProcessId": 42, "startMethod": "launch"}"#,
            "Ok(Process(ProcessBody { system_process_id: Some(42) }))",
        ),
        (
            "output",
            r#"{"output": "x"}"#,
            r#"Ok(Output(OutputBody { category: None, output: "x" }))"#,
        ),
        (
            "thread",
            r#"{"reason": "started", "threadId": 1}"#,
            "Ok(Other)",
        ),
        (
            "exited",
            "null",
            r#"Err(Malformed { method: "exited", what: "notification", detail: "invalid type: null, expected struct ExitedBody" })"#,
        ),
    ];
    for (name, body, expect) in cases {
        assert_eq!(
            format!("{:?}", Event::read(name, wire(body))),
            expect,
            "{name}"
        );
    }
}
