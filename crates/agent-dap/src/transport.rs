//! The DAP wire: `Content-Length` framing, one reader task per adapter, responses matched by
//! `request_seq`, events handed to the session in order, reverse requests answered.

use crate::DapError;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// The largest message accepted from an adapter (a guard against a corrupt length header).
const MAX_MESSAGE: usize = 64 << 20;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// A response's interesting parts.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub success: bool,
    pub message: String,
    pub body: Value,
}

/// Receives what the reader task reads, in the order it arrives.
pub(crate) trait Sink: Send + Sync + 'static {
    /// An event.
    fn event(&self, name: &str, body: &Value);
    /// The connection closed (EOF or a framing error).
    fn closed(&self, why: &str);
}

/// One connection to a debug adapter.
pub(crate) struct Client {
    writer: tokio::sync::Mutex<Writer>,
    seq: AtomicI64,
    pending: Mutex<Option<HashMap<i64, oneshot::Sender<Response>>>>,
}

/// A request sent whose response has not been awaited yet.
pub(crate) struct Pending {
    command: String,
    rx: oneshot::Receiver<Response>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Poisoning follows only a panic while held; no critical section here can panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Client {
    /// Start the reader task over `reader`; writes go to `writer`.
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        sink: Arc<dyn Sink>,
    ) -> Arc<Client> {
        let client = Arc::new(Client {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            seq: AtomicI64::new(1),
            pending: Mutex::new(Some(HashMap::new())),
        });
        let weak = Arc::downgrade(&client);
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            let why = loop {
                let msg = match read_message(&mut reader).await {
                    Ok(Some(m)) => m,
                    Ok(None) => break "end of stream".to_string(),
                    Err(e) => break e,
                };
                let Some(client) = weak.upgrade() else {
                    return;
                };
                client.dispatch(msg, sink.as_ref()).await;
            };
            if let Some(client) = weak.upgrade() {
                // Dropping the senders wakes every waiter with "adapter gone".
                lock(&client.pending).take();
            }
            sink.closed(&why);
        });
        client
    }

    async fn dispatch(&self, msg: Value, sink: &dyn Sink) {
        match msg.get("type").and_then(Value::as_str) {
            Some("response") => {
                let Some(seq) = msg.get("request_seq").and_then(Value::as_i64) else {
                    return;
                };
                let tx = lock(&self.pending).as_mut().and_then(|p| p.remove(&seq));
                if let Some(tx) = tx {
                    let _ = tx.send(Response {
                        success: msg.get("success").and_then(Value::as_bool).unwrap_or(false),
                        message: error_message(&msg),
                        body: msg.get("body").cloned().unwrap_or(Value::Null),
                    });
                }
            }
            Some("event") => {
                let name = msg.get("event").and_then(Value::as_str).unwrap_or("");
                sink.event(name, msg.get("body").unwrap_or(&Value::Null));
            }
            Some("request") => self.answer_reverse(&msg).await,
            _ => {}
        }
    }

    /// Reverse requests: `runInTerminal` is declined (the debuggee must run under the adapter so
    /// that its output is captured and its process is ours to kill), `startDebugging` is refused
    /// (one session per conversation), anything else is unsupported.
    async fn answer_reverse(&self, req: &Value) {
        let command = req.get("command").and_then(Value::as_str).unwrap_or("");
        let message = match command {
            "runInTerminal" => {
                "runInTerminal is declined by agent-dap: launch with an internal console (the debuggee's output is captured as output events)"
            }
            "startDebugging" => {
                "startDebugging is refused by agent-dap: one debug session per conversation, child sessions are not supported"
            }
            _ => "this reverse request is not supported by agent-dap",
        };
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let msg = json!({
            "seq": seq,
            "type": "response",
            "request_seq": req.get("seq").cloned().unwrap_or(Value::Null),
            "command": command,
            "success": false,
            "message": message,
        });
        let _ = self.write(&msg).await;
    }

    async fn write(&self, msg: &Value) -> Result<(), DapError> {
        let body = serde_json::to_vec(msg).map_err(|e| DapError::Io(e.into()))?;
        let mut w = self.writer.lock().await;
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        w.write_all(&frame).await?;
        w.flush().await?;
        Ok(())
    }

    /// Send a request without waiting for its response.
    pub async fn send(&self, command: &str, arguments: Value) -> Result<Pending, DapError> {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match lock(&self.pending).as_mut() {
            Some(p) => {
                p.insert(seq, tx);
            }
            None => {
                return Err(DapError::AdapterGone {
                    detail: String::new(),
                });
            }
        }
        let msg =
            json!({"seq": seq, "type": "request", "command": command, "arguments": arguments});
        if let Err(e) = self.write(&msg).await {
            if let Some(p) = lock(&self.pending).as_mut() {
                p.remove(&seq);
            }
            return Err(e);
        }
        Ok(Pending {
            command: command.to_string(),
            rx,
        })
    }

    /// Send a request and wait (at most `timeout`) for a successful response's body.
    pub async fn request(
        &self,
        command: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, DapError> {
        self.send(command, arguments).await?.wait(timeout).await
    }
}

impl Pending {
    /// Wait (at most `timeout`) for the response; an unsuccessful one is an error.
    pub async fn wait(self, timeout: Duration) -> Result<Value, DapError> {
        let command = self.command.clone();
        let r = self.wait_raw(timeout).await?;
        if r.success {
            Ok(r.body)
        } else {
            Err(DapError::Refused {
                command,
                message: r.message,
            })
        }
    }

