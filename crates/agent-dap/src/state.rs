//! What a session knows of its debuggee, as the adapter's events tell it: where it is (`Run`,
//! `State`), its captured output, the ids handed out since the last stop. The reader task
//! writes it through [`Shared`]; everything else reads snapshots.

use crate::transport::Sink;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// Output kept per session; older output is dropped (and counted).
const OUTPUT_KEEP: usize = 256 * 1024;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Poisoning follows only a panic while held; no critical section here can panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the debuggee is.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Run {
    /// Launched, not yet configured.
    #[default]
    Starting,
    Running,
    Stopped {
        thread_id: Option<i64>,
        reason: String,
        description: Option<String>,
    },
    /// The debuggee is gone (`exited` and/or `terminated`).
    Exited,
}

/// The session's state as the adapter's events tell it.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub run: Run,
    /// Bumped by every `stopped`, `exited` and `terminated`: waiters compare it.
    pub stop_gen: u64,
    pub initialized: bool,
    pub exit_code: Option<i64>,
    pub terminated: bool,
    /// The connection closed, and why.
    pub closed: Option<String>,
    /// The session is over, and why.
    pub ended: Option<String>,
    pub debuggee_pid: Option<u32>,
}

/// The debuggee's captured stdout/stderr.
#[derive(Debug, Default)]
pub(crate) struct OutputBuf {
    text: String,
    /// Bytes dropped from the front.
    dropped: usize,
    /// Where the next `output` call without a cursor starts.
    pub read_cursor: usize,
}

impl OutputBuf {
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        if self.text.len() > OUTPUT_KEEP {
            let mut cut = self.text.len() - OUTPUT_KEEP;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.dropped += cut;
        }
    }

    /// Total bytes ever captured.
    pub fn end(&self) -> usize {
        self.dropped + self.text.len()
    }

    /// Up to `max` bytes from `cursor`: (text, where it really started, the next cursor).
    pub fn read(&self, cursor: usize, max: usize) -> (String, usize, usize) {
        let start = cursor.clamp(self.dropped, self.end()) - self.dropped;
        let mut start = start;
        while !self.text.is_char_boundary(start) {
            start += 1;
        }
        let mut stop = (start + max).min(self.text.len());
        while !self.text.is_char_boundary(stop) {
            stop -= 1;
        }
        (
            self.text[start..stop].to_string(),
            start + self.dropped,
            stop + self.dropped,
        )
    }
}

/// The ids handed out since the last stop; anything else is unknown.
#[derive(Debug, Default)]
pub(crate) struct Known {
    pub stop_gen: u64,
    /// frame id → "name at file:line"
    pub frames: BTreeMap<i64, String>,
    pub refs: BTreeSet<i64>,
}

/// What the reader task and the supervisor share.
pub(crate) struct Shared {
    pub state: watch::Sender<State>,
    pub output: Mutex<OutputBuf>,
}

