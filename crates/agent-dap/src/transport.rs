//! The DAP side of the wire: a thin layer over `agent-rpc`'s connection (framing with a size cap,
//! a send task owning the writer, responses matched by `request_seq`, end of stream failing every
//! pending request, the typed call with its timeout). Here: agent-rpc's `CallError` said as a
//! [`DapError`] in one place, events read as [`Event`]s and handed to the session in order,
//! reverse requests answered.

use crate::DapError;
use crate::protocol::{Event, EventMessage, ReverseRequest};
use agent_rpc::{
    CallError, Connection, ConnectionError, Dap, Handler, Limits, Malformed, PendingCall,
    ReplyError, Request,
};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Receives what the reader task reads, in the order it arrives.
pub(crate) trait Sink: Send + Sync + 'static {
    /// An event, or why it could not be read as its declared type.
    fn event(&self, event: Result<Event, Malformed>);
    /// The connection closed (EOF or a framing error).
    fn closed(&self, why: &str);
}

/// One connection to a debug adapter.
pub(crate) struct Client {
    conn: Connection<Dap>,
}

/// A request `R` sent whose response has not been awaited yet (dropping it abandons the
/// request).
pub(crate) struct Pending<R>(PendingCall<Dap, R>);

/// Adapts a [`Sink`] to the connection's handler.
struct Events(Arc<dyn Sink>);

impl Handler for Events {
    fn notification(&self, msg: Value) {
        let event = EventMessage::read(msg).and_then(|m| Event::read(&m.event, m.body));
        self.0.event(event);
    }

