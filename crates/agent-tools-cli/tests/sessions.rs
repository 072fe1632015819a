//! Several clients on one `agent-tools serve --listen` host: a prompt goes to the MCP session
//! whose call caused it (issue 23). Driven by the official MCP Python SDK (PyPI `mcp`) over
//! Streamable HTTP; the script is `tests/clients/python_sessions.py`. Client A's `eval` cell asks
//! through its `tool()` bridge (`ask_user`, then a `write` under `--approval write`) while
//! client B keeps calling; A must get A's answer and approval, B must never be asked. Before
//! the fix the host put the question to whichever client had called last — B, which declined.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// The venv `cargo xtask setup` fills (`AGENT_TOOLS_VENV` under `cargo xtask test`).
fn venv() -> PathBuf {
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"));
    let ok = Command::new(venv.join("bin/python"))
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{}/bin/python cannot import mcp: run `cargo xtask setup`",
        venv.display()
    );
    venv
}

/// The host, ended by its pid when the test ends.
struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(root: &Path, token: &str) -> Server {
    let child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--approval",
            "write",
            "--root",
        ])
        .arg(root)
        .env("AGENT_TOOLS_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Server(child, String::new());
    let mut stderr = BufReader::new(server.0.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended");
        if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
            server.1 = url.to_string();
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return server;
        }
    }
}

#[test]
fn a_cells_question_and_approval_go_to_its_own_session_while_another_client_calls() {
    let venv = venv();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("hello.txt"), "hello\n").unwrap();
    // The project's `.venv` is the test venv, so the Python kernel starts from it.
    std::os::unix::fs::symlink(&venv, root.path().join(".venv")).unwrap();
    let server = http_server(root.path(), "sessions-token");
    let out = Command::new(venv.join("bin/python"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_sessions.py"))
        .args([&server.1, "sessions-token"])
        .arg(root.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ok "))
        .unwrap_or_else(|| panic!("no `ok` line:\n{stdout}\n{stderr}"));
    let done: Vec<&str> = line.split(',').collect();
    for c in [
        "B reads while A's cell runs",
        "A's cell sees A's answer",
        "A's cell's write approved by A",
        "the write happened",
        "B was never asked",
        "A was asked the question and the approval",
    ] {
        assert!(done.contains(&c), "check `{c}` not done: {done:?}");
    }
}
