//! `cargo xtask bench host` over Streamable HTTP (issue 13): `agent-tools serve --listen` driven
//! by a minimal hand-written HTTP/1.1 client — `POST /mcp` with `Authorization: Bearer`,
//! `Accept: application/json, text/event-stream` and the `Mcp-Session-Id` the `initialize`
//! answer gave; replies read as JSON or as an SSE stream, chunked or not, on a keep-alive
//! connection. Measures the idle RSS of the HTTP host, the `tools/call` round trip (median, p95,
//! p99 of trivial `read`s), and 200 `read` calls in flight at once from 4 clients (4 sessions):
//! every call answered and none crossed (each reads files of its own whose content names it).

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const CLIENTS: usize = 4;
const PER_CLIENT: usize = 50;
const CALLS: usize = 500;

/// One HTTP/1.1 connection to `/mcp`, in one MCP session once initialized.
pub struct Conn {
    authority: String,
    token: String,
    session: Option<String>,
    stream: Option<BufReader<TcpStream>>,
    next: u64,
}

impl Conn {
    pub fn new(authority: &str, token: &str, session: Option<String>) -> Conn {
        Conn {
            authority: authority.to_string(),
            token: token.to_string(),
            session,
            stream: None,
            next: 0,
        }
    }

    /// Open the TCP connection now (else the first request does).
    pub fn connect(&mut self) -> Result<()> {
        if self.stream.is_none() {
            let s = TcpStream::connect(&self.authority)
                .with_context(|| format!("connect to {}", self.authority))?;
            s.set_nodelay(true)?;
            self.stream = Some(BufReader::new(s));
        }
        Ok(())
    }

    /// POST one JSON-RPC message; the status and the JSON-RPC messages of the reply.
    fn post(&mut self, body: &Value) -> Result<(u16, Vec<Value>)> {
        let body = body.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n",
            self.authority,
            self.token,
            body.len()
        );
        if let Some(s) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        head.push_str("\r\n");
        self.connect()?;
        let r = self.stream.as_mut().context("no connection")?;
        // One write: head and body in one segment, as HTTP clients send a small request.
        head.push_str(&body);
        let w = r.get_mut();
        w.write_all(head.as_bytes())?;
        w.flush()?;

        let mut line = String::new();
        r.read_line(&mut line)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .with_context(|| format!("not an HTTP status line: {line:?}"))?;
        let (mut length, mut chunked, mut close) = (None, false, false);
        loop {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                bail!("connection closed in the headers");
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let Some((name, value)) = l.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "mcp-session-id" => self.session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut payload = Vec::new();
        if chunked {
            loop {
                line.clear();
                r.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .with_context(|| format!("bad chunk size {line:?}"))?;
                let mut chunk = vec![0; size + 2];
                r.read_exact(&mut chunk)?;
                if size == 0 {
                    break;
                }
                payload.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = length {
            payload.resize(n, 0);
            r.read_exact(&mut payload)?;
        } else if status != 202 && status != 204 {
            r.read_to_end(&mut payload)?;
            close = true;
        }
        if close {
            self.stream = None;
        }
        Ok((status, messages(&String::from_utf8_lossy(&payload))))
    }

    /// A request; the response with its id (an error if the host refused it).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next += 1;
        let id = self.next;
        let (status, msgs) =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        if status != 200 {
            bail!("{method}: HTTP {status}");
        }
        msgs.into_iter()
            .find(|m| m["id"] == id && m.get("method").is_none())
            .with_context(|| format!("{method}: no response with id {id}"))
    }

    /// `initialize` and `notifications/initialized`: a session of its own.
    pub fn initialize(&mut self) -> Result<()> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "xtask-bench", "version": "0"}}),
        )?;
        let (status, _) =
            self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        if status != 202 && status != 200 {
            bail!("notifications/initialized: HTTP {status}");
        }
        Ok(())
    }

    /// Ids from `first` on: connections sharing one session must not reuse an id (JSON-RPC ids
    /// are unique per session; the host answers each id on the stream that sent it).
    pub fn ids_from(mut self, first: u64) -> Conn {
        self.next = first - 1;
        self
    }

    pub fn session(&self) -> Option<String> {
        self.session.clone()
    }
}

/// The JSON-RPC messages of a reply body: plain JSON, or the `data:` of each SSE event.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return match v {
            Value::Array(all) => all,
            one => vec![one],
        };
    }
    let mut out = Vec::new();
    let mut data = String::new();
    for line in body.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                out.push(v);
            }
            data.clear();
        } else if let Some(d) = line.strip_prefix("data:") {
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
            data.push('\n');
        }
    }
    out
}

/// The text of a `tools/call` result, or why there is none.
fn result_text(resp: &Value) -> Result<&str> {
    if resp["result"]["isError"] != false {
        bail!("the call failed: {resp}");
    }
    resp["result"]["content"][0]["text"]
        .as_str()
        .with_context(|| format!("no text in {resp}"))
}

/// `serve --listen 127.0.0.1:0` with a token; the child and the `host:port` it says it took.
pub fn start(bin: &Path, root: &Path, token: &str) -> Result<(Child, String)> {
    let mut child = Command::new(bin)
        .args(["serve", "--vibe", "--listen", "127.0.0.1:0", "--root"])
        .arg(root)
        .env("AGENT_TOOLS_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = BufReader::new(child.stderr.take().context("stderr")?);
    let mut line = String::new();
    loop {
        line.clear();
        if stderr.read_line(&mut line)? == 0 {
            let _ = child.kill();
            let _ = child.wait();
            bail!("serve --listen ended before saying where it listens");
        }
        if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
            let authority = url
                .trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .to_string();
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return Ok((child, authority));
        }
    }
}

