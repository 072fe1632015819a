//! The host binary end to end: `tools` per surface, `call` exit codes, the file tools'
//! confinement and atomicity, and `serve` over MCP stdio driven as a child process.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::{BIN, Client};

fn agent_tools(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .expect("run agent-tools");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn call(root: &Path, tool: &str, args: Value) -> (i32, String) {
    let (code, out, err) = agent_tools(root, &["call", tool, &args.to_string()]);
    (code, format!("{out}{err}").trim().to_string())
}

/// The snapshot is of the binary with every family compiled in.
#[cfg(feature = "full")]
#[test]
fn tools_per_surface_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    for surface in ["full", "plan", "read-only"] {
        let (code, out, err) = agent_tools(
            dir.path(),
            &["tools", "--json", "--vibe", "--surface", surface],
        );
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        if surface != "full" {
            for t in v.as_array().unwrap() {
                assert_eq!(t["_meta"]["tier"], "read", "{surface} shows {}", t["name"]);
            }
        }
        insta::assert_json_snapshot!(format!("tools_{surface}"), v);
    }
}

#[test]
fn call_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    assert_eq!(
        call(dir.path(), "read", json!({"path": "a.txt"})),
        (0, "1| alpha\n[a.txt: all 1 line(s)]".to_string())
    );
    let (code, text) = call(dir.path(), "read", json!({"path": "missing.txt"}));
    assert_eq!(code, 1, "{text}");
    let (code, text, err) = agent_tools(dir.path(), &["call", "read", "{oops"]);
    assert_eq!(code, 2, "{text}{err}");
    assert!(err.contains("ARGS_JSON"), "{err}");
    let (code, text, err) = agent_tools(
        dir.path(),
        &[
            "call",
            "write",
            r#"{"path":"b","content":"x"}"#,
            "--surface",
            "plan",
        ],
    );
    assert_eq!(code, 1);
    assert!(
        text.contains("not available on the plan surface"),
        "{text}{err}"
    );
    assert!(!dir.path().join("b").exists());
}

#[test]
fn file_tools_are_confined_to_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    let abs = outside.path().join("secret.txt").display().to_string();
    let cases = [
        ("read", json!({"path": "../x"})),
        ("read", json!({"path": abs})),
        ("read", json!({"path": "escape/secret.txt"})),
        ("write", json!({"path": "escape/new.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "escape/secret.txt", "old_string": "secret", "new_string": "leak"}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/escape/secret.txt\n+++ b/escape/secret.txt\n@@ -1 +1 @@\n-secret\n+leak\n"}),
        ),
    ];
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let outside_s = outside.path().canonicalize().unwrap().display().to_string();
    let mut lines = Vec::new();
    for (tool, args) in cases {
        let (code, text) = call(dir.path(), tool, args);
        assert_eq!(code, 1, "{tool}: {text}");
        lines.push(format!(
            "{tool}: {}",
            text.replace(&root, "[ROOT]")
                .replace(&outside_s, "[OUTSIDE]")
        ));
    }
    insta::assert_snapshot!(lines.join("\n"));
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(!outside.path().join("new.txt").exists());
}

#[test]
fn write_is_atomic_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let (code, text) = call(
        dir.path(),
        "write",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho new\n"
    );
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o750
    );
    // No temp file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // New files get their directories.
    let (code, text) = call(
        dir.path(),
        "write",
        json!({"path": "a/b/c.txt", "content": "deep"}),
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "deep"
    );
}

#[test]
fn edit_refuses_absent_and_ambiguous_strings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.rs"), "let a = 1;\nlet b = 1;\n").unwrap();
    let (c1, absent) = call(
        dir.path(),
        "edit",
        json!({"path": "f.rs", "old_string": "let z", "new_string": "x"}),
    );
    let (c2, ambiguous) = call(
        dir.path(),
        "edit",
        json!({"path": "f.rs", "old_string": "= 1;", "new_string": "= 2;"}),
    );
    assert_eq!((c1, c2), (1, 1));
    insta::assert_snapshot!(format!("{absent}\n{ambiguous}"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.rs")).unwrap(),
        "let a = 1;\nlet b = 1;\n"
    );
    let (code, text) = call(
        dir.path(),
        "edit",
        json!({"path": "f.rs", "old_string": "let b = 1;", "new_string": "let b = 2;"}),
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.rs")).unwrap(),
        "let a = 1;\nlet b = 2;\n"
    );
}