impl Sink for Shared {
    fn event(&self, name: &str, body: &Value) {
        match name {
            "output" => {
                let category = body
                    .get("category")
                    .and_then(Value::as_str)
                    .unwrap_or("console");
                if matches!(category, "stdout" | "stderr")
                    && let Some(text) = body.get("output").and_then(Value::as_str)
                {
                    lock(&self.output).push(text);
                }
            }
            "initialized" => self.state.send_modify(|s| s.initialized = true),
            "process" => {
                let pid = body
                    .get("systemProcessId")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok());
                self.state
                    .send_modify(|s| s.debuggee_pid = pid.or(s.debuggee_pid));
            }
            "stopped" => {
                let thread_id = body.get("threadId").and_then(Value::as_i64);
                let reason = body
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_string();
                let description = body
                    .get("description")
                    .or_else(|| body.get("text"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.state.send_modify(|s| {
                    if s.run != Run::Exited {
                        s.run = Run::Stopped {
                            thread_id,
                            reason,
                            description,
                        };
                    }
                    s.stop_gen += 1;
                });
            }
            "continued" => {
                // Only the named thread moved unless `allThreadsContinued` (DAP): the debuggee
                // is still stopped while the thread that stopped it has not continued.
                let thread = body.get("threadId").and_then(Value::as_i64);
                let all = body.get("allThreadsContinued").and_then(Value::as_bool) == Some(true);
                self.state.send_modify(|s| match &s.run {
                    Run::Starting => s.run = Run::Running,
                    Run::Stopped { thread_id, .. }
                        if all
                            || thread.is_none()
                            || thread_id.is_none()
                            || *thread_id == thread =>
                    {
                        s.run = Run::Running;
                    }
                    _ => {}
                });
            }
            "exited" => {
                let code = body.get("exitCode").and_then(Value::as_i64);
                self.state.send_modify(|s| {
                    s.exit_code = code;
                    s.run = Run::Exited;
                    s.stop_gen += 1;
                });
            }
            "terminated" => self.state.send_modify(|s| {
                s.terminated = true;
                s.run = Run::Exited;
                s.stop_gen += 1;
            }),
            _ => {}
        }
    }

    fn closed(&self, why: &str) {
        self.state.send_modify(|s| {
            if s.closed.is_none() {
                s.closed = Some(why.to_string());
            }
            s.stop_gen += 1;
        });
    }
}

impl State {
    /// How the run reads to the model: "stopped (breakpoint, thread 1)", "exited with code 0"…
    pub fn describe(&self) -> String {
        if let Some(why) = &self.ended {
            return format!("ended ({why})");
        }
        if self.closed.is_some() {
            return "adapter gone".to_string();
        }
        match &self.run {
            Run::Starting => "starting".into(),
            Run::Running => "running".into(),
            Run::Stopped {
                thread_id, reason, ..
            } => match thread_id {
                Some(t) => format!("stopped ({reason}, thread {t})"),
                None => format!("stopped ({reason})"),
            },
            Run::Exited => match self.exit_code {
                Some(c) => format!("exited with code {c}"),
                None => "exited".into(),
            },
        }
    }

    /// The thread that last stopped, while stopped.
    pub fn stopped_thread(&self) -> Option<i64> {
        match &self.run {
            Run::Stopped { thread_id, .. } => *thread_id,
            _ => None,
        }
    }
}

/// `1800 s` → `30m`, `2 s` → `2s`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else if s >= 1 {
        format!("{s}s")
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shared() -> Shared {
        Shared {
            state: watch::Sender::new(State::default()),
            output: Mutex::new(OutputBuf::default()),
        }
    }

    /// "stopped" holds only until a `continued` that covers the stopped thread.
    #[test]
    fn stopped_until_a_continued_event_covers_the_stopped_thread() {
        let sh = shared();
        let describe = |sh: &Shared| sh.state.borrow().describe();
        sh.event("stopped", &json!({"reason": "breakpoint", "threadId": 1}));
        assert_eq!(describe(&sh), "stopped (breakpoint, thread 1)");
        // Another thread alone continued: still stopped.
        sh.event(
            "continued",
            &json!({"threadId": 2, "allThreadsContinued": false}),
        );
        assert_eq!(describe(&sh), "stopped (breakpoint, thread 1)");
        // The stopped thread continued: running.
        sh.event(
            "continued",
            &json!({"threadId": 1, "allThreadsContinued": false}),
        );
        assert_eq!(describe(&sh), "running");
        sh.event("stopped", &json!({"reason": "pause", "threadId": 1}));
        // `allThreadsContinued` omitted: that thread only.
        sh.event("continued", &json!({"threadId": 7}));
        assert_eq!(describe(&sh), "stopped (pause, thread 1)");
        sh.event(
            "continued",
            &json!({"threadId": 7, "allThreadsContinued": true}),
        );
        assert_eq!(describe(&sh), "running");
        sh.event("exited", &json!({"exitCode": 0}));
        sh.event("continued", &json!({"threadId": 1}));
        assert_eq!(describe(&sh), "exited with code 0");
    }
}
