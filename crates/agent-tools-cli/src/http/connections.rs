//! The connections the HTTP transport holds, and when each one ends.
//!
//! [`Table`] admits connections: at most `max_connections` at once, so the host never reaches
//! its fd limit through HTTP. When it is full, the oldest connection that has not shown the
//! token (a stranger) is closed to make room; when every one has shown it, the new connection is
//! closed at once. Strangers therefore cannot crowd out a client with the token: its new
//! connection takes a stranger's place, and once it shows the token it cannot be pushed out.
//! While too many strangers are still closing, the listener waits ([`Table::room`]) instead of
//! accepting: new connections wait in the kernel's backlog, and none is turned away for it.
//!
//! [`Conn`] is one connection's state. [`Conn::quiet`] says when it should be closed: no request
//! in progress and no response streaming, for longer than the header timeout (a stranger, or a
//! request head still arriving: a slowloris) or the idle timeout (a client that showed the
//! token). A request is in progress from its complete head until its response body is dropped,
//! so a long-lived SSE stream is never idle.

use super::limits::Limits;
use hyper::body::{Body, Bytes, Frame, SizeHint};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::sync::{Notify, oneshot};

/// The open connections of one listener.
#[derive(Debug)]
pub struct Table {
    max: usize,
    open: Mutex<Open>,
    /// Notified whenever a connection's socket closes.
    closed: Notify,
}

#[derive(Debug, Default)]
struct Open {
    /// Connections whose socket is still open (those being closed to make room included).
    count: usize,
    next_id: u64,
    /// The strangers, oldest first, each with the sender that closes it.
    strangers: BTreeMap<u64, oneshot::Sender<()>>,
}

/// Fires when the table closed this connection to make room for a newer one.
pub type Evicted = oneshot::Receiver<()>;

impl Table {
    pub fn new(max: usize) -> Arc<Table> {
        Arc::new(Table {
            max: max.max(1),
            open: Mutex::default(),
            closed: Notify::new(),
        })
    }

    /// The most connections whose sockets may be open: the cap, and half of it again for
    /// strangers that were closed to make room and whose task has not yet dropped the socket.
    fn most_open(&self) -> usize {
        self.max + self.max.div_ceil(2)
    }

    /// Resolves once a connection can be accepted without exceeding [`Table::most_open`]: at
    /// once, unless many strangers are still closing.
    pub async fn room(&self) {
        loop {
            let closed = self.closed.notified();
            tokio::pin!(closed);
            closed.as_mut().enable();
            if self.open.lock().count < self.most_open() {
                return;
            }
            closed.await;
        }
    }

    /// A place for a new connection (taking the oldest stranger's when full), or `None` when it
    /// must be closed at once: every connection has shown the token.
    pub fn admit(self: &Arc<Self>) -> Option<(Arc<Conn>, Evicted)> {
        let mut open = self.open.lock();
        if open.count >= self.max {
            let (_, close) = open.strangers.pop_first()?;
            let _ = close.send(());
        }
        let id = open.next_id;
        open.next_id += 1;
        open.count += 1;
        let (close, evicted) = oneshot::channel();
        open.strangers.insert(id, close);
        drop(open);
        let conn = Conn {
            id,
            table: self.clone(),
            shown_token: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            quiet_since: Mutex::new(Instant::now()),
            changed: Notify::new(),
        };
        Some((Arc::new(conn), evicted))
    }

    /// How many connections are open.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.open.lock().count
    }
}

/// One admitted connection; its place in the table is freed when the last handle drops.
#[derive(Debug)]
pub struct Conn {
    id: u64,
    table: Arc<Table>,
    shown_token: AtomicBool,
    /// Requests in progress (head received, response body not yet dropped).
    busy: AtomicUsize,
    /// When `busy` last fell to 0 (or the connection started).
    quiet_since: Mutex<Instant>,
    changed: Notify,
}

impl Conn {
    /// The connection sent a request with the token: it is no stranger and is never closed to
    /// make room.
    pub fn showed_token(&self) {
        if !self.shown_token.swap(true, Ordering::SeqCst) {
            // Dropping the sender disarms the eviction.
            self.table.open.lock().strangers.remove(&self.id);
            self.changed.notify_waiters();
        }
    }

