//! One connection over a framed byte stream: a send task that owns the writer, a reader task that
//! routes responses to their callers and hands everything else to the [`Handler`], and the
//! pending requests.

use crate::codec::{FrameError, FrameReader, Limits, encode};
use crate::request::{self, Malformed, Request};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

/// What an incoming message is, as far as routing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// The response to our request with this id.
    Response(i64),
    /// A request from the peer: it expects a reply.
    Request,
    /// A notification (LSP) or event (DAP).
    Notification,
    /// Nothing this connection can route (it is dropped).
    Other,
}

/// The error half of a reply to the peer's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyError {
    /// The error code (JSON-RPC's `code`; 0 where the dialect has none).
    pub code: i64,
    /// What went wrong, for a person.
    pub message: String,
}

/// A dialect: how ids are stamped on outgoing messages and recognised on incoming ones.
pub trait Protocol: Send + Sync + 'static {
    /// Our request `method` with id `id`.
    fn request(&self, id: i64, method: &str, params: Value) -> Value;
    /// Our notification; `seq` is a fresh sequence number (DAP numbers every message).
    fn notification(&self, seq: i64, method: &str, params: Value) -> Value;
    /// Our reply to the peer's `request`.
    fn reply(&self, seq: i64, request: &Value, outcome: Result<Value, ReplyError>) -> Value;
    /// What `msg` is.
    fn classify(&self, msg: &Value) -> Incoming;
    /// The message telling the peer that our request `id` is abandoned; `None` sends nothing.
    fn cancel(&self, seq: i64, id: i64) -> Option<Value>;
    /// A response's payload (JSON-RPC's `result`, DAP's `body`; `null` when it has none), or the
    /// peer's refusal.
    fn outcome(&self, response: Value) -> Result<Value, ReplyError>;
}

/// What the family does with what the peer sends besides responses. Called on the reader task,
/// in arrival order, so a notification that arrived before a response has been handled before
/// that response's caller wakes; none of these may block.
pub trait Handler: Send + Sync + 'static {
    /// A notification or event.
    fn notification(&self, msg: Value);
    /// A request from the peer; the returned outcome is sent back as the reply.
    fn request(&self, msg: &Value) -> Result<Value, ReplyError>;
    /// The connection ended; every pending request has been failed with `why`.
    fn closed(&self, why: &ConnectionError);
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The peer closed its end (or reading from it failed).
    #[error("the connection ended ({0})")]
    Ended(String),
    /// The peer sent something that is not a well-formed frame; the stream cannot be trusted.
    #[error("the peer broke the protocol: {0}")]
    Protocol(String),
    /// Writing to the peer failed.
    #[error("writing to the peer failed: {0}")]
    Write(String),
}

type Reply = Result<Value, ConnectionError>;

struct State {
    pending: HashMap<i64, oneshot::Sender<Reply>>,
    closed: Option<ConnectionError>,
}

struct Frame {
    bytes: Vec<u8>,
    ack: Option<oneshot::Sender<Result<(), ConnectionError>>>,
}

struct Inner<P> {
    protocol: P,
    out: mpsc::UnboundedSender<Frame>,
    next: AtomicI64,
    state: Mutex<State>,
    reader: Mutex<Option<AbortHandle>>,
}

impl<P> Drop for Inner<P> {
    fn drop(&mut self) {
        if let Some(h) = self.reader.lock().take() {
            h.abort();
        }
    }
}