    /// Reverse requests: `runInTerminal` is declined (the debuggee must run under the adapter so
    /// that its output is captured and its process is ours to kill), `startDebugging` is refused
    /// (one session per conversation), anything else is unsupported.
    fn request(&self, msg: &Value) -> Result<Value, ReplyError> {
        let command = ReverseRequest::deserialize(msg).map(|r| r.command);
        let message = match command.as_deref() {
            Ok("runInTerminal") => {
                "runInTerminal is declined by agent-dap: launch with an internal console (the debuggee's output is captured as output events)"
            }
            Ok("startDebugging") => {
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

/// Why a request has no body, as this family says it: the one place agent-rpc's [`CallError`]
/// becomes a [`DapError`].
fn call_error(e: CallError) -> DapError {
    match e {
        CallError::Connection(e) => gone(e),
        CallError::Refused { method, error } => DapError::Refused {
            command: method,
            message: if error.message.is_empty() {
                "no message".to_string()
            } else {
                error.message
            },
        },
        CallError::Malformed(m) => m.into(),
        CallError::Timeout { method, after } => DapError::Timeout {
            command: method.to_string(),
            secs: after.as_secs(),
        },
        other => DapError::AdapterGone {
            detail: other.to_string(),
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

    /// Send the request `R` without waiting for its response.
    pub async fn send<R: Request>(&self, params: &R::Params) -> Result<Pending<R>, DapError> {
        self.conn
            .send::<R>(params)
            .await
            .map(Pending)
            .map_err(call_error)
    }

    /// Send the request `R` and wait (at most `timeout`) for its body.
    pub async fn call<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<R::Result, DapError> {
        self.conn
            .call_within::<R>(params, timeout)
            .await
            .map_err(call_error)
    }
}

impl<R: Request> Pending<R> {
    /// Wait (at most `timeout`) for the response: its body read as `R`'s, or the adapter's
    /// refusal (its message with the variables of `body.error` filled in).
    pub async fn wait(self, timeout: Duration) -> Result<R::Result, DapError> {
        self.0.wait(timeout).await.map_err(call_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{NoArguments, Threads};
    use agent_rpc::FrameReader;
    use parking_lot::Mutex;
    use serde_json::json;
    use tokio::io::{AsyncWriteExt, duplex};

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Sink for Log {
        fn event(&self, event: Result<Event, Malformed>) {
            let line = match event {
                Ok(e) => format!("{e:?}"),
                Err(e) => e.to_string(),
            };
            self.0.lock().push(line);
        }
        fn closed(&self, why: &str) {
            self.0.lock().push(format!("closed: {why}"));
        }
    }

    /// Requests of the test's own: `first` (any body), `second` (a body with a number `n`).
    enum First {}
    impl Request for First {
        const METHOD: &'static str = "first";
        type Params = NoArguments;
        type Result = Value;
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct N {
        n: i64,
    }
    enum Second {}
    impl Request for Second {
        const METHOD: &'static str = "second";
        type Params = NoArguments;
        type Result = N;
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

    /// Responses are matched by request_seq even out of order and read as their declared
    /// types (a body of another shape is an error naming the command and the field); a refusal
    /// says the adapter's message with its variables filled in; events keep their order and
    /// are read as their types; reverse requests are answered; the end of the stream fails
    /// pending requests.
    #[tokio::test]
    async fn framing_matching_reverse_requests_and_close() {
        let (ours, theirs) = duplex(1 << 16);
        let (our_r, our_w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let mut their_r = FrameReader::new(their_r, Limits::default());
        let log = Arc::new(Log::default());
        let client = Client::start(our_r, our_w, log.clone());

        let a = client.send::<First>(&NoArguments {}).await.unwrap();
        let b = client.send::<Second>(&NoArguments {}).await.unwrap();
        let c = client.send::<Second>(&NoArguments {}).await.unwrap();
        let ra = read_one(&mut their_r).await;
        let rb = read_one(&mut their_r).await;
        let rc = read_one(&mut their_r).await;
        assert_eq!(ra["command"], "first");
        assert_eq!(ra["arguments"], json!({}));
        // Answer the second first, split across writes, with an extra header.
        let resp_b = frame(
            &json!({"type": "response", "request_seq": rb["seq"], "success": true, "command": "second", "body": {"n": 2, "more": true}}),
        );
        let mut with_header = b"Content-Type: application/vscode-jsonrpc\r\n".to_vec();
        with_header.extend(resp_b);
        let (x, y) = with_header.split_at(10);
        their_w.write_all(x).await.unwrap();
        their_w.write_all(y).await.unwrap();
        their_w
            .write_all(&frame(&json!({"type": "response", "request_seq": rc["seq"], "success": true, "command": "second", "body": {"n": "two"}})))
            .await
            .unwrap();
        for event in [
            json!({"type": "event", "event": "output", "body": {"category": "stdout", "output": "hi\n"}}),
            json!({"type": "event", "event": "thread", "body": {"reason": "started", "threadId": 1}}),
            json!({"type": "event", "event": "stopped", "body": {"threadId": 1}}),
            json!({"type": "event", "event": "terminated"}),
        ] {
            their_w.write_all(&frame(&event)).await.unwrap();
        }
        their_w
            .write_all(&frame(
                &json!({"type": "request", "seq": 9, "command": "runInTerminal", "arguments": {}}),
            ))
            .await
            .unwrap();
        their_w.write_all(&frame(&json!({"type": "response", "request_seq": ra["seq"], "success": false, "command": "first", "message": "nope",
            "body": {"error": {"format": "bad {x}", "variables": {"x": "thing"}}}}))).await.unwrap();
        let t = Duration::from_secs(5);
        assert_eq!(b.wait(t).await.unwrap(), N { n: 2 });
        let malformed = c.wait(t).await.unwrap_err().to_string();
        assert!(
            malformed.starts_with("the adapter's `second` reply is malformed: invalid type: string \"two\", expected i64"),
            "{malformed}"
        );
        let err = a.wait(t).await.unwrap_err().to_string();
        assert_eq!(err, "the adapter refused `first`: nope: bad thing");
        let reverse = read_one(&mut their_r).await;
        assert_eq!(reverse["request_seq"], 9);
        assert_eq!(reverse["success"], false);
        assert!(reverse["message"].as_str().unwrap().contains("declined"));
        let pending = client.send::<Threads>(&NoArguments {}).await.unwrap();
        drop(their_w);
        drop(their_r);
        let gone = pending.wait(t).await.unwrap_err().to_string();
        assert!(gone.contains("adapter is gone"), "{gone}");
        let slow = client
            .call::<First>(&NoArguments {}, Duration::from_millis(10))
            .await;
        assert!(slow.is_err());
        assert_eq!(
            *log.0.lock(),
            vec![
                r#"Output(OutputBody { category: Some("stdout"), output: "hi\n" })"#.to_string(),
                "Other".to_string(),
                "the peer's stopped notification is malformed: missing field `reason`".to_string(),
                "Terminated".to_string(),
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
            .call::<Threads>(&NoArguments {}, Duration::from_millis(50))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not answer `threads`"), "{err}");
    }
}