    /// A request in progress, until the returned guard (kept by its response body) drops.
    pub fn request(self: &Arc<Self>) -> InProgress {
        self.busy.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
        InProgress(self.clone())
    }

    /// Resolves when the connection should be closed: quiet (nothing in progress) for longer
    /// than its bound.
    pub async fn quiet(&self, limits: &Limits) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.busy.load(Ordering::SeqCst) > 0 {
                changed.await;
                continue;
            }
            let bound = if self.shown_token.load(Ordering::SeqCst) {
                limits.idle_timeout
            } else {
                limits.header_timeout
            };
            let since = *self.quiet_since.lock();
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until((since + bound).into()) => {
                    if self.busy.load(Ordering::SeqCst) == 0 {
                        return;
                    }
                }
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let mut open = self.table.open.lock();
        open.strangers.remove(&self.id);
        open.count = open.count.saturating_sub(1);
        drop(open);
        self.table.closed.notify_waiters();
    }
}

/// A request in progress on a connection (see [`Conn::request`]).
#[derive(Debug)]
pub struct InProgress(Arc<Conn>);

impl Drop for InProgress {
    fn drop(&mut self) {
        let conn = &self.0;
        *conn.quiet_since.lock() = Instant::now();
        conn.busy.fetch_sub(1, Ordering::SeqCst);
        conn.changed.notify_waiters();
    }
}

/// A response body that keeps its request in progress until hyper has sent it all (or the
/// connection ended) and drops it.
pub struct Guarded<B> {
    body: B,
    _request: InProgress,
}

impl<B> Guarded<B> {
    pub fn new(body: B, request: InProgress) -> Guarded<B> {
        Guarded {
            body,
            _request: request,
        }
    }
}

impl<B: Body<Data = Bytes, Error = Infallible> + Unpin> Body for Guarded<B> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_full_table_closes_its_oldest_stranger_never_a_token_holder() {
        let table = Table::new(2);
        let (a, mut a_out) = table.admit().unwrap();
        let (b, mut b_out) = table.admit().unwrap();
        b.showed_token();
        // Full: the new connection takes the oldest stranger's place.
        let (c, mut c_out) = table.admit().unwrap();
        assert_eq!(
            a_out.try_recv(),
            Ok(()),
            "the oldest stranger was not closed"
        );
        assert!(b_out.try_recv().is_err(), "a token holder was closed");
        c.showed_token();
        // `a` has not closed yet: the table allows some slack for connections being closed.
        assert_eq!(table.open(), 3);
        drop(a);
        assert_eq!(table.open(), 2);
        // Full of token holders: the next connection is turned away.
        assert!(table.admit().is_none());
        drop(b);
        let (_d, _) = table.admit().unwrap();
        assert!(c_out.try_recv().is_err());
    }

    #[tokio::test]
    async fn the_listener_waits_while_too_many_strangers_are_closing() {
        let table = Table::new(2);
        let mut held = Vec::new();
        // 2 open, then 1 more (half of 2, rounded up) while the ones closed to make room have
        // not dropped their sockets yet.
        for _ in 0..3 {
            table.room().await;
            held.push(table.admit().unwrap());
        }
        let waiting = tokio::spawn({
            let table = table.clone();
            async move { table.room().await }
        });
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "room with 3 sockets open of at most 3"
        );
        // An evicted stranger closes: room again.
        let (oldest, mut evicted) = held.remove(0);
        assert_eq!(evicted.try_recv(), Ok(()));
        drop(oldest);
        waiting.await.unwrap();
    }

    #[tokio::test]
    async fn quiet_waits_while_a_request_is_in_progress() {
        let limits = Limits {
            max_connections: 4,
            header_timeout: Duration::from_millis(20),
            idle_timeout: Duration::from_millis(50),
            max_sessions: 4,
        };
        let table = Table::new(4);
        let (conn, _) = table.admit().unwrap();
        // A stranger that sends nothing is closed.
        conn.quiet(&limits).await;

        conn.showed_token();
        let request = conn.request();
        let watch = tokio::spawn({
            let conn = conn.clone();
            async move { conn.quiet(&limits).await }
        });
        // Many times either bound: still open, since a request is in progress.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!watch.is_finished(), "closed with a request in progress");
        drop(request);
        watch.await.unwrap();
    }
}
