//! `serve --listen` against clients that hold connections without using them (issue 23): the
//! real `agent-tools` binary, some runs under a low fd limit (`ulimit -n` in the shell that
//! execs it). Running out of descriptors does not end the host; idle connections without the
//! token do not crowd out a client with it; a slowloris and an idle keep-alive connection are
//! closed, while a call whose answer takes longer than the idle bound is still answered.
//! Timeouts are shortened for the test through the host's environment; nothing here asserts how
//! fast anything is, only that it happens within a generous bound.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");
const TOKEN: &str = "hostile-test-token";
/// The most any wait below lasts before the test gives up.
const GIVE_UP: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    authority: String,
    /// Every stderr line of the host (its log) so far.
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `serve --listen 127.0.0.1:0` with the token, `env` and, given `nofile`, that fd limit.
    fn start(root: &Path, nofile: Option<u32>, env: &[(&str, &str)], extra: &[&str]) -> Server {
        let mut cmd = match nofile {
            // `exec` keeps the pid: the child is the host itself.
            Some(n) => {
                let mut c = Command::new("sh");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\""), BIN]);
                c
            }
            None => Command::new(BIN),
        };
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(extra)
            .envs(env.iter().copied())
            .env("AGENT_TOOLS_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut server = Server {
            child: cmd.spawn().unwrap(),
            authority: String::new(),
            log: Arc::default(),
        };
        let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
        loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "serve ended before listening: {:?}",
                server.log.lock().unwrap()
            );
            if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
                server.authority = url
                    .trim_start_matches("http://")
                    .trim_end_matches("/mcp")
                    .to_string();
                let log = server.log.clone();
                std::thread::spawn(move || {
                    for line in stderr.lines() {
                        let Ok(line) = line else { break };
                        log.lock().unwrap().push(line);
                    }
                });
                return server;
            }
            server.log.lock().unwrap().push(line.trim().to_string());
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.authority)
    }

    fn logged(&self, needle: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the host ended: {:#?}",
            self.log.lock().unwrap()
        );
    }

    /// One authenticated `initialize` POST on a connection of its own; the status code.
    fn initialize_status(&self) -> u16 {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.authority,
            body.len()
        );
        let mut s = TcpStream::connect(&self.authority).unwrap();
        s.set_read_timeout(Some(GIVE_UP)).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    }

    /// One authenticated POST of `body` (in `session`, when given) on a connection of its own:
    /// the status code and the `Mcp-Session-Id` the answer carries.
    fn post(&self, session: Option<&str>, body: &Value) -> (u16, Option<String>) {
        let body = body.to_string();
        let session = session.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.authority,
            body.len()
        );
        let mut s = TcpStream::connect(&self.authority).unwrap();
        s.set_read_timeout(Some(GIVE_UP)).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut head = String::new();
        let mut reader = BufReader::new(s);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let status = head[9..12].parse().unwrap();
        let id = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_string())
        });
        (status, id)
    }

    /// A new MCP session, initialized; its id.
    fn open_session(&self) -> String {
        let (status, id) = self.post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}}),
        );
        assert_eq!(status, 200);
        let id = id.expect("an initialize answer names its session");
        let (status, _) = self.post(
            Some(&id),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(status, 202);
        id
    }

    /// A `ping` in `session`: 200 while it lives, 404 once it has ended.
    fn ping(&self, session: &str) -> u16 {
        self.post(
            Some(session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        )
        .0
    }
}

/// `n` connections that never send the token: some send nothing, some half a request head, some
/// a whole request without the token (refused with 401, the connection kept alive).
fn strangers(authority: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            let mut s = TcpStream::connect(authority).unwrap();
            let sent: &[u8] = match i % 3 {
                0 => b"",
                1 => b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty",
                _ => b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            };
            // The host may already have closed it to make room: that is its right.
            let _ = s.write_all(sent);
            s
        })
        .collect()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = args.as_object().cloned();
    p
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// An rmcp client with the token reads a file: the whole MCP path is served.
fn served_over_mcp(url: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(TOKEN);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let read = client
            .call_tool(call("read", json!({"path": "hello.txt"})))
            .await
            .unwrap();
        assert!(text(&read).contains("1| hello"), "{}", text(&read));
        client.cancel().await.unwrap();
    });
}

/// Whether the peer has closed `s` (EOF or reset), waiting at most `wait` for a sign.
fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
    dir
}