#[test]
fn a_patch_that_does_not_apply_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(dir.path().join("two.txt"), "x\ny\nz\n").unwrap();
    // The first file's hunk applies, the second's does not: neither file may change.
    let patch = "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\
                 --- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n x\n-NOT THERE\n+Y\n z\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 1, "{text}");
    insta::assert_snapshot!(text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "a\nb\nc\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("two.txt")).unwrap(),
        "x\ny\nz\n"
    );
    // A patch whose write fails midway (a read-only file) is rolled back.
    let ro = dir.path().join("two.txt");
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    perm.set_readonly(true);
    std::fs::set_permissions(&ro, perm).unwrap();
    let patch = "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\
                 --- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n";
    let (code, text) = call(dir.path(), "apply_patch", json!({"patch": patch}));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("restored"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "a\nb\nc\n"
    );
    // And a good patch applies to both, reporting the changed files.
    let (code, out, _) = agent_tools(dir.path(), &["call", "apply_patch", &json!({"patch": "--- a/one.txt\n+++ b/one.txt\n@@ -2 +2 @@\n-b\n+B\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n"}).to_string(), "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["structuredContent"]["changed_files"],
        json!(["one.txt", "new.txt"])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "a\nB\nc\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "fresh\n"
    );
}

#[test]
fn serve_speaks_mcp_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello from the root\n").unwrap();
    let mut c = Client::start(dir.path(), &["--surface", "plan"]);
    let init = c.rpc(1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "agent-tools");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = c.rpc(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "read"));
    for t in tools {
        assert_eq!(
            t["annotations"]["readOnlyHint"], true,
            "plan surface lists {}",
            t["name"]
        );
    }
    assert!(!tools.iter().any(|t| t["name"] == "write"));

    let ok = c.rpc(3, "tools/call", json!({"name": "read", "arguments": {"path": "hello.txt"}, "_meta": {"progressToken": "p1"}}));
    assert_eq!(ok["result"]["isError"], false);
    assert_eq!(
        ok["result"]["content"][0]["text"],
        "1| hello from the root\n[hello.txt: all 1 line(s)]"
    );

    // A write on the plan surface is an error result, not a call.
    let refused = c.rpc(
        4,
        "tools/call",
        json!({"name": "write", "arguments": {"path": "x", "content": "y"}}),
    );
    assert_eq!(refused["result"]["isError"], true);
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("plan surface")
    );
    assert!(!dir.path().join("x").exists());

    let bad_args = c.rpc(
        5,
        "tools/call",
        json!({"name": "read", "arguments": {"filename": "hello.txt"}}),
    );
    assert_eq!(bad_args["result"]["isError"], true);
    insta::assert_snapshot!(bad_args["result"]["content"][0]["text"].as_str().unwrap());

    let unknown = c.rpc(6, "resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(c.rpc(7, "ping", json!({}))["result"], json!({}));
}

#[test]
fn serve_reports_progress_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let mut c = Client::start(dir.path(), &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "a.txt"}, "_meta": {"progressToken": "tok"}}}));
    let (resp, notes) = c.until(2);
    assert_eq!(resp["result"]["isError"], false);
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{notes:?}");
    assert_eq!(progress[1]["params"]["progressToken"], "tok");
}

