//! `agent-tools serve`: the run's tools over MCP's stdio transport (newline-delimited JSON-RPC
//! 2.0): `initialize`, `ping`, `tools/list`, `tools/call`, `notifications/cancelled`, progress
//! notifications, and server-initiated `elicitation/create` requests (used by `ask_user` when the
//! client declared the capability).

use agent_tools::tier::{Registry, Surface, ToolInfo, ToolOutput};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The protocol revisions this server speaks, newest first.
const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// The client side of the connection as seen from the server: lets tools send requests to the
/// client (elicitation) and notifications.
#[derive(Clone)]
pub struct Peer {
    out: mpsc::UnboundedSender<Value>,
    pending: Arc<Mutex<HashMap<i64, oneshot::Sender<Value>>>>,
    next_id: Arc<AtomicI64>,
    client_caps: Arc<Mutex<Value>>,
}

impl Peer {
    fn new(out: mpsc::UnboundedSender<Value>) -> Self {
        Peer {
            out,
            pending: Arc::default(),
            next_id: Arc::new(AtomicI64::new(1)),
            client_caps: Arc::new(Mutex::new(Value::Null)),
        }
    }

    /// Whether the client declared a capability (e.g. `elicitation`) in `initialize`.
    pub fn client_has(&self, capability: &str) -> bool {
        self.client_caps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(capability)
            .is_some()
    }

    /// Send a request to the client and wait for its response (no timeout here: the caller
    /// bounds the wait).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let resp = rx
            .await
            .map_err(|_| "the client disconnected before answering".to_string())?;
        if let Some(err) = resp.get("error") {
            return Err(format!(
                "the client answered `{method}` with an error: {err}"
            ));
        }
        Ok(resp.get("result").cloned().unwrap_or(Value::Null))
    }

    fn send(&self, msg: Value) {
        let _ = self.out.send(msg);
    }
}

/// The MCP `instructions`: which tool for which job, for the tools this surface has (kept under
/// ~200 tokens).
pub fn instructions(registry: &Registry, surface: Surface) -> String {
    let have: std::collections::BTreeSet<String> =
        registry.list(surface).into_iter().map(|t| t.name).collect();
    let mut lines = vec![format!(
        "Tools for one run in {} ({surface} surface). Paths are relative to it; lines are 1-based.",
        registry.run().root.display()
    )];
    let routes: [(&[&str], &str); 8] = [
        (
            &["read"],
            "Look at a file: read (numbered lines; continue with offset).",
        ),
        (
            &["ast_grep"],
            "Find code by shape: ast_grep; by meaning (definition, references, hover, types): lsp with line + symbol.",
        ),
        (
            &["edit", "apply_patch"],
            "Change text: edit (one exact replacement), apply_patch (several places or files, all or nothing), write (whole file).",
        ),
        (
            &["lsp_rename"],
            "Rename a symbol across files: lsp_rename; rewrite a code pattern everywhere: ast_edit, then resolve accept.",
        ),
        (
            &["eval"],
            "Run code and keep state: eval (Python/JS kernel).",
        ),
        (&["debug"], "Step through a program: debug."),
        (
            &["ask_user"],
            "Need a person's decision: ask_user is the only way; never ask in a chat message.",
        ),
        (
            &["vibe_spawn"],
            "Delegate a self-contained task: vibe_spawn, then vibe_wait.",
        ),
    ];
    for (tools, line) in routes {
        if tools.iter().any(|t| have.contains(*t)) {
            lines.push(line.to_string());
        }
    }
    if have.contains("lsp") && have.contains("write") {
        lines.push("Diagnostics appended to a write are information: the change was made.".into());
    }
    lines.join("\n")
}

/// A tool as MCP lists it: annotations from the tool's declared hints, the tier in `_meta`.
pub fn tool_json(info: &ToolInfo) -> Value {
    json!({
        "name": info.name,
        "description": info.description,
        "inputSchema": info.input_schema,
        "annotations": {
            "readOnlyHint": info.hints.read_only,
            "destructiveHint": info.hints.destructive,
            "idempotentHint": info.hints.idempotent,
            "openWorldHint": info.hints.open_world,
        },
        "_meta": { "tier": info.tier, "parallelSafe": info.parallel_safe },
    })
}

/// A tool result as MCP `CallToolResult`.
pub fn result_json(out: &ToolOutput) -> Value {
    let mut content = vec![json!({"type": "text", "text": out.text})];
    for img in &out.images {
        content.push(json!({
            "type": "image",
            "data": base64::engine::general_purpose::STANDARD.encode(&img.data),
            "mimeType": img.mime_type,
        }));
    }
    let mut v = json!({"content": content, "isError": out.is_error});
    if let Some(s) = &out.structured {
        // MCP wants an object; wrap anything else.
        v["structuredContent"] = if s.is_object() {
            s.clone()
        } else {
            json!({ "value": s })
        };
    }
    v
}