impl<P: Protocol> Inner<P> {
    fn next_seq(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Queue a frame without waiting for it to be written.
    fn queue(&self, bytes: Vec<u8>) {
        let _ = self.out.send(Frame { bytes, ack: None });
    }

    /// Queue a frame and wait until it is written whole. If this future is dropped, the frame is
    /// still written whole (or not at all, when an earlier write failed).
    async fn send_frame(&self, bytes: Vec<u8>) -> Result<(), ConnectionError> {
        let gone = || ConnectionError::Write("the send task is gone".into());
        let (tx, rx) = oneshot::channel();
        self.out
            .send(Frame {
                bytes,
                ack: Some(tx),
            })
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    fn dispatch(&self, msg: Value, handler: &dyn Handler) {
        match self.protocol.classify(&msg) {
            Incoming::Response(id) => {
                let tx = self.state.lock().pending.remove(&id);
                if let Some(tx) = tx {
                    let _ = tx.send(Ok(msg));
                }
            }
            Incoming::Request => {
                let outcome = handler.request(&msg);
                let reply = self.protocol.reply(self.next_seq(), &msg, outcome);
                // Queued, not awaited: the reader never waits for the writer.
                self.queue(encode(&reply));
            }
            Incoming::Notification => handler.notification(msg),
            Incoming::Other => {}
        }
    }

    fn close(&self, why: &ConnectionError) {
        let pending = {
            let mut st = self.state.lock();
            st.closed.get_or_insert_with(|| why.clone());
            std::mem::take(&mut st.pending)
        };
        for (_, tx) in pending {
            let _ = tx.send(Err(why.clone()));
        }
    }
}

/// A connection; clones share it. When the last clone (and every [`PendingReply`]) is dropped,
/// the reader task stops and the writer is closed once the queued frames are written.
pub struct Connection<P: Protocol> {
    inner: Arc<Inner<P>>,
}

impl<P: Protocol> Clone for Connection<P> {
    fn clone(&self) -> Self {
        Connection {
            inner: self.inner.clone(),
        }
    }
}

impl<P: Protocol> Connection<P> {
    /// Start the send and reader tasks (on the current tokio runtime).
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        protocol: P,
        handler: Arc<dyn Handler>,
        limits: Limits,
    ) -> Self {
        let (out, rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            protocol,
            out,
            next: AtomicI64::new(1),
            state: Mutex::new(State {
                pending: HashMap::new(),
                closed: None,
            }),
            reader: Mutex::new(None),
        });
        tokio::spawn(send_task(writer, rx));
        let task = tokio::spawn(read_task(
            Arc::downgrade(&inner),
            FrameReader::new(reader, limits),
            handler,
        ));
        *inner.reader.lock() = Some(task.abort_handle());
        Connection { inner }
    }

    /// The dialect.
    pub fn protocol(&self) -> &P {
        &self.inner.protocol
    }

    /// Why the connection ended, once it has.
    pub fn closed(&self) -> Option<ConnectionError> {
        self.inner.state.lock().closed.clone()
    }

    /// How many requests await a response.
    pub fn pending(&self) -> usize {
        self.inner.state.lock().pending.len()
    }

    /// Send a notification; returns once it is written whole.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ConnectionError> {
        let msg = self
            .inner
            .protocol
            .notification(self.inner.next_seq(), method, params);
        self.inner.send_frame(encode(&msg)).await
    }

    /// Send a request; returns once it is written whole, with the handle to wait for its
    /// response. Dropping this future or the handle before the response abandons the request:
    /// its entry is removed and the protocol's cancel message (if any) is sent.
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<PendingReply<P>, ConnectionError> {
        let id = self.inner.next_seq();
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.inner.state.lock();
            if let Some(e) = &st.closed {
                return Err(e.clone());
            }
            st.pending.insert(id, tx);
        }
        let mut guard = Guard {
            inner: self.inner.clone(),
            id,
            cancel: true,
        };
        let msg = self.inner.protocol.request(id, method, params);
        if let Err(e) = self.inner.send_frame(encode(&msg)).await {
            // Never written: nothing to cancel.
            guard.cancel = false;
            return Err(e);
        }
        Ok(PendingReply { guard, rx })
    }

    /// Send a request and wait for its response (the whole response message).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ConnectionError> {
        self.start_request(method, params).await?.wait().await
    }

    /// Send the typed request `R` and read its reply as `R::Result`, waiting as long as it takes
    /// (bound it with [`Connection::call_within`] where the peer may never answer).
    pub async fn call<R: Request>(&self, params: &R::Params) -> Result<R::Result, CallError> {
        self.send::<R>(params).await?.wait_unbounded().await
    }

    /// Send the typed request `R` and read its reply, waiting at most `timeout`: past it the
    /// request is abandoned (its entry removed, the protocol's cancel sent) and the error is
    /// [`CallError::Timeout`]. The one typed call of the workspace: the LSP client and the DAP
    /// transport both go through it and map a [`CallError`] to their own error in one place.
    pub async fn call_within<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<R::Result, CallError> {
        bounded::<R, _>(timeout, async {
            self.send::<R>(params).await?.wait_unbounded().await
        })
        .await
    }

    /// Send the typed request `R` without waiting for its reply (DAP's `configurationDone` is
    /// answered only after what follows it). Dropping the handle abandons the request.
    pub async fn send<R: Request>(
        &self,
        params: &R::Params,
    ) -> Result<PendingCall<P, R>, CallError> {
        let reply = self
            .start_request(R::METHOD, request::params::<R>(params)?)
            .await?;
        Ok(PendingCall {
            reply,
            request: PhantomData,
        })
    }
}

/// A typed request written to the peer whose reply has not been taken yet.
pub struct PendingCall<P: Protocol, R> {
    reply: PendingReply<P>,
    request: PhantomData<fn() -> R>,
}

