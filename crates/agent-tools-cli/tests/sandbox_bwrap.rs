//! The host inside a sandbox, the two ways a harness reaches it (README, "Transports and
//! sandboxes"), with a `bubblewrap` sandbox (Debian `bubblewrap`, installed by `cargo xtask
//! setup`) standing in for a container:
//!
//! 1. stdio through the sandbox's own exec — `docker exec -i BOX agent-tools serve`, `kubectl
//!    exec -i POD -- agent-tools serve` — here `bwrap … agent-tools serve --root /ws` with the
//!    MCP stream on the sandbox process's stdin/stdout;
//! 2. Streamable HTTP from inside the sandbox — `serve --listen` in the sandbox, sharing only the
//!    network namespace, called from outside over loopback with the bearer token.
//!
//! The sandbox holds the system's `/usr` read-only, the binary at `/opt/agent-tools/`, the
//! workspace at `/ws`, its own `/tmp`, `/proc` and `/dev`, and unshares every namespace (user,
//! pid, ipc, uts, cgroup, and the network unless shared). The host's other paths are not in it.
//! A missing `bwrap` fails the tests. On the project's machine (Debian 12, bubblewrap 0.8.0,
//! kernel 6.18) these flags work as they are, as root and as an unprivileged user alike (user
//! namespaces are allowed); no setuid bwrap and no privileged container are needed.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");
const IN_BOX: &str = "/opt/agent-tools/agent-tools";

/// MCP over the sandbox process's stdio, one JSON-RPC message a line (as `tests/common`).
struct Boxed {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Boxed {
    fn send(&mut self, v: Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{v}").unwrap();
    }

    fn rpc(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the sandboxed serve closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }
}

impl Drop for Boxed {
    fn drop(&mut self) {
        // bwrap's own pid; `--die-with-parent` takes the sandbox down with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A host tree: `ws/` (the code, bound at `/ws`) and `outside/secret.txt` (never bound).
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("ws/inside.txt"), "code inside the box\n").unwrap();
    std::fs::write(dir.path().join("outside/secret.txt"), "host secret 4711\n").unwrap();
    dir
}

/// `bwrap` with the sandbox described above; the caller appends the command.
fn sandbox(ws: &Path, share_net: bool) -> Command {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-all", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "`bwrap` cannot make a sandbox here: install Debian's bubblewrap (`cargo xtask setup`)"
    );
    let mut c = Command::new("bwrap");
    c.args(["--ro-bind", "/usr", "/usr"]);
    // /bin, /lib, /lib64, /sbin: links into /usr on a merged-/usr system, else bound as they are.
    for top in ["/bin", "/lib", "/lib64", "/sbin"] {
        match std::fs::read_link(top) {
            Ok(target) => {
                c.arg("--symlink").arg(target).arg(top);
            }
            Err(_) if Path::new(top).is_dir() => {
                c.args(["--ro-bind", top, top]);
            }
            Err(_) => {}
        }
    }
    c.args(["--ro-bind", BIN, IN_BOX])
        .arg("--bind")
        .arg(ws)
        .arg("/ws")
        .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
        .args(["--unshare-all", "--die-with-parent", "--chdir", "/ws"])
        .args(["--clearenv", "--setenv", "PATH", "/usr/bin:/bin"])
        .args(["--setenv", "HOME", "/tmp"]);
    if share_net {
        c.arg("--share-net");
    }
    c
}

