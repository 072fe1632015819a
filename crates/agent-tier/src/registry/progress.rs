//! A call's progress: short messages a running tool reports ("output so far", "waiting for the
//! server to finish indexing"), passed to whoever made the call (the MCP host turns each into a
//! progress notification). Protocol-free, bounded and never blocking: the channel holds only the
//! newest message not yet taken, so a slow listener skips to the latest instead of queueing.

use std::sync::Arc;
use tokio::sync::watch;

/// The longest message passed on, in bytes; a longer one is cut at a character boundary and
/// ends with `…`.
pub const PROGRESS_MAX: usize = 4096;

/// Where a call's progress messages go. The registry's caller makes one with
/// [`ProgressSink::channel`] and passes it to [`crate::Registry::call_with_progress`]; a tool
/// reports through [`crate::CallContext::progress`] (or [`progress`] from code that has no call
/// context), and nested calls (a kernel cell's `tool()` bridge) report to the same sink.
/// The default sink discards everything. Cheap to clone.
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<watch::Sender<Option<String>>>>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressSink")
            .field("listening", &self.is_listening())
            .finish()
    }
}

impl ProgressSink {
    /// A sink nobody listens to: every message is dropped.
    pub fn none() -> Self {
        ProgressSink(None)
    }

    /// A sink and its listener.
    pub fn channel() -> (ProgressSink, ProgressListener) {
        let (tx, rx) = watch::channel(None);
        (ProgressSink(Some(Arc::new(tx))), ProgressListener(rx))
    }

    /// Whether anybody listens: a tool may skip composing messages when nobody does.
    pub fn is_listening(&self) -> bool {
        self.0.as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// Report a message; it replaces one the listener has not taken yet. Never blocks, never
    /// fails; a no-op when nobody listens. An empty message, or the one already pending, is
    /// ignored.
    pub fn send(&self, message: impl Into<String>) {
        let Some(tx) = self.0.as_ref().filter(|tx| !tx.is_closed()) else {
            return;
        };
        let message = truncate(message.into());
        if message.trim().is_empty() {
            return;
        }
        tx.send_if_modified(|pending| {
            if pending.as_deref() == Some(message.as_str()) {
                return false;
            }
            *pending = Some(message);
            true
        });
    }
}

/// The receiving end of a [`ProgressSink`].
#[derive(Debug)]
pub struct ProgressListener(watch::Receiver<Option<String>>);

impl ProgressListener {
    /// The next message: the newest reported since the last one taken. `None` once every clone
    /// of the sink is gone and nothing is left to take. Cancel-safe (usable in `select!`).
    pub async fn next(&mut self) -> Option<String> {
        loop {
            self.0.changed().await.ok()?;
            if let Some(m) = self.0.borrow_and_update().clone() {
                return Some(m);
            }
        }
    }
}

fn truncate(mut s: String) -> String {
    if s.len() > PROGRESS_MAX {
        let end = s.floor_char_boundary(PROGRESS_MAX - '…'.len_utf8());
        s.truncate(end);
        s.push('…');
    }
    s
}

tokio::task_local! {
    /// The sink of the call whose tool (or wrapper) is running on this task.
    pub(super) static CURRENT: ProgressSink;
}

/// Report progress for the call this code runs in, from code that has no [`crate::CallContext`]
/// at hand (deep inside a family). A no-op outside a call, on a task the call spawned, or when
/// nobody listens.
pub fn progress(message: impl Into<String>) {
    let _ = CURRENT.try_with(|sink| sink.send(message));
}

/// Whether the call this code runs in has a listener for [`progress`].
pub fn progress_wanted() -> bool {
    CURRENT
        .try_with(ProgressSink::is_listening)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn latest_wins_and_long_messages_are_cut() {
        let (sink, mut rx) = ProgressSink::channel();
        assert!(sink.is_listening());
        sink.send("one");
        sink.send("two");
        assert_eq!(rx.next().await.as_deref(), Some("two"));
        sink.send("x".repeat(PROGRESS_MAX * 2));
        let long = rx.next().await.unwrap_or_default();
        assert!(long.len() <= PROGRESS_MAX && long.ends_with('…'));
        drop(sink);
        assert_eq!(rx.next().await, None);
    }

    #[tokio::test]
    async fn nobody_listening_is_fine() {
        ProgressSink::none().send("dropped");
        assert!(!ProgressSink::none().is_listening());
        let (sink, rx) = ProgressSink::channel();
        drop(rx);
        assert!(!sink.is_listening());
        sink.send("dropped");
        progress("outside any call");
        assert!(!progress_wanted());
    }
}