impl<P: Protocol, R: Request> PendingCall<P, R> {
    /// The request's id.
    pub fn id(&self) -> i64 {
        self.reply.id()
    }

    /// Wait at most `timeout` for the reply, read as `R::Result` (past it, abandoned and
    /// [`CallError::Timeout`]).
    pub async fn wait(self, timeout: Duration) -> Result<R::Result, CallError> {
        bounded::<R, _>(timeout, self.wait_unbounded()).await
    }

    /// Wait for the reply as long as it takes.
    pub async fn wait_unbounded(self) -> Result<R::Result, CallError> {
        let inner = self.reply.guard.inner.clone();
        let response = self.reply.wait().await?;
        let payload = inner
            .protocol
            .outcome(response)
            .map_err(|e| CallError::Refused {
                method: R::METHOD,
                error: e,
            })?;
        Ok(request::reply::<R>(payload)?)
    }
}

/// `call` within `timeout`, or [`CallError::Timeout`] for `R` (the call, dropped, is abandoned).
async fn bounded<R: Request, T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, CallError>>,
) -> Result<T, CallError> {
    tokio::time::timeout(timeout, call)
        .await
        .unwrap_or(Err(CallError::Timeout {
            method: R::METHOD,
            after: timeout,
        }))
}

/// Why a typed request has no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No response came.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The peer answered with an error.
    #[error("the peer refused {method}: {} (code {})", error.message, error.code)]
    Refused {
        /// The method refused.
        method: &'static str,
        /// The peer's error.
        error: ReplyError,
    },
    /// The reply does not have the declared shape (or the params could not be written).
    #[error(transparent)]
    Malformed(#[from] Malformed),
    /// No reply within the caller's bound; the request was abandoned.
    #[error("no reply to {method} within {} s", after.as_secs())]
    Timeout {
        /// The method asked.
        method: &'static str,
        /// The bound.
        after: Duration,
    },
}

/// Removes a request's entry when its caller goes away, and tells the peer.
struct Guard<P: Protocol> {
    inner: Arc<Inner<P>>,
    id: i64,
    cancel: bool,
}

impl<P: Protocol> Drop for Guard<P> {
    fn drop(&mut self) {
        let was_pending = self.inner.state.lock().pending.remove(&self.id).is_some();
        if was_pending
            && self.cancel
            && let Some(msg) = self.inner.protocol.cancel(self.inner.next_seq(), self.id)
        {
            self.inner.queue(encode(&msg));
        }
    }
}

/// A request written to the peer whose response has not been taken yet.
pub struct PendingReply<P: Protocol> {
    guard: Guard<P>,
    rx: oneshot::Receiver<Reply>,
}

impl<P: Protocol> PendingReply<P> {
    /// The request's id.
    pub fn id(&self) -> i64 {
        self.guard.id
    }

    /// Wait for the response. Bound it with a timeout: on expiry the request is abandoned (and
    /// cancelled) like any dropped caller's.
    pub async fn wait(mut self) -> Result<Value, ConnectionError> {
        match (&mut self.rx).await {
            Ok(r) => r,
            Err(_) => Err(ConnectionError::Ended("the connection was dropped".into())),
        }
    }
}

async fn send_task(mut writer: impl AsyncWrite + Unpin, mut rx: mpsc::UnboundedReceiver<Frame>) {
    let mut failed: Option<ConnectionError> = None;
    while let Some(frame) = rx.recv().await {
        let r = match &failed {
            Some(e) => Err(e.clone()),
            None => {
                let written = async {
                    writer.write_all(&frame.bytes).await?;
                    writer.flush().await
                };
                written.await.map_err(|e| {
                    let e = ConnectionError::Write(e.to_string());
                    failed = Some(e.clone());
                    e
                })
            }
        };
        if let Some(ack) = frame.ack {
            let _ = ack.send(r);
        }
    }
}

async fn read_task<P: Protocol, R: AsyncRead + Unpin>(
    inner: Weak<Inner<P>>,
    mut frames: FrameReader<R>,
    handler: Arc<dyn Handler>,
) {
    let why = loop {
        let msg = match frames.read().await {
            Ok(Some(m)) => m,
            Ok(None) => break ConnectionError::Ended("end of stream".into()),
            Err(FrameError::Io(e)) => break ConnectionError::Ended(format!("read failed: {e}")),
            Err(e) => break ConnectionError::Protocol(e.to_string()),
        };
        let Some(inner) = inner.upgrade() else {
            return;
        };
        inner.dispatch(msg, handler.as_ref());
    };
    if let Some(inner) = inner.upgrade() {
        inner.close(&why);
    }
    handler.closed(&why);
}