pub fn percentiles(times: &mut [f64]) -> String {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    format!(
        "median {:.0} us, p95 {:.0} us, p99 {:.0} us",
        at(0.5),
        at(0.95),
        at(0.99)
    )
}

/// The content of client `c`'s file `i`: it names both, and its length differs from every other.
fn content(c: usize, i: usize) -> String {
    format!("client {c} file {i} <{}>\n", "z".repeat(c * PER_CLIENT + i))
}

pub fn run(bin: &Path, rss_kib: fn(u32) -> Option<u64>) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("hello.txt"), "hello\n")?;
    for c in 0..CLIENTS {
        std::fs::create_dir_all(dir.join(format!("c{c}")))?;
        for i in 0..PER_CLIENT {
            std::fs::write(dir.join(format!("c{c}/f{i}.txt")), content(c, i))?;
        }
    }
    let token = format!("bench-{}", std::process::id());
    let (mut child, authority) = start(bin, &dir, &token)?;
    let outcome = measure(&authority, &token, child.id(), rss_kib);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn measure(authority: &str, token: &str, pid: u32, rss_kib: fn(u32) -> Option<u64>) -> Result<()> {
    let mut conn = Conn::new(authority, token, None);
    conn.initialize()?;
    conn.request("tools/list", json!({}))?;
    std::thread::sleep(Duration::from_millis(500));
    let idle = rss_kib(pid).unwrap_or(0);
    println!(
        "idle RSS of `agent-tools serve --vibe --listen` (Streamable HTTP), one session: {:.1} MB (goal <= 25 MB)",
        idle as f64 / 1024.0
    );

    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        let resp = conn.request(
            "tools/call",
            json!({"name": "read", "arguments": {"path": "hello.txt"}}),
        )?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
        result_text(&resp)?;
    }
    println!(
        "tools/call `read` round trip over Streamable HTTP (keep-alive connection, SSE replies), {CALLS} calls: {}",
        percentiles(&mut times)
    );

    // 4 clients, each its own session; 50 connections each, all released at once.
    let mut sessions = Vec::new();
    for _ in 0..CLIENTS {
        let mut c = Conn::new(authority, token, None);
        c.initialize()?;
        sessions.push(c.session().context("initialize gave no Mcp-Session-Id")?);
    }
    let gate = Arc::new(Barrier::new(CLIENTS * PER_CLIENT + 1));
    let mut threads = Vec::new();
    for (c, session) in sessions.iter().enumerate() {
        for i in 0..PER_CLIENT {
            let (gate, authority, token, session) = (
                gate.clone(),
                authority.to_string(),
                token.to_string(),
                session.clone(),
            );
            threads.push(std::thread::spawn(move || -> Result<(bool, f64)> {
                let mut conn =
                    Conn::new(&authority, &token, Some(session)).ids_from(100 + i as u64);
                // Connected before the gate: what is timed is the calls, not 200 handshakes.
                let connected = conn.connect();
                gate.wait();
                connected?;
                let t = Instant::now();
                let resp = conn.request(
                    "tools/call",
                    json!({"name": "read", "arguments": {"path": format!("c{c}/f{i}.txt")}}),
                )?;
                let took = t.elapsed().as_secs_f64() * 1e6;
                let want = format!("1| {}", content(c, i).trim_end());
                Ok((result_text(&resp)?.lines().next() == Some(&want), took))
            }));
        }
    }
    gate.wait();
    let t = Instant::now();
    let (mut answered, mut crossed, mut failed) = (0, 0, Vec::new());
    let mut times = Vec::new();
    for th in threads {
        match th.join() {
            Ok(Ok((matches, took))) => {
                answered += 1;
                if !matches {
                    crossed += 1;
                }
                times.push(took);
            }
            Ok(Err(e)) => failed.push(e.to_string()),
            Err(_) => failed.push("a client thread panicked".into()),
        }
    }
    let wall = t.elapsed();
    let after = rss_kib(pid).unwrap_or(0);
    println!(
        "{} concurrent `read` calls over Streamable HTTP from {CLIENTS} clients ({CLIENTS} sessions, {PER_CLIENT} connections each): {answered}/{} answered, {crossed} crossed, all in {:.0} ms; per call {}; host RSS after: {:.1} MB",
        CLIENTS * PER_CLIENT,
        CLIENTS * PER_CLIENT,
        wall.as_secs_f64() * 1000.0,
        if times.is_empty() {
            "-".to_string()
        } else {
            percentiles(&mut times)
        },
        after as f64 / 1024.0
    );
    if crossed > 0 || !failed.is_empty() {
        bail!(
            "concurrent calls: {crossed} crossed, {} failed: {:?}",
            failed.len(),
            failed.iter().take(3).collect::<Vec<_>>()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::messages;

    #[test]
    fn reads_json_and_sse_replies() {
        assert_eq!(messages(r#"{"id":1}"#)[0]["id"], 1);
        let sse = "data: \nid: 0\nretry: 3000\n\ndata: {\"id\":2,\"result\":{}}\nid: 1\n\n";
        let got = messages(sse);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["id"], 2);
    }
}
