//! Issue 38: the host's control socket, which a client's own hook reaches (Claude Code's
//! `PostToolUse`: `agent-tools hook claude-code`), attacked from outside: a request for a file
//! outside the root answers nothing, a request that is not JSON is answered as not understood
//! and the host serves on, a socket folder open to others gets no socket (and the host serves
//! on), and a hook with no host to reach stays out of the client's way.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use agent_tools_cli::control::{self, Request, WireBefore};
use common::{BIN, Client};
use serde_json::json;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn venv() -> PathBuf {
    std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"))
}

/// A python project, and a host serving it over stdio with `XDG_RUNTIME_DIR` = `runtime`.
fn host(runtime: &Path) -> (tempfile::TempDir, Client) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::os::unix::fs::symlink(venv(), root.join(".venv")).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = 'c'\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "def greet(name: str) -> str:\n    return 'hi ' + name\n",
    )
    .unwrap();
    let mut c = Client::start_with(root, &[], &[("XDG_RUNTIME_DIR", runtime)]);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "control", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "agent-tools");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (dir, c)
}

/// The socket of the host `pid` under `runtime`, once it exists.
fn socket(runtime: &Path, pid: u32) -> PathBuf {
    let path = runtime.join(format!("agent-tools/{pid}.sock"));
    for _ in 0..200 {
        if path.exists() {
            return path;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("no control socket at {}", path.display());
}

#[test]
fn a_reported_edit_gets_its_new_problems_and_hostile_requests_get_nothing() {
    agent_testkit::require("pyright-langserver");
    let runtime = tempfile::tempdir().unwrap();
    let (dir, mut c) = host(runtime.path());
    let sock = socket(runtime.path(), c.child.id());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&sock).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the socket is the user's only");
    let app = dir.path().join("app.py");
    let old = std::fs::read_to_string(&app).unwrap();
    std::fs::write(&app, old.replace("'hi ' + name", "42")).unwrap();
    let wait = Duration::from_secs(120);
    let answer = control::ask(
        &sock,
        &Request {
            file: app.clone(),
            before: WireBefore::Content(old.clone()),
        },
        wait,
    )
    .unwrap();
    assert!(
        answer
            .text
            .contains("Changed outside agent-tools' write tools: `app.py`.")
            && answer.text.contains("app.py:2")
            && answer.text.contains("is not assignable to return type"),
        "{}",
        answer.text
    );
    // Reported once: the same change asked again has nothing new.
    let again = control::ask(
        &sock,
        &Request {
            file: app.clone(),
            before: WireBefore::Content(old),
        },
        wait,
    )
    .unwrap();
    assert!(
        !again.text.contains("is not assignable") && again.text.contains("No new problems"),
        "{}",
        again.text
    );

    // Outside the root, by absolute path, by `..` and through a symlink: nothing is read or said.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.py"),
        "token: int = 'SECRET-LINE'\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), dir.path().join("link.py"))
        .unwrap();
    for file in [
        outside.path().join("secret.py"),
        PathBuf::from("../secret.py"),
        dir.path().join("link.py"),
        PathBuf::from("/etc/passwd"),
    ] {
        let answer = control::ask(
            &sock,
            &Request {
                file: file.clone(),
                before: WireBefore::Absent,
            },
            wait,
        )
        .unwrap();
        assert!(
            answer.text.is_empty(),
            "{}: {}",
            file.display(),
            answer.text
        );
    }

    // Not JSON: answered as not understood; the host serves on.
    let mut raw = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    raw.write_all(b"\x1b[2J not json\n").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(raw).read_line(&mut line).unwrap();
    assert!(line.contains("was not understood"), "{line}");
    let listed = c.rpc(2, "tools/list", json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );

    // The host's end (SIGTERM) removes its socket.
    let pid = c.child.id();
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    c.child.wait().unwrap();
    assert!(!sock.exists(), "the socket outlived the host");

    // A killed host leaves its socket; the next hook finds its pid gone and removes it.
    let (_dir2, mut killed) = host(runtime.path());
    let stale = socket(runtime.path(), killed.child.id());
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    assert!(stale.exists());
    let mut hook = std::process::Command::new(BIN)
        .args(["hook", "claude-code"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(
            json!({"tool_name": "Edit", "tool_input": {"file_path": app}, "tool_response": {"originalFile": "x"}})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = hook.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(!stale.exists(), "the dead host's socket stayed");
}

/// A socket folder open to others (planted by someone else, or a mistake) is refused: no socket
/// is made in it, and the host serves on.
#[test]
fn a_socket_folder_open_to_others_gets_no_socket() {
    use std::os::unix::fs::PermissionsExt;
    let runtime = tempfile::tempdir().unwrap();
    let planted = runtime.path().join("agent-tools");
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_dir, mut c) = host(runtime.path());
    let listed = c.rpc(2, "tools/list", json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    let entries: Vec<_> = std::fs::read_dir(&planted).unwrap().flatten().collect();
    assert!(
        entries.is_empty(),
        "a socket was made in a folder open to others: {entries:?}"
    );
}

/// With no host to reach, or input it cannot read, the hook prints nothing for the model, says
/// why on stderr and exits 0: a hook never blocks the client's own tool.
#[test]
fn a_hook_with_no_host_stays_out_of_the_way() {
    let run = |input: serde_json::Value| {
        let mut child = std::process::Command::new(BIN)
            .args(["hook", "claude-code"])
            // No host anywhere: the hook says so on stderr, prints nothing, exits 0.
            .env("XDG_RUNTIME_DIR", tempfile::tempdir().unwrap().keep())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let edit = run(json!({
        "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": "/w/app.py", "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": "/w/app.py", "originalFile": "a\n"}
    }));
    assert!(edit.status.success());
    assert!(edit.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&edit.stderr).contains("no agent-tools host"),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let bad = run(json!("not an object"));
    assert!(bad.status.success() && bad.stdout.is_empty());
}
