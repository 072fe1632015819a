//! A fake peer over an in-process duplex stream, and a handler that records what it is given.
#![allow(dead_code, clippy::unwrap_used)]

use agent_rpc::{
    Connection, ConnectionError, FrameReader, Handler, Limits, Protocol, ReplyError, encode,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf, duplex};

/// Records notifications and closes; answers `workspace/configuration` and `runInTerminal`.
#[derive(Default)]
pub struct Log {
    pub notes: Mutex<Vec<Value>>,
    pub closed: Mutex<Vec<ConnectionError>>,
}

impl Handler for Log {
    fn notification(&self, msg: Value) {
        self.notes.lock().unwrap().push(msg);
    }
    fn request(&self, msg: &Value) -> Result<Value, ReplyError> {
        let method = msg
            .get("method")
            .or_else(|| msg.get("command"))
            .and_then(Value::as_str)
            .unwrap_or("");
        match method {
            "workspace/configuration" => Ok(json!([{"answer": 42}])),
            _ => Err(ReplyError {
                code: -32601,
                message: format!("method not found: {method}"),
            }),
        }
    }
    fn closed(&self, why: &ConnectionError) {
        self.closed.lock().unwrap().push(why.clone());
    }
}

impl Log {
    pub fn notes(&self) -> Vec<Value> {
        self.notes.lock().unwrap().clone()
    }
    pub fn closed(&self) -> Vec<ConnectionError> {
        self.closed.lock().unwrap().clone()
    }
}

/// The other end of a connection.
pub struct Peer {
    pub reader: FrameReader<ReadHalf<DuplexStream>>,
    pub writer: WriteHalf<DuplexStream>,
}

impl Peer {
    /// The next message we sent, within 5 s.
    pub async fn recv(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(5), self.reader.read())
            .await
            .expect("the peer waited 5 s for a message")
            .expect("a well-framed message")
            .expect("a message, not the end of the stream")
    }
    pub async fn send(&mut self, msg: Value) {
        self.raw(&encode(&msg)).await;
    }
    pub async fn raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }
}

/// A connection speaking `protocol` to a [`Peer`], over a duplex buffer of `buffer` bytes.
pub fn pair<P: Protocol>(protocol: P, buffer: usize) -> (Connection<P>, Peer, Arc<Log>) {
    let (ours, theirs) = duplex(buffer);
    let (r, w) = tokio::io::split(ours);
    let log = Arc::new(Log::default());
    let conn = Connection::start(r, w, protocol, log.clone(), Limits::default());
    let (tr, tw) = tokio::io::split(theirs);
    let peer = Peer {
        reader: FrameReader::new(tr, Limits::default()),
        writer: tw,
    };
    (conn, peer, log)
}

/// Wait (at most 5 s) until `f` holds.
pub async fn eventually(mut f: impl FnMut() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached within 5 s");
}
