//! MCP's stdio transport for `rmcp`: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Ours rather than `rmcp::transport::stdio` for three behaviours a harness relies on:
//! - stdin is read as bounded byte lines: a line that is not JSON (bytes that are not UTF-8
//!   included) is answered with a JSON-RPC parse error (-32700, id null), a line that is JSON
//!   but no MCP message with an invalid-request error (-32600), and the host keeps serving
//!   (rmcp's own transport ignores unparsable lines without a reply);
//! - a line longer than [`MAX_MESSAGE`] is discarded as it arrives, never held;
//! - when stdin closes, the calls still running get up to [`DRAIN`] to finish and their replies
//!   are written before the host exits; a call still running then is answered with an error
//!   that says so and cancelled, and the host ends its processes and exits at once.

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

/// The largest message line read; a longer line is discarded up to its newline and answered
/// with a parse error (the host keeps serving).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// How long calls still running when stdin closes may take to finish.
pub const DRAIN: Duration = Duration::from_secs(10);

type Out = Arc<Mutex<tokio::io::Stdout>>;

/// The stdio transport: messages parsed by a reader task, replies written whole, one per line.
pub struct Stdio {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Out,
    /// The client's requests not answered yet (their ids as JSON), which end of input waits for.
    pending: HashSet<String>,
    eof_deadline: Option<tokio::time::Instant>,
}

impl Stdio {
    /// Start reading stdin.
    pub fn start() -> Stdio {
        let out: Out = Arc::new(Mutex::new(tokio::io::stdout()));
        let (tx, incoming) = mpsc::channel(64);
        tokio::spawn(read_stdin(tx, out.clone()));
        Stdio {
            incoming,
            out,
            pending: HashSet::new(),
            eof_deadline: None,
        }
    }
}

async fn write_line(out: &Out, msg: &impl serde::Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

fn error_reply(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn read_stdin(tx: mpsc::Sender<ClientJsonRpcMessage>, out: Out) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    loop {
        let reply = match read_message_line(&mut stdin, MAX_MESSAGE).await {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong(n)) => {
                tracing::info!(bytes = n, "message refused: longer than the limit");
                error_reply(
                    Value::Null,
                    -32700,
                    format!(
                        "parse error: a message of more than {n} bytes was discarded (the limit is {MAX_MESSAGE} bytes per line)"
                    ),
                )
            }
            Ok(Line::Bytes(line)) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match parse(&line) {
                    Ok(msg) => {
                        if tx.send(msg).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    Err(reply) => {
                        tracing::info!(error = %reply["error"]["message"], "message refused");
                        reply
                    }
                }
            }
        };
        if write_line(&out, &reply).await.is_err() {
            return;
        }
    }
}

/// One line as an MCP message, or the error reply it gets.
fn parse(line: &[u8]) -> Result<ClientJsonRpcMessage, Value> {
    // Bytes, not text: invalid UTF-8 is a parse error reply, never the end of the host.
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| error_reply(Value::Null, -32700, format!("parse error: {e}")))?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let value = lenient_initialize(value);
    serde_json::from_value(value)
        .map_err(|e| error_reply(id, -32600, format!("invalid request: {e}")))
}

/// `initialize` from a client that leaves out `clientInfo` or `capabilities` (optional in
/// practice, required by the schema) is taken with empty ones instead of being refused: rmcp
/// would otherwise not see an `initialize` at all.
fn lenient_initialize(mut value: Value) -> Value {
    if value.get("method").and_then(Value::as_str) == Some("initialize")
        && let Some(params) = value.get_mut("params").and_then(Value::as_object_mut)
    {
        params
            .entry("clientInfo")
            .or_insert_with(|| json!({"name": "unnamed client", "version": "0"}));
        params.entry("capabilities").or_insert_with(|| json!({}));
    }
    value
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            ServerJsonRpcMessage::Response(r) => Some(&r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered {
            self.pending.remove(&id_key(id));
        }
        let out = self.out.clone();
        async move { write_line(&out, &item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        if self.eof_deadline.is_none() {
            let msg = self.incoming.recv().await;
            match &msg {
                Some(ClientJsonRpcMessage::Request(r)) => {
                    self.pending.insert(id_key(&r.id));
                }
                Some(ClientJsonRpcMessage::Notification(n)) => {
                    if let rmcp::model::ClientNotification::CancelledNotification(c) =
                        &n.notification
                        && let Some(id) = &c.params.request_id
                    {
                        self.pending.remove(&id_key(id));
                    }
                }
                Some(_) => {}
                None => self.eof_deadline = Some(tokio::time::Instant::now() + DRAIN),
            }
            if msg.is_some() {
                return msg;
            }
        }
        // End of input: the service keeps writing while the requests still running finish.
        // Each reply written calls `send` (which forgets its id) and then `receive` again.
        if !self.pending.is_empty()
            && let Some(deadline) = self.eof_deadline
        {
            tokio::time::sleep_until(deadline).await;
        }
        // Past the drain, a call still running is answered here with an error saying so, and
        // cancelled (the service drops its future), one per `receive`: otherwise the service
        // would wait 5 s more for it, and its client would get no reply at all.
        if let Some(key) = self.pending.iter().next().cloned() {
            self.pending.remove(&key);
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            let reply = error_reply(
                id.clone(),
                -32603,
                format!(
                    "the host is ending: its input closed and this call was still running {} s later; it was cancelled",
                    DRAIN.as_secs()
                ),
            );
            let _ = write_line(&self.out, &reply).await;
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the host's input closed"}});
            if let Ok(msg) = serde_json::from_value(cancel) {
                return Some(msg);
            }
        }
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.lock().await.flush().await
    }
}

fn id_key(id: &rmcp::model::RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

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
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
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

    #[test]
    fn bad_lines_get_the_error_they_deserve() {
        let not_json = parse(b"\xff\xfe{").unwrap_err();
        assert_eq!(
            (not_json["error"]["code"].clone(), not_json["id"].clone()),
            (json!(-32700), Value::Null)
        );
        let not_mcp = parse(br#"{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": 7}"#)
            .unwrap_err();
        assert_eq!(
            (not_mcp["error"]["code"].clone(), not_mcp["id"].clone()),
            (json!(-32600), json!(4))
        );
        assert!(parse(br#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#).is_ok());
    }
}