#[test]
fn running_out_of_descriptors_does_not_end_the_host() {
    let dir = fixture();
    // The cap raised past the fd limit, so that `accept` itself fails with EMFILE.
    let mut server = Server::start(
        dir.path(),
        Some(64),
        &[("AGENT_TOOLS_HTTP_MAX_CONNECTIONS", "1000")],
        &[],
    );
    let held = strangers(&server.authority, 100);
    let start = Instant::now();
    while !server.logged("accept failed") {
        server.assert_alive();
        assert!(
            start.elapsed() < GIVE_UP,
            "100 connections under a limit of 64 fds, and accept never failed: {:#?}",
            server.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        server.logged("Too many open files"),
        "{:#?}",
        server.log.lock().unwrap()
    );
    server.assert_alive();
    drop(held);
    // The connections are gone: the host serves again.
    assert_eq!(server.initialize_status(), 200);
    served_over_mcp(&server.url());
    server.assert_alive();
}

#[test]
fn idle_connections_without_the_token_do_not_crowd_out_a_client_with_it() {
    let dir = fixture();
    // 256 fds: the default cap is 64 connections; 400 strangers would need 400 fds.
    let mut server = Server::start(dir.path(), Some(256), &[], &[]);
    let held = strangers(&server.authority, 400);
    assert_eq!(server.initialize_status(), 200);
    served_over_mcp(&server.url());
    // And again with the strangers' newest connections in the table.
    let more = strangers(&server.authority, 100);
    assert_eq!(server.initialize_status(), 200);
    server.assert_alive();
    assert!(
        !server.logged("accept failed"),
        "the cap let the host reach its fd limit: {:#?}",
        server.log.lock().unwrap()
    );
    drop((held, more));
}

#[test]
fn a_slowloris_is_disconnected() {
    let dir = fixture();
    let server = Server::start(
        dir.path(),
        None,
        &[("AGENT_TOOLS_HTTP_HEADER_TIMEOUT_MS", "1000")],
        &[],
    );
    let mut s = TcpStream::connect(&server.authority).unwrap();
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    // One byte, then up to a second's wait for the host to hang up; a head that never ends.
    let mut closed = false;
    for i in 0..GIVE_UP.as_secs() as usize {
        let byte = head.get(i).copied().unwrap_or(b'z');
        if s.write_all(&[byte]).is_err() || closed_within(&mut s, Duration::from_secs(1)) {
            closed = true;
            break;
        }
    }
    assert!(closed, "the host kept a 1-byte-a-second request head open");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_and_a_slow_answer_is_not() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fixture();
    let worker = dir.path().join("worker.sh");
    // Silent for longer than the idle bound before it answers.
    std::fs::write(
        &worker,
        "#!/bin/sh\ncat > /dev/null\nsleep 3\necho finished-the-brief\n",
    )
    .unwrap();
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = Server::start(
        dir.path(),
        None,
        &[
            ("AGENT_TOOLS_HTTP_HEADER_TIMEOUT_MS", "500"),
            ("AGENT_TOOLS_HTTP_IDLE_TIMEOUT_MS", "1000"),
            ("AGENT_TOOLS_VIBE_FAST", worker.to_str().unwrap()),
        ],
        &["--vibe"],
    );

    // A keep-alive request with the token, answered; then the connection sits idle until the
    // host closes it.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        server.authority,
        body.len()
    );
    let mut s = TcpStream::connect(&server.authority).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    s.set_read_timeout(Some(GIVE_UP)).unwrap();
    let mut got = Vec::new();
    let closed = match s.read_to_end(&mut got) {
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    };
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(closed, "an idle keep-alive connection was never closed");

    // A call whose answer comes after a silence longer than the idle bound is answered, and the
    // client goes on after its pooled connection was closed as idle.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let config =
            StreamableHttpClientTransportConfig::with_uri(server.url().as_str()).auth_header(TOKEN);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let spawned = client
            .call_tool(call(
                "vibe_spawn",
                json!({"brief": "wait, then answer", "label": "slow"}),
            ))
            .await
            .unwrap();
        assert_eq!(spawned.is_error, Some(false), "{}", text(&spawned));
        let id = serde_json::to_value(&spawned).unwrap()["structuredContent"]["worker_id"]
            .as_str()
            .unwrap()
            .to_string();
        let waited = client
            .call_tool(call(
                "vibe_wait",
                json!({"worker_id": id, "timeout_seconds": 60}),
            ))
            .await
            .unwrap();
        assert!(
            text(&waited).contains("finished-the-brief"),
            "{}",
            text(&waited)
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        let read = client
            .call_tool(call("read", json!({"path": "hello.txt"})))
            .await
            .unwrap();
        assert!(text(&read).contains("1| hello"), "{}", text(&read));
        client.cancel().await.unwrap();
    });
}

/// Issue 41: one token holder opened 4,000 sessions and the host kept them all for an hour (RSS
/// 20 → 328 MiB; each keeps a room). With a cap of 3, a fourth session ends the least recently
/// active one, which then answers 404; 200 more never leave more than 3 alive.
#[test]
fn sessions_past_the_cap_end_the_least_recently_active_first() {
    let dir = fixture();
    let server = Server::start(
        dir.path(),
        None,
        &[("AGENT_TOOLS_HTTP_MAX_SESSIONS", "3")],
        &[],
    );
    let a = server.open_session();
    let b = server.open_session();
    let c = server.open_session();
    // `a` and `c` speak again: `b` is now the least recently active.
    assert_eq!(server.ping(&a), 200);
    assert_eq!(server.ping(&c), 200);
    let d = server.open_session();
    assert_eq!(
        server.ping(&b),
        404,
        "the least recently active session lives on"
    );
    for s in [&a, &c, &d] {
        assert_eq!(server.ping(s), 200, "session {s} ended instead");
    }
    let mut last = Vec::new();
    for _ in 0..200 {
        last.push(server.open_session());
    }
    let alive = [&a, &c, &d]
        .into_iter()
        .chain(last.iter())
        .filter(|s| server.ping(s) == 200)
        .count();
    assert_eq!(alive, 3, "sessions alive past the cap");
    assert!(server.logged("the least recently active one ends"));
}
