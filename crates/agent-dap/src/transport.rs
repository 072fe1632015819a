//! The DAP side of the wire: a thin layer over `agent-rpc`'s connection (framing with a size cap,
//! a send task owning the writer, responses matched by `request_seq`, end of stream failing every
//! pending request). Here: events handed to the session in order, reverse requests answered, and
//! a response's parts (success, message, body) read out.

use crate::DapError;
use agent_rpc::{Connection, ConnectionError, Dap, Handler, Limits, PendingReply, ReplyError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

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
    conn: Connection<Dap>,
}

/// A request sent whose response has not been awaited yet (dropping it abandons the request).
pub(crate) struct Pending {
    command: String,
    reply: PendingReply<Dap>,
}

/// Adapts a [`Sink`] to the connection's handler.
struct Events(Arc<dyn Sink>);

impl Handler for Events {
    fn notification(&self, msg: Value) {
        let name = msg.get("event").and_then(Value::as_str).unwrap_or("");
        self.0.event(name, msg.get("body").unwrap_or(&Value::Null));
    }

    /// Reverse requests: `runInTerminal` is declined (the debuggee must run under the adapter so
    /// that its output is captured and its process is ours to kill), `startDebugging` is refused
    /// (one session per conversation), anything else is unsupported.
    fn request(&self, msg: &Value) -> Result<Value, ReplyError> {
        let message = match msg.get("command").and_then(Value::as_str).unwrap_or("") {
            "runInTerminal" => {
                "runInTerminal is declined by agent-dap: launch with an internal console (the debuggee's output is captured as output events)"
            }
            "startDebugging" => {
                "startDebugging is refused by agent-dap: one debug session per conversation, child sessions are not supported"
            }
            _ => "this reverse request is not supported by agent-dap",
        };
        Err(ReplyError {
            code: 0,
            message: message.to_string(),
        })
    }

    fn closed(&self, why: &ConnectionError) {
        match why {
            ConnectionError::Ended(why) => self.0.closed(why),
            other => self.0.closed(&other.to_string()),
        }
    }
}

fn gone(e: ConnectionError) -> DapError {
    match e {
        ConnectionError::Write(w) => DapError::Io(std::io::Error::other(w)),
        _ => DapError::AdapterGone {
            detail: String::new(),
        },
    }
}

impl Client {
    /// Start the reader task over `reader`; writes go to `writer`.
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        sink: Arc<dyn Sink>,
    ) -> Arc<Client> {
        let conn = Connection::start(
            reader,
            writer,
            Dap::default(),
            Arc::new(Events(sink)),
            Limits::default(),
        );
        Arc::new(Client { conn })
    }

    /// Send a request without waiting for its response.
    pub async fn send(&self, command: &str, arguments: Value) -> Result<Pending, DapError> {
        let reply = self
            .conn
            .start_request(command, arguments)
            .await
            .map_err(gone)?;
        Ok(Pending {
            command: command.to_string(),
            reply,
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
        match tokio::time::timeout(timeout, self.reply.wait()).await {
            Ok(Ok(msg)) => Ok(Response {
                success: msg.get("success").and_then(Value::as_bool).unwrap_or(false),
                message: error_message(&msg),
                body: msg.get("body").cloned().unwrap_or(Value::Null),
            }),
            Ok(Err(e)) => Err(gone(e)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use agent_rpc::FrameReader;
    use serde_json::json;
    use std::sync::Mutex;
    use tokio::io::{AsyncWriteExt, duplex};

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap()
    }

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

    async fn read_one(r: &mut FrameReader<impl AsyncRead + Unpin>) -> Value {
        r.read().await.unwrap().unwrap()
    }

    /// Responses are matched by request_seq even out of order; events keep their order;
    /// reverse requests are answered; the end of the stream fails pending requests.
    #[tokio::test]
    async fn framing_matching_reverse_requests_and_close() {
        let (ours, theirs) = duplex(1 << 16);
        let (our_r, our_w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let mut their_r = FrameReader::new(their_r, Limits::default());
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
