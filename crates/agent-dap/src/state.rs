//! What a session knows of its debuggee, as the adapter's events tell it: where it is (`Run`,
//! `State`), its captured output, the ids handed out since the last stop. The reader task
//! writes it through [`Shared`]; everything else reads snapshots.

use crate::protocol::{Continued, ContinuedBody, Event, Exited, Stopped, StoppedBody};
use crate::transport::Sink;
use agent_rpc::{Malformed, Notification};
use agent_tier::display::TextTail;
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use tokio::sync::watch;

/// Output kept per session; older output is dropped (and counted).
const OUTPUT_KEEP: usize = 256 * 1024;

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
#[derive(Debug)]
pub(crate) struct OutputBuf {
    tail: TextTail,
    /// Where the next `output` call without a cursor starts.
    pub read_cursor: usize,
}

impl Default for OutputBuf {
    fn default() -> Self {
        OutputBuf {
            tail: TextTail::new(OUTPUT_KEEP),
            read_cursor: 0,
        }
    }
}

impl OutputBuf {
    pub fn push(&mut self, s: &str) {
        self.tail.push(s);
    }

    /// Total bytes ever captured.
    pub fn end(&self) -> usize {
        self.tail.end()
    }

    /// Up to `max` bytes from `cursor`: (text, where it really started, the next cursor).
    pub fn read(&self, cursor: usize, max: usize) -> (String, usize, usize) {
        self.tail.read(cursor, max)
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
    fn event(&self, event: Result<Event, Malformed>) {
        let event = match event {
            Ok(e) => e,
            Err(m) if m.method == Exited::METHOD => return self.exited(None),
            Err(m) => match read_anyway(&m) {
                Some(e) => e,
                None => return,
            },
        };
        match event {
            Event::Output(o) => {
                if o.is_program_output() {
                    self.output.lock().push(&o.output);
                }
            }
            Event::Initialized => self.state.send_modify(|s| s.initialized = true),
            Event::Process(p) => {
                self.state
                    .send_modify(|s| s.debuggee_pid = p.system_process_id.or(s.debuggee_pid));
            }
            Event::Stopped(stopped) => {
                let description = stopped.description.or(stopped.text);
                self.state.send_modify(|s| {
                    if s.run != Run::Exited {
                        s.run = Run::Stopped {
                            thread_id: stopped.thread_id,
                            reason: stopped.reason,
                            description,
                        };
                    }
                    s.stop_gen += 1;
                });
            }
            Event::Continued(c) => {
                // Only the named thread moved unless `allThreadsContinued` (DAP): the debuggee
                // is still stopped while the thread that stopped it has not continued.
                self.state.send_modify(|s| match &s.run {
                    Run::Starting => s.run = Run::Running,
                    Run::Stopped { thread_id, .. }
                        if c.all_threads_continued
                            || c.thread_id.is_none()
                            || thread_id.is_none()
                            || *thread_id == c.thread_id =>
                    {
                        s.run = Run::Running;
                    }
                    _ => {}
                });
            }
            Event::Exited(e) => self.exited(Some(e.exit_code)),
            Event::Terminated => self.state.send_modify(|s| {
                s.terminated = true;
                s.run = Run::Exited;
                s.stop_gen += 1;
            }),
            Event::Other => {}
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

impl Shared {
    fn exited(&self, code: Option<i64>) {
        self.state.send_modify(|s| {
            s.exit_code = code;
            s.run = Run::Exited;
            s.stop_gen += 1;
        });
    }
}

/// What a malformed event still says, where dropping it would leave the session waiting on
/// something that happened: a `stopped` is a stop (its reason `unknown`, the description saying
/// what was malformed), a `continued` that all threads run (and a malformed `exited` an exit
/// without a code, in [`Sink::event`]). Any other malformed event is dropped.
fn read_anyway(m: &Malformed) -> Option<Event> {
    match m.method {
        Stopped::METHOD => Some(Event::Stopped(StoppedBody {
            reason: "unknown".to_string(),
            description: Some(m.to_string()),
            text: None,
            thread_id: None,
        })),
        Continued::METHOD => Some(Event::Continued(ContinuedBody {
            thread_id: None,
            all_threads_continued: true,
        })),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn shared() -> Shared {
        Shared {
            state: watch::Sender::new(State::default()),
            output: Mutex::new(OutputBuf::default()),
        }
    }

    /// Hand `sh` the event `name` with `body`, read as the transport reads it.
    fn send(sh: &Shared, name: &str, body: Value) {
        sh.event(Event::read(name, body));
    }

    /// "stopped" holds only until a `continued` that covers the stopped thread.
    #[test]
    fn stopped_until_a_continued_event_covers_the_stopped_thread() {
        let sh = shared();
        let describe = |sh: &Shared| sh.state.borrow().describe();
        send(
            &sh,
            "stopped",
            json!({"reason": "breakpoint", "threadId": 1}),
        );
        assert_eq!(describe(&sh), "stopped (breakpoint, thread 1)");
        // Another thread alone continued: still stopped.
        send(
            &sh,
            "continued",
            json!({"threadId": 2, "allThreadsContinued": false}),
        );
        assert_eq!(describe(&sh), "stopped (breakpoint, thread 1)");
        // The stopped thread continued: running.
        send(
            &sh,
            "continued",
            json!({"threadId": 1, "allThreadsContinued": false}),
        );
        assert_eq!(describe(&sh), "running");
        send(&sh, "stopped", json!({"reason": "pause", "threadId": 1}));
        // `allThreadsContinued` omitted: that thread only.
        send(&sh, "continued", json!({"threadId": 7}));
        assert_eq!(describe(&sh), "stopped (pause, thread 1)");
        send(
            &sh,
            "continued",
            json!({"threadId": 7, "allThreadsContinued": true}),
        );
        assert_eq!(describe(&sh), "running");
        send(&sh, "exited", json!({"exitCode": 0}));
        send(&sh, "continued", json!({"threadId": 1}));
        assert_eq!(describe(&sh), "exited with code 0");
    }

    /// A malformed event that says something happened still moves the state, saying what was
    /// malformed; one that says nothing the session waits on is dropped.
    #[test]
    fn a_malformed_stop_or_exit_still_counts() {
        let sh = shared();
        send(&sh, "stopped", json!({"threadId": 1}));
        let state = sh.state.borrow().clone();
        assert_eq!(state.stop_gen, 1);
        match &state.run {
            Run::Stopped {
                reason,
                description: Some(d),
                thread_id: None,
            } => {
                assert_eq!(reason, "unknown");
                assert!(
                    d.contains("stopped notification is malformed: missing field `reason`"),
                    "{d}"
                );
            }
            other => panic!("{other:?}"),
        }
        send(&sh, "output", json!({"category": "stdout"}));
        assert_eq!(sh.output.lock().end(), 0);
        send(&sh, "continued", Value::Null);
        assert_eq!(sh.state.borrow().describe(), "running");
        send(&sh, "exited", json!({"exitCode": "zero"}));
        assert_eq!(sh.state.borrow().describe(), "exited");
        assert_eq!(sh.state.borrow().stop_gen, 2);
    }
}