#[test]
fn approval_fails_closed_with_nobody_attached() {
    let dir = tempfile::tempdir().unwrap();
    // stdin is not a terminal here, so no person can approve.
    let (code, out, err) = agent_tools(
        dir.path(),
        &[
            "call",
            "write",
            r#"{"path":"x.txt","content":"x"}"#,
            "--approval",
            "write",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("the call was not made"), "{out}{err}");
    assert!(!dir.path().join("x.txt").exists());
    // Read-tier calls are not gated by `--approval write`.
    std::fs::write(dir.path().join("r.txt"), "r").unwrap();
    let (code, out, _) = agent_tools(
        dir.path(),
        &["call", "read", r#"{"path":"r.txt"}"#, "--approval", "write"],
    );
    assert_eq!((code, out.trim()), (0, "1| r\n[r.txt: all 1 line(s)]"));
}

#[cfg(feature = "ask")]
#[test]
fn ask_user_through_mcp_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}}),
    );
    let ask = json!({"name": "ask_user", "arguments": {
        "question": "Which database should the tests use?",
        "options": [{"label": "sqlite", "description": "fast, in-process"}, {"label": "postgres"}],
        "allow_free_text": false, "multi_select": false}});
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ask}));
    // The server asks the client: an elicitation/create request with the card.
    let req = c.until_method("elicitation/create");
    assert!(
        req["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Which database")
    );
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["choice"]["enum"],
        json!(["sqlite", "postgres"])
    );
    c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept", "content": {"choice": "postgres"}}}));
    let (resp, _) = c.until(2);
    assert_eq!(resp["result"]["isError"], false, "{resp}");
    assert!(
        resp["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("postgres"),
        "{resp}"
    );

    assert_eq!(
        resp["result"]["structuredContent"]["outcome"], "answered",
        "{resp}"
    );

    // Decline: outcome `declined`, a success that says to proceed on a stated assumption.
    let ask2 = json!({"name": "ask_user", "arguments": {"question": "Keep the old API?", "options": [{"label": "yes"}, {"label": "no"}]}});
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ask2}));
    let req = c.until_method("elicitation/create");
    c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "decline"}}));
    let (resp, _) = c.until(3);
    assert_eq!(resp["result"]["isError"], false, "{resp}");
    assert_eq!(
        resp["result"]["structuredContent"]["outcome"], "declined",
        "{resp}"
    );
    assert!(
        resp["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("assumption"),
        "{resp}"
    );
}

/// `--ask-timeout 1` under `serve`: a client that never answers the elicitation gets outcome
/// `timed_out` after about a second.
#[cfg(feature = "ask")]
#[test]
fn ask_timeout_under_serve_gives_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &["--ask-timeout", "1"]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}}),
    );
    let started = std::time::Instant::now();
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_user", "arguments": {"question": "Proceed?", "options": [{"label": "yes"}, {"label": "no"}]}}}));
    let _unanswered = c.until_method("elicitation/create");
    let (resp, _) = c.until(2);
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    assert_eq!(
        resp["result"]["structuredContent"]["outcome"], "timed_out",
        "{resp}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[cfg(feature = "ask")]
#[test]
fn ask_user_is_not_offered_without_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &[]);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    // Not promised: neither in the instructions nor in the list.
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(!instructions.contains("ask_user"), "{instructions}");
    let list = c.rpc(3, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"read") && !names.contains(&"ask_user"),
        "{names:?}"
    );
    // A call anyway fails closed and says why.
    let resp = c.rpc(2, "tools/call", json!({"name": "ask_user", "arguments": {"question": "Proceed?", "options": [{"label": "yes"}, {"label": "no"}]}}));
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    assert_eq!(
        resp["result"]["structuredContent"]["outcome"], "no_operator",
        "{resp}"
    );
    assert!(
        resp["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation"),
        "{resp}"
    );
}

/// A client that declares elicitation is offered ask_user, and the instructions name it.
#[cfg(feature = "ask")]
#[test]
fn ask_user_is_offered_with_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &[]);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}}),
    );
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("ask_user"), "{instructions}");
    let list = c.rpc(2, "tools/list", json!({}));
    assert!(
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "ask_user"),
        "{list}"
    );
}

