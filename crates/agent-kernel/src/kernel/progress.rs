//! What a running cell has printed so far, as the call's progress messages: the tail of its
//! output, at most one message per [`GAP`]. Nothing is kept when nobody listens.

use agent_tier::CallContext;
use agent_tier::display::TextTail;
use std::time::Duration;
use tokio::time::Instant;

/// The most output a message carries: its last bytes.
pub(crate) const TAIL: usize = 2048;
/// The shortest gap between two messages; output meanwhile waits for the next one.
pub(crate) const GAP: Duration = Duration::from_millis(250);

pub(crate) struct CellProgress {
    on: bool,
    lang: &'static str,
    started: Instant,
    tail: TextTail,
    dirty: bool,
    next: Instant,
}

impl CellProgress {
    pub(crate) fn new(cx: &CallContext, lang: &'static str) -> Self {
        let now = Instant::now();
        CellProgress {
            on: cx.progress_wanted(),
            lang,
            started: now,
            tail: TextTail::new(TAIL),
            dirty: false,
            next: now,
        }
    }

    /// Take output the cell printed (stdout and stderr, in order).
    pub(crate) fn push(&mut self, text: &str) {
        if !self.on || text.is_empty() {
            return;
        }
        self.tail.push(text);
        self.dirty = true;
    }

    /// When a message is waiting for its turn.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.dirty.then_some(self.next)
    }

    /// Send the output so far if there is new output and the gap has passed.
    pub(crate) fn flush(&mut self, cx: &CallContext) {
        let now = Instant::now();
        if !self.dirty || now < self.next {
            return;
        }
        self.dirty = false;
        self.next = now + GAP;
        cx.progress(self.message(now));
    }

    fn message(&self, now: Instant) -> String {
        format!(
            "{} cell running ({:.0} s), output so far:\n{}{}",
            self.lang,
            (now - self.started).as_secs_f64(),
            if self.tail.dropped() > 0 { "…" } else { "" },
            self.tail.text()
        )
    }
}