    /// Wait for the response, successful or not.
    pub async fn wait_raw(self, timeout: Duration) -> Result<Response, DapError> {
        match tokio::time::timeout(timeout, self.rx).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(_)) => Err(DapError::AdapterGone {
                detail: String::new(),
            }),
            Err(_) => Err(DapError::Timeout {
                command: self.command,
                secs: timeout.as_secs(),
            }),
        }
    }
}

fn error_message(msg: &Value) -> String {
    let mut out = msg
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(format) = msg.pointer("/body/error/format").and_then(Value::as_str) {
        let mut text = format.to_string();
        if let Some(vars) = msg
            .pointer("/body/error/variables")
            .and_then(Value::as_object)
        {
            for (k, v) in vars {
                text = text.replace(&format!("{{{k}}}"), v.as_str().unwrap_or(""));
            }
        }
        if !text.is_empty() && text != out {
            out = if out.is_empty() {
                text
            } else {
                format!("{out}: {text}")
            };
        }
    }
    if out.is_empty() {
        out = "no message".to_string();
    }
    out
}

/// Read one framed message. `Ok(None)` at a clean end of stream.
async fn read_message(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
) -> Result<Option<Value>, String> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .await
            .map_err(|e| format!("read failed: {e}"))?;
        if n == 0 {
            return Ok(None);
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((k, v)) = trimmed.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok();
        }
    }
    let len = length.unwrap_or(0);
    if len > MAX_MESSAGE {
        return Err(format!("message of {len} bytes is larger than the limit"));
    }
    let mut body = vec![0u8; len];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("read failed: {e}"))?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("malformed message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncWriteExt, duplex};

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Sink for Log {
        fn event(&self, name: &str, body: &Value) {
            lock(&self.0).push(format!("{name} {body}"));
        }
        fn closed(&self, why: &str) {
            lock(&self.0).push(format!("closed: {why}"));
        }
    }

    fn frame(v: &Value) -> Vec<u8> {
        let body = serde_json::to_vec(v).unwrap();
        let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        f.extend(body);
        f
    }

    async fn read_one(r: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> Value {
        read_message(r).await.unwrap().unwrap()
    }

    /// Responses are matched by request_seq even out of order; events keep their order;
    /// reverse requests are answered; the end of the stream fails pending requests.
    #[tokio::test]
    async fn framing_matching_reverse_requests_and_close() {
        let (ours, theirs) = duplex(1 << 16);
        let (our_r, our_w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let mut their_r = BufReader::new(their_r);
        let log = Arc::new(Log::default());
        let client = Client::start(our_r, our_w, log.clone());

        let a = client.send("first", json!({})).await.unwrap();
        let b = client.send("second", json!({})).await.unwrap();
        let ra = read_one(&mut their_r).await;
        let rb = read_one(&mut their_r).await;
        assert_eq!(ra["command"], "first");
        // Answer the second first, split across writes, with an extra header.
        let resp_b = frame(
            &json!({"type": "response", "request_seq": rb["seq"], "success": true, "command": "second", "body": {"n": 2}}),
        );
        let mut with_header = b"Content-Type: application/vscode-jsonrpc\r\n".to_vec();
        with_header.extend(resp_b);
        let (x, y) = with_header.split_at(10);
        their_w.write_all(x).await.unwrap();
        their_w.write_all(y).await.unwrap();
        their_w
            .write_all(&frame(&json!({"type": "event", "event": "one", "body": 1})))
            .await
            .unwrap();
        their_w
            .write_all(&frame(&json!({"type": "event", "event": "two", "body": 2})))
            .await
            .unwrap();
        their_w
            .write_all(&frame(
                &json!({"type": "request", "seq": 9, "command": "runInTerminal", "arguments": {}}),
            ))
            .await
            .unwrap();
        their_w.write_all(&frame(&json!({"type": "response", "request_seq": ra["seq"], "success": false, "command": "first", "message": "nope",
            "body": {"error": {"format": "bad {x}", "variables": {"x": "thing"}}}}))).await.unwrap();
        let t = Duration::from_secs(5);
        assert_eq!(b.wait(t).await.unwrap(), json!({"n": 2}));
        let err = a.wait(t).await.unwrap_err().to_string();
        assert_eq!(err, "the adapter refused `first`: nope: bad thing");
        let reverse = read_one(&mut their_r).await;
        assert_eq!(reverse["request_seq"], 9);
        assert_eq!(reverse["success"], false);
        assert!(reverse["message"].as_str().unwrap().contains("declined"));
        let pending = client.send("third", json!({})).await.unwrap();
        drop(their_w);
        drop(their_r);
        let gone = pending.wait(t).await.unwrap_err().to_string();
        assert!(gone.contains("adapter is gone"), "{gone}");
        let slow = client
            .request("fourth", json!({}), Duration::from_millis(10))
            .await;
        assert!(slow.is_err());
        assert_eq!(
            *lock(&log.0),
            vec![
                "one 1".to_string(),
                "two 2".to_string(),
                "closed: end of stream".to_string()
            ]
        );
    }

    #[tokio::test]
    async fn unanswered_request_times_out() {
        let (ours, _theirs) = duplex(1 << 16);
        let (r, w) = tokio::io::split(ours);
        let client = Client::start(r, w, Arc::new(Log::default()));
        let err = client
            .request("threads", json!({}), Duration::from_millis(50))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not answer `threads`"), "{err}");
    }
}