/// A cancelled call is aborted: its worker wait stops, no response is sent for it, and the host
/// goes on answering.
#[cfg(feature = "vibe")]
#[test]
fn serve_cancels_a_call_in_flight() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let worker = dir.path().join("slow-worker.sh");
    std::fs::write(&worker, "#!/bin/sh\nsleep 30\necho done\n").unwrap();
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Client::start_with(
        dir.path(),
        &["--vibe"],
        &[("AGENT_TOOLS_VIBE_FAST", worker.as_path())],
    );
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    let spawned = c.rpc(
        2,
        "tools/call",
        json!({"name": "vibe_spawn", "arguments": {"brief": "wait", "label": "slow"}}),
    );
    assert_eq!(spawned["result"]["isError"], false, "{spawned}");
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "vibe_wait", "arguments": {"worker_id": "w1", "timeout_seconds": 600}}}));
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "user pressed stop"}}));
    // The host keeps answering, and never answers the cancelled request.
    c.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    let (pong, seen) = c.until(4);
    assert_eq!(pong["result"], json!({}));
    let listed = c.rpc(
        5,
        "tools/call",
        json!({"name": "vibe_list", "arguments": {}}),
    );
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    assert!(
        seen.iter().all(|m| m["id"] != 3),
        "the cancelled call was answered: {seen:?}"
    );
    let killed = c.rpc(
        6,
        "tools/call",
        json!({"name": "vibe_kill", "arguments": {"worker_id": "w1"}}),
    );
    assert_eq!(killed["result"]["isError"], false, "{killed}");
}

/// `repl` with stdin not a terminal: it prints what is attached, runs the calls line by line,
/// and `ask_user` fails closed instead of reading the script's next line as an answer.
#[cfg(feature = "full")]
#[test]
fn repl_reads_calls_line_by_line_and_ask_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first line\n").unwrap();
    let script = "# a comment\n\
                  read {\"path\": \"notes.txt\"}\n\
                  ask_user {\"question\": \"Proceed?\", \"options\": [{\"label\": \"yes\"}, {\"label\": \"no\"}]}\n\
                  1\n\
                  read {\"path\": \"missing.txt\"}\n\
                  quit\n\
                  read {\"path\": \"notes.txt\"}\n";
    let mut child = Command::new(BIN)
        .args(["repl", "--root"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The doctor header comes first.
    assert!(
        stdout.contains("families compiled in: lsp, astgrep, dap, kernel, ask, vibe"),
        "{stdout}"
    );
    assert!(stdout.contains("kernel/python"), "{stdout}");
    let calls = stdout
        .split("or `quit`\n")
        .nth(1)
        .expect("banner ends the header");
    let root = dir.path().canonicalize().unwrap().display().to_string();
    insta::assert_snapshot!(calls.replace(&root, "[ROOT]"));
    // A failed call in a script makes the exit status 1; nothing after `quit` ran.
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(calls.matches("first line").count(), 1, "{calls}");
}

/// Issue 38: `serve --without files` serves every tool but the file family, for a client that
/// has its own: they are not listed, not named in the instructions, and cannot be called;
/// `--tools` keeps only what it names; an unknown name is a usage error naming the valid ones.
#[test]
fn serve_without_files_lists_names_and_serves_no_file_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
    let mut c = Client::start(dir.path(), &["--without", "files"]);
    let init = c.rpc(1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
    let instructions = init["result"]["instructions"].as_str().unwrap();
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = c.rpc(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for file_tool in ["read", "grep", "glob", "write", "edit", "apply_patch"] {
        assert!(!names.contains(&file_tool), "{file_tool} listed: {names:?}");
    }
    assert!(
        names.contains(&"lsp") && names.contains(&"ast_grep"),
        "{names:?}"
    );
    // Every family but files: `debug` too (it was left out when the selection's catalog was
    // built from a run without a conversation, so the README's entries served no debugger).
    if cfg!(feature = "dap") {
        assert!(names.contains(&"debug"), "{names:?}");
    }
    for line in [
        "Look at a file: read.",
        "grep; files by name: glob",
        "Change text: edit",
    ] {
        assert!(!instructions.contains(line), "{line} in:\n{instructions}");
    }
    let refused = c.rpc(
        3,
        "tools/call",
        json!({"name": "read", "arguments": {"path": "hello.txt"}}),
    );
    assert!(
        refused["result"]["isError"] == true || refused["error"].is_object(),
        "{refused}"
    );
    drop(c);

    let mut c = Client::start(dir.path(), &["--tools", "files"]);
    c.rpc(1, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = c.rpc(2, "tools/list", json!({}));
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["apply_patch", "edit", "glob", "grep", "read", "write"]
    );
    drop(c);

    let out = std::process::Command::new(BIN)
        .args(["serve", "--without", "fiels", "--root"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`--without` names `fiels`") && err.contains("families: files"),
        "{err}"
    );
}