/// `serve` over the sandbox's stdio, like `docker exec -i BOX agent-tools serve`.
fn exec_serve(ws: &Path, root: &str) -> Boxed {
    let mut child = sandbox(ws, false)
        .args([IN_BOX, "serve", "--root", root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start bwrap");
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut c = Boxed {
        child,
        stdin,
        stdout,
    };
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "agent-tools",
        "{init}"
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c
}

fn read(c: &mut Boxed, id: i64, path: &str) -> (bool, String) {
    let r = c.rpc(
        id,
        "tools/call",
        json!({"name": "read", "arguments": {"path": path}}),
    );
    let r = &r["result"];
    (
        r["isError"] == true,
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Closes the sandbox's stdin, like a client ending `docker exec -i`: the host ends, and bwrap
/// with it, cleanly. If it has not within 30 s, bwrap (by its pid) is killed and the test fails.
fn close(mut c: Boxed) {
    drop(c.stdin.take());
    let pid = c.child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(std::time::Duration::from_secs(30)).is_err() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    });
    let status = c.child.wait().unwrap();
    let _ = tx.send(());
    watchdog.join().unwrap();
    assert!(status.success(), "the sandboxed host ended with {status}");
}

#[test]
fn stdio_through_the_sandbox_exec() {
    let dir = fixture();
    let ws = dir.path().join("ws");
    let secret = dir.path().join("outside/secret.txt");
    let mut c = exec_serve(&ws, "/ws");

    let list = c.rpc(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for tool in ["read", "write", "edit", "ast_grep"] {
        assert!(names.contains(&tool), "{tool} not in {names:?}");
    }

    // The code is read where it is: relative to the root, and at its in-box path `/ws`, which
    // the host does not have.
    let (failed, text) = read(&mut c, 3, "inside.txt");
    assert!(!failed && text.contains("1| code inside the box"), "{text}");
    let (failed, text) = read(&mut c, 4, "/ws/inside.txt");
    assert!(!failed && text.contains("1| code inside the box"), "{text}");

    // A host path outside the bind is refused; its content never comes back.
    let (failed, text) = read(&mut c, 5, secret.to_str().unwrap());
    assert!(failed, "{text}");
    assert!(!text.contains("4711"), "{text}");

    // A write by the tool lands in the host's workspace through the bind.
    let w = c.rpc(
        6,
        "tools/call",
        json!({"name": "write", "arguments": {"path": "made-in-box.txt", "content": "from the box\n"}}),
    );
    assert_eq!(w["result"]["isError"], false, "{w}");
    assert_eq!(
        std::fs::read_to_string(ws.join("made-in-box.txt")).unwrap(),
        "from the box\n"
    );
    close(c);

    // The fence is the sandbox's, not only the tool's root: with `--root /` inside the box, the
    // host's path is simply not there, while the bound workspace is.
    let mut c = exec_serve(&ws, "/");
    let (failed, text) = read(&mut c, 2, "ws/inside.txt");
    assert!(!failed && text.contains("code inside the box"), "{text}");
    let relative = secret.strip_prefix("/").unwrap().to_str().unwrap();
    let (failed, text) = read(&mut c, 3, relative);
    assert!(failed, "the host file was read inside the sandbox: {text}");
    assert!(!text.contains("4711"), "{text}");
    close(c);
}

/// `serve --listen` inside the sandbox; the stderr lines until it says where it listens.
struct Listening {
    child: Child,
    url: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        // The outer bwrap's pid; `--die-with-parent` takes the sandbox down with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen_in_box(ws: &Path, token_file: &Path) -> Listening {
    // Held from the start: a failed assertion below still ends the sandbox (drop kills bwrap).
    let mut server = Listening {
        child: sandbox(ws, true)
            .arg("--ro-bind")
            .arg(token_file)
            .arg("/run/agent-tools/token")
            .args([IN_BOX, "serve", "--root", "/ws", "--listen", "127.0.0.1:0"])
            .args(["--token-file", "/run/agent-tools/token"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bwrap"),
        url: String::new(),
    };
    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    let mut said = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "serve ended before listening: {said:?}"
        );
        if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            server.url = url.to_string();
            return server;
        }
        said.push(line.trim().to_string());
    }
}

/// One raw HTTP/1.1 POST of an `initialize`; the status code.
fn raw_status(url: &str, bearer: Option<&str>) -> u16 {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = args.as_object().cloned();
    p
}

#[test]
fn streamable_http_from_inside_the_sandbox() {
    let dir = fixture();
    let ws = dir.path().join("ws");
    let token_file = dir.path().join("outside/token");
    std::fs::write(&token_file, "box-token-5150\n").unwrap();
    let server = listen_in_box(&ws, &token_file);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );

    assert_eq!(raw_status(&server.url, None), 401, "no token");
    assert_eq!(
        raw_status(&server.url, Some("box-token")),
        401,
        "wrong token"
    );
    assert_eq!(raw_status(&server.url, Some("box-token-5150")), 200);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
            .auth_header("box-token-5150");
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let info = client.peer_info().unwrap();
        assert!(
            info.instructions
                .as_deref()
                .unwrap_or_default()
                .contains("/ws"),
            "{:?}",
            info.instructions
        );
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "read"));
        let r = client
            .call_tool(call("read", json!({"path": "/ws/inside.txt"})))
            .await
            .unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(r.is_error, Some(false), "{v}");
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("1| code inside the box"),
            "{v}"
        );
        let secret = dir.path().join("outside/secret.txt");
        let r = client
            .call_tool(call("read", json!({"path": secret.to_str().unwrap()})))
            .await
            .unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(r.is_error, Some(true), "{v}");
        assert!(!v.to_string().contains("4711"), "{v}");
        client.cancel().await.unwrap();
    });
}