/// Serve until stdin closes. `make_registry` receives the peer so that families that talk to the
/// client (elicitation) can be attached to it.
pub async fn serve(
    surface: Surface,
    make_registry: impl FnOnce(Peer) -> Registry,
) -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(msg) = rx.recv().await {
            let mut line = msg.to_string();
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() {
                break;
            }
            let _ = stdout.flush().await;
        }
    });
    let peer = Peer::new(tx);
    let registry = make_registry(peer.clone());
    let in_flight: Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>> = Arc::default();

    let mut stdin = BufReader::new(tokio::io::stdin());
    loop {
        let line = match read_message_line(&mut stdin, MAX_MESSAGE).await? {
            Line::Eof => break,
            Line::TooLong(n) => {
                peer.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!(
                        "parse error: a message of more than {n} bytes was discarded (the limit is {MAX_MESSAGE} bytes per line)")}}));
                continue;
            }
            Line::Bytes(bytes) => bytes,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Bytes, not text: invalid UTF-8 is a parse error reply, never the end of the host.
        let msg: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(e) => {
                peer.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("parse error: {e}")}}));
                continue;
            }
        };
        let id = msg.get("id").cloned();
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(method) = method else {
            // A response to one of our requests.
            if let Some(id) = id.as_ref().and_then(Value::as_i64) {
                let waiter = peer
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                if let Some(w) = waiter {
                    let _ = w.send(msg);
                }
            }
            continue;
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let reply = |result: Result<Value, (i64, String)>| {
            let Some(id) = id.clone() else { return };
            peer.send(match result {
                Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
                Err((code, message)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                }
            });
        };
        match method.as_str() {
            "initialize" => {
                *peer.client_caps.lock().unwrap_or_else(|e| e.into_inner()) =
                    params.get("capabilities").cloned().unwrap_or(Value::Null);
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|v| PROTOCOL_VERSIONS.contains(v))
                    .unwrap_or(PROTOCOL_VERSIONS[0]);
                reply(Ok(json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "agent-tools", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": instructions(&registry, surface),
                })));
            }
            "ping" => reply(Ok(json!({}))),
            "tools/list" => {
                let tools: Vec<Value> = registry.list(surface).iter().map(tool_json).collect();
                reply(Ok(json!({ "tools": tools })));
            }
            "tools/call" => {
                let Some(id) = id.clone() else { continue };
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let args = params.get("arguments").cloned().unwrap_or(Value::Null);
                let progress = params
                    .get("_meta")
                    .and_then(|m| m.get("progressToken"))
                    .cloned();
                let registry = registry.clone();
                let peer2 = peer.clone();
                let flights = in_flight.clone();
                let key = id.to_string();
                let key2 = key.clone();
                // Hold the table while spawning, so that a call which finishes at once removes
                // its entry only after it was inserted (no stale entries).
                let mut table = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                let task = tokio::spawn(async move {
                    if let Some(token) = &progress {
                        peer2.send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": 0, "message": format!("calling {name}")}}));
                    }
                    let out = registry.call(&name, args, surface).await;
                    if let Some(token) = &progress {
                        peer2.send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": 1, "total": 1}}));
                    }
                    flights
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key2);
                    peer2.send(json!({"jsonrpc": "2.0", "id": id, "result": result_json(&out)}));
                });
                table.insert(key, task.abort_handle());
                drop(table);
            }
            "notifications/cancelled" => {
                if let Some(req) = params.get("requestId") {
                    let handle = in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&req.to_string());
                    if let Some(h) = handle {
                        // Aborting drops the call's future, which aborts the tool's task.
                        h.abort();
                    }
                }
            }
            m if m.starts_with("notifications/") => {}
            other => reply(Err((
                -32601,
                format!("method `{other}` is not supported by agent-tools"),
            ))),
        }
    }
    drop(peer);
    drop(registry);
    writer.abort();
    Ok(())
}

/// The largest message line `serve` reads; a longer line is discarded up to its newline and
/// answered with a parse error (the host keeps serving).
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// One line of stdin, read as bytes.
#[derive(Debug, PartialEq)]
enum Line {
    Bytes(Vec<u8>),
    /// A line longer than the limit, discarded; the number of bytes seen.
    TooLong(usize),
    Eof,
}

/// Read one `\n`-terminated line of at most `max` bytes without ever holding more than `max`
/// bytes of it: the rest of a longer line is skipped as it arrives.
async fn read_message_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut seen = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (seen, line.is_empty()) {
                (0, _) => Line::Eof,
                (n, true) if n > max => Line::TooLong(n),
                _ => Line::Bytes(line),
            });
        }
        let (chunk, done) = match memchr_newline(buf) {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let n = chunk.len();
        seen += n;
        if seen <= max {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        reader.consume(n);
        if done {
            return Ok(if seen > max {
                Line::TooLong(seen)
            } else {
                Line::Bytes(line)
            });
        }
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let l = read_message_line(&mut r, max).await.unwrap();
            if l == Line::Eof {
                return out;
            }
            out.push(l);
        }
    }

    #[tokio::test]
    async fn lines_are_bytes_and_bounded() {
        let got = lines(b"ab\n\xff\xfe\n0123456789\nxy", 5).await;
        assert_eq!(
            got,
            vec![
                Line::Bytes(b"ab\n".to_vec()),
                Line::Bytes(b"\xff\xfe\n".to_vec()),
                Line::TooLong(11),
                Line::Bytes(b"xy".to_vec()),
            ]
        );
    }
}
