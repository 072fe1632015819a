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
    http_server_with(root, token, &["--approval", "write"], &[])
}

/// `agent-tools serve --listen` on a free port with `flags` and `env`; its URL in `.1`.
fn http_server_with(root: &Path, token: &str, flags: &[&str], env: &[(&str, &Path)]) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .args(flags)
        .arg("--root")
        .arg(root)
        .env("AGENT_TOOLS_TOKEN", token);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
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

/// Run a client script from `tests/clients` with the venv's Python; the checks it printed.
fn run_client(venv: &Path, script: &str, args: &[&std::ffi::OsStr]) -> Vec<String> {
    let out = Command::new(venv.join("bin/python"))
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/clients")
                .join(script),
        )
        .args(args)
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
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("ok "))
        .unwrap_or_else(|| panic!("no `ok` line:\n{stdout}\n{stderr}"))
        .split(',')
        .map(str::to_string)
        .collect()
}

#[test]
fn a_cells_question_and_approval_go_to_its_own_session_while_another_client_calls() {
    let venv = venv();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("hello.txt"), "hello\n").unwrap();
    // The project's `.venv` is the test venv, so the Python kernel starts from it.
    std::os::unix::fs::symlink(&venv, root.path().join(".venv")).unwrap();
    let server = http_server(root.path(), "sessions-token");
    let done = run_client(
        &venv,
        "python_sessions.py",
        &[
            server.1.as_ref(),
            "sessions-token".as_ref(),
            root.path().as_os_str(),
        ],
    );
    for c in [
        "B reads while A's cell runs",
        "A's cell sees A's answer",
        "A's cell's write approved by A",
        "the write happened",
        "B was never asked",
        "A was asked the question and the approval",
    ] {
        assert!(
            done.iter().any(|d| d == c),
            "check `{c}` not done: {done:?}"
        );
    }
}

/// Each MCP session is a room: its kernel, staged edits, debug breakpoints, workers and refused
/// questions are its own, and end with it while another session's go on. Before rooms, B's cell
/// saw A's `x`, B could accept A's edit and kill A's worker, a question A's person declined was
/// never put to B's, and closing A's session ended nothing.
#[test]
fn each_session_is_a_room_that_ends_with_it() {
    let venv = venv();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("mod.py"), "print(\"hi\")\n").unwrap();
    std::os::unix::fs::symlink(&venv, root.path().join(".venv")).unwrap();
    // The `fast` worker program: writes its pid to a file of its own, then sleeps.
    let outside = tempfile::tempdir().unwrap();
    let pids = outside.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let worker = outside.path().join("worker.sh");
    std::fs::write(
        &worker,
        format!(
            "#!/bin/sh\necho $$ > '{}/'\"$VIBE_WORKER_ID-$$\"\nexec sleep 300\n",
            pids.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = http_server_with(
        root.path(),
        "rooms-token",
        &["--vibe"],
        &[("AGENT_TOOLS_VIBE_FAST", &worker)],
    );
    let done = run_client(
        &venv,
        "python_rooms.py",
        &[
            server.1.as_ref(),
            "rooms-token".as_ref(),
            root.path().as_os_str(),
            pids.as_os_str(),
        ],
    );
    for c in [
        "B has a kernel of its own",
        "B does not see A's variables",
        "A's variables survive B's cells",
        "B cannot accept A's edit",
        "B's attempt wrote nothing",
        "B's debug room has no breakpoint",
        "B cannot kill A's worker",
        "B's person is asked and answers",
        "A's refusal is remembered for A",
        "A's kernel ended with its session",
        "A's worker ended with its session",
        "B's kernel still holds its state",
        "B's roster still has its worker",
    ] {
        assert!(
            done.iter().any(|d| d == c),
            "check `{c}` not done: {done:?}"
        );
    }
}
