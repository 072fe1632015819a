//! The bounded queue between a kernel's reader tasks and the cell loop.
//!
//! Output a kernel prints while no cell runs (a background thread, a timer, a child process
//! writing to the inherited descriptor) waits here until the next call. At most [`QUEUE_CAP`]
//! bytes wait (each event also costs [`EVENT_COST`] for its own bookkeeping); output beyond that
//! is dropped and counted, and the next call says how much. Frames that drive a cell (`done`,
//! a `tool()` bridge call, the end of the stream) are never dropped.

use crate::frames::Event;
use crate::protocol::DriverFrame;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;

/// How many bytes of output may wait for the cell loop.
pub(crate) const QUEUE_CAP: usize = 1024 * 1024;
/// What one queued event costs beyond its payload.
pub(crate) const EVENT_COST: usize = 128;

struct Shared {
    queued: AtomicUsize,
    dropped: AtomicUsize,
    cap: usize,
}

/// The sending side, shared by the stdout reader and the stderr pump.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<(Event, usize)>,
    shared: Arc<Shared>,
}

/// The receiving side, owned by the kernel.
pub(crate) struct Inbox {
    rx: mpsc::UnboundedReceiver<(Event, usize)>,
    shared: Arc<Shared>,
}

pub(crate) fn channel(cap: usize) -> (Outbox, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        queued: AtomicUsize::new(0),
        dropped: AtomicUsize::new(0),
        cap,
    });
    (
        Outbox {
            tx,
            shared: shared.clone(),
        },
        Inbox { rx, shared },
    )
}

/// Output that may be dropped when the queue is full.
fn droppable(ev: &Event) -> bool {
    match ev {
        Event::Raw(_) | Event::Stderr(_) => true,
        Event::Frame(f) => matches!(f, DriverFrame::Stream { .. } | DriverFrame::Display { .. }),
        Event::Malformed(_) | Event::OversizedBridge { .. } | Event::Closed => false,
    }
}

impl Outbox {
    /// Queue `ev` (`bytes` of payload), or drop it if it is output and the queue is full.
    pub(crate) fn send(&self, ev: Event, bytes: usize) {
        let cost = bytes.saturating_add(EVENT_COST);
        if droppable(&ev) && self.shared.queued.load(Ordering::Acquire) + cost > self.shared.cap {
            self.shed(bytes);
            return;
        }
        self.shared.queued.fetch_add(cost, Ordering::AcqRel);
        if self.tx.send((ev, cost)).is_err() {
            self.shared.queued.fetch_sub(cost, Ordering::AcqRel);
        }
    }

    /// Whether output would be dropped now (the reader then skips parsing it).
    pub(crate) fn full(&self) -> bool {
        self.shared.queued.load(Ordering::Acquire) + EVENT_COST >= self.shared.cap
    }

    /// Count `bytes` of output dropped before they were queued.
    pub(crate) fn shed(&self, bytes: usize) {
        if bytes > 0 {
            self.shared.dropped.fetch_add(bytes, Ordering::AcqRel);
        }
    }
}

impl Inbox {
    pub(crate) async fn recv(&mut self) -> Option<Event> {
        let (ev, cost) = self.rx.recv().await?;
        self.shared.queued.fetch_sub(cost, Ordering::AcqRel);
        Some(ev)
    }

    pub(crate) fn try_recv(&mut self) -> Option<Event> {
        let (ev, cost) = self.rx.try_recv().ok()?;
        self.shared.queued.fetch_sub(cost, Ordering::AcqRel);
        Some(ev)
    }

    /// How many bytes of output were dropped since the last call.
    pub(crate) fn take_dropped(&self) -> usize {
        self.shared.dropped.swap(0, Ordering::AcqRel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_beyond_the_cap_is_dropped_and_counted_but_control_frames_are_not() {
        let (tx, mut rx) = channel(10 * EVENT_COST);
        for _ in 0..100 {
            tx.send(Event::Raw("x".repeat(100)), 100);
        }
        let done = r#"{"t":"done","id":1,"status":"ok","result":null,"error":null,"displays_dropped":0,"defined":[],"defined_total":0}"#;
        tx.send(Event::Frame(serde_json::from_str(done).unwrap()), 20);
        tx.send(Event::Closed, 0);
        let mut raw = 0;
        let mut done = false;
        let mut closed = false;
        while let Some(ev) = rx.try_recv() {
            match ev {
                Event::Raw(s) => raw += s.len(),
                Event::Frame(f) => done = matches!(f, DriverFrame::Done(_)),
                Event::Closed => closed = true,
                Event::Stderr(_) | Event::Malformed(_) | Event::OversizedBridge { .. } => {}
            }
        }
        assert!(done && closed);
        assert!(raw > 0 && raw < 10 * EVENT_COST, "{raw}");
        assert_eq!(raw + rx.take_dropped(), 100 * 100);
        assert_eq!(rx.take_dropped(), 0);
        // the queue is empty again, so output is accepted again
        assert!(!tx.full());
        tx.send(Event::Stderr("again".into()), 5);
        assert!(matches!(rx.recv().await, Some(Event::Stderr(s)) if s == "again"));
    }
}
