//! `agent-tools serve` driven by MCP clients nobody here wrote: the official Python SDK (PyPI
//! `mcp`) over stdio and over Streamable HTTP, and the official TypeScript SDK (npm
//! `@modelcontextprotocol/sdk`) over stdio. The scripts are in `tests/clients/`; each one
//! initializes, lists tools on two surfaces, calls `read`, `ast_grep`, an `eval` with a PNG
//! image, an `ask_user` that the client answers through elicitation, and cancels a long `eval`
//! (then the kernel must answer again). `cargo xtask setup` installs both SDKs; a missing one
//! fails the test.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// The venv `cargo xtask setup` fills (`AGENT_TOOLS_VENV` under `cargo xtask test`).
fn venv() -> PathBuf {
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools/venv"));
    let ok = Command::new(venv.join("bin/python"))
        .args(["-c", "import mcp, matplotlib"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{}/bin/python cannot import mcp and matplotlib: run `cargo xtask setup`",
        venv.display()
    );
    venv
}

/// A root with a file to read, one to search, and the venv as the project's `.venv` (so the
/// Python kernel has matplotlib).
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello from python\n").unwrap();
    std::fs::write(
        dir.path().join("calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(venv(), dir.path().join(".venv")).unwrap();
    dir
}

/// Run a client script; it prints `ok <checks>` on success.
fn expect_ok(mut cmd: Command, expected_checks: &[&str]) {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
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
    for c in expected_checks {
        assert!(done.contains(c), "check `{c}` not done: {done:?}");
    }
}

const CHECKS: &[&str] = &[
    "plan lists read only",
    "full initialize",
    "tier in _meta",
    "read",
    "ast_grep",
    "eval image",
    "png bytes",
    "eval progress before the result",
    "progress increases",
    "ask_user answered by elicitation",
    "long eval abandoned",
    "kernel free after cancel",
];

#[test]
fn python_sdk_over_stdio() {
    let root = fixture();
    let mut cmd = Command::new(venv().join("bin/python"));
    cmd.arg(clients().join("python_client.py"))
        .arg("stdio")
        .arg(BIN)
        .arg(root.path());
    expect_ok(cmd, CHECKS);
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(root: &Path, surface: &str, token: &str) -> Server {
    let child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--surface",
            surface,
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
fn python_sdk_over_streamable_http() {
    let root = fixture();
    let full = http_server(root.path(), "full", "py-token");
    let plan = http_server(root.path(), "plan", "py-token");
    let mut cmd = Command::new(venv().join("bin/python"));
    cmd.arg(clients().join("python_client.py"))
        .args(["http", &full.1, &plan.1, "py-token"]);
    expect_ok(cmd, CHECKS);
}

#[test]
fn typescript_sdk_over_stdio() {
    let root = fixture();
    let sdk = workspace().join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.join("package.json").is_file(),
        "{} is missing: run `cargo xtask setup`",
        sdk.display()
    );
    let mut cmd = Command::new("node");
    cmd.arg(clients().join("ts_client.mjs"))
        .arg(&sdk)
        .arg(BIN)
        .arg(root.path());
    expect_ok(cmd, CHECKS);
}
