//! A minimal raw LSP client: the peer that benchmarks measure this project's `lsp` tool against
//! (the same server, asked directly). It answers the server's own requests with nulls (and
//! `workspace/configuration` with one null per item) and nothing else; benches only.

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// One server process, spoken to over stdio with Content-Length framing.
pub struct Raw {
    stdin: tokio::process::ChildStdin,
    rx: mpsc::UnboundedReceiver<Value>,
    next: i64,
    _child: tokio::process::Child,
}

impl Raw {
    /// Start `program` with `args` in `root` (no `initialize` is sent).
    pub async fn start(program: &Path, args: &[&str], root: &Path) -> Raw {
        // Test code: the process layer's rules (own group, tagged) are for the product's
        // children; this peer is killed when the client is dropped.
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if out.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let t = line.trim();
                    if t.is_empty() {
                        break;
                    }
                    if let Some(v) = t.strip_prefix("Content-Length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut buf = vec![0; len];
                out.read_exact(&mut buf).await.unwrap();
                if tx.send(serde_json::from_slice(&buf).unwrap()).is_err() {
                    return;
                }
            }
        });
        Raw {
            stdin,
            rx,
            next: 1,
            _child: child,
        }
    }

    /// Send one message, framed.
    pub async fn send(&mut self, v: Value) {
        let body = serde_json::to_vec(&v).unwrap();
        let mut msg = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        msg.extend(body);
        self.stdin.write_all(&msg).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Receive until `pred` matches, answering the server's requests on the way.
    pub async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = tokio::time::timeout(Duration::from_secs(60), self.rx.recv())
                .await
                .expect("raw client: no message within 60 s")
                .expect("raw client: server closed");
            if m.get("method").is_some() && m.get("id").is_some() {
                let result = if m["method"] == "workspace/configuration" {
                    json!(vec![
                        Value::Null;
                        m["params"]["items"].as_array().map_or(0, Vec::len)
                    ])
                } else {
                    Value::Null
                };
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": result}))
                    .await;
                continue;
            }
            if pred(&m) {
                return m;
            }
        }
    }

    /// Send a request and wait for its response (answering the server's requests meanwhile).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.until(|m| m.get("method").is_none() && m["id"] == id)
            .await
    }

    /// Send a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }
}

/// The `file://` URI of an absolute path (not percent-encoded).
pub fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}
