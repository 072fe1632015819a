//! A session's own results: [`Started`] (`launch`, `attach`), [`Status`] and [`Terminated`].

use super::rows::{BreakpointRow, FunctionBreakpointRow, lines};
use super::stop::Moved;
use agent_tier::Report;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;

/// A session started by `launch` or `attach`: what was set, and where the debuggee went.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Started {
    /// How it reads: "launched prog.py with debugpy (…)".
    #[serde(skip)]
    pub heading: Heading,
    /// Where the debuggee went first.
    #[serde(flatten)]
    pub moved: Moved,
    /// The session's number in this conversation.
    pub session: u64,
    /// The adapter's process (group) id, when we started it.
    pub adapter_pid: Option<u32>,
    /// The debuggee's pid, when the adapter said it.
    pub debuggee_pid: Option<u32>,
    /// The line breakpoints, file by file.
    pub breakpoints: Vec<BreakpointRow>,
    /// Line breakpoints that followed their line's text since they were set, or could not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reanchored: Vec<String>,
    /// The function breakpoints, one per name, when any were asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_breakpoints: Option<Vec<FunctionBreakpointRow>>,
    /// The adapter has no function breakpoints: they were placed by the language servers'
    /// definitions (the adapter's name).
    #[serde(skip)]
    pub placed_by_definitions: Option<&'static str>,
    /// What a test launch built first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built: Option<Built>,
    /// Which exceptions stop the debuggee (`none`, `uncaught`, `all`).
    pub exceptions: &'static str,
    /// The adapter's filters that setting turned on.
    pub exception_filters: Vec<String>,
    /// A line an attach result adds about its adapter.
    #[serde(skip)]
    pub attach_note: Option<&'static str>,
}

/// The first line of a started session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    pub attached: bool,
    /// What is debugged.
    pub target: String,
    pub adapter: &'static str,
    /// The adapter's command line.
    pub command: String,
}

/// A test binary the launch built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Built {
    /// The build command, as shown.
    pub command: String,
    /// The executable, absolute.
    pub executable: String,
    /// Which target of which package (`lib demo`, `test api`).
    pub target: String,
    /// The executable, relative to the root.
    #[serde(skip)]
    pub shown: String,
}

impl Report for Started {
    fn text(&self) -> String {
        let h = &self.heading;
        let mut text = format!(
            "session {}: {} {} with {} ({})",
            self.session,
            if h.attached {
                "attached to"
            } else {
                "launched"
            },
            h.target,
            h.adapter,
            h.command
        );
        if let Some(b) = &self.built {
            let _ = write!(
                text,
                "\nbuilt by `{}`: {} (the {} test binary)",
                b.command, b.shown, b.target
            );
        }
        text.push_str(&lines(
            self.breakpoints.iter().map(BreakpointRow::line_text),
        ));
        for note in &self.reanchored {
            let _ = write!(text, "\n{note}");
        }
        if let Some(rows) = &self.function_breakpoints {
            if let Some(adapter) = self.placed_by_definitions {
                let _ = write!(
                    text,
                    "\nthe {adapter} adapter has no function breakpoints: placed by the language server's definitions"
                );
            }
            text.push_str(&lines(rows.iter().map(FunctionBreakpointRow::line_text)));
        }
        let _ = write!(
            text,
            "\nexceptions: {} ({})",
            self.exceptions,
            if self.exception_filters.is_empty() {
                "no adapter filter".to_string()
            } else {
                format!("filters {}", self.exception_filters.join(", "))
            }
        );
        text.push('\n');
        text.push_str(&self.moved.text());
        if h.attached {
            if let Some(note) = self.attach_note {
                text.push('\n');
                text.push_str(note);
            }
            text.push_str("\n(attached: `terminate` disconnects and leaves the program running)");
        }
        text
    }
}

/// `status`: the session, or that there is none.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Status {
    /// No session has run in this conversation.
    None(NoSession),
    /// The session, live or ended.
    Session(Box<SessionStatus>),
}

/// No session yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct NoSession {
    /// Always `null`.
    pub session: Option<u64>,
    /// How many breakpoints (lines and functions) are set for the next launch.
    pub breakpoints: usize,
}

/// A session's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct SessionStatus {
    /// "session 1 (debugpy on prog.py, stopped (breakpoint, thread 1))".
    #[serde(skip)]
    pub described: String,
    /// Its age, time to live and command, while it is live.
    #[serde(skip)]
    pub live: Option<Live>,
    pub session: u64,
    pub adapter: &'static str,
    /// The debuggee's state, described.
    pub state: String,
    pub exit_code: Option<i64>,
    /// Bytes of program output not read yet.
    pub unread_output: usize,
    pub adapter_pid: Option<u32>,
    pub debuggee_pid: Option<u32>,
}

/// What `status` says of a live session besides its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Live {
    /// "2s", "5m".
    pub age: String,
    pub ttl: String,
    /// The adapter's command line.
    pub command: String,
    /// "name (file:line) in thread N", while stopped.
    pub stopped_at: Option<String>,
}

impl Report for Status {
    fn text(&self) -> String {
        let s = match self {
            Status::None(n) => {
                return format!(
                    "no debug session in this conversation; {} breakpoint(s) set for the next launch; call `launch` or `attach`",
                    n.breakpoints
                );
            }
            Status::Session(s) => s,
        };
        let mut text = s.described.clone();
        if let Some(live) = &s.live {
            let _ = write!(
                text,
                "\nage {} of a {} time to live; adapter: {}",
                live.age, live.ttl, live.command
            );
            if let Some(at) = &live.stopped_at {
                let _ = write!(text, "\nstopped at {at}");
            }
        }
        let _ = write!(
            text,
            "\n{} byte(s) of program output not read yet (`output`)",
            s.unread_output
        );
        text
    }
}

/// `terminate`: the session ended (or had ended already).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Terminated {
    pub session: u64,
    /// Whether it was live: `false` when it had already ended.
    pub terminated: bool,
    /// What was debugged.
    #[serde(skip)]
    pub target: String,
    /// Attached to a program we did not start (left running).
    #[serde(skip)]
    pub attached: bool,
    /// How it had ended, when it had.
    #[serde(skip)]
    pub ended: String,
}

impl Report for Terminated {
    fn text(&self) -> String {
        match (self.terminated, self.attached) {
            (true, true) => format!(
                "session {} on {} terminated; the adapter was stopped and the debuggee was detached, left running",
                self.session, self.target
            ),
            (true, false) => format!(
                "session {} on {} terminated; the adapter and the debuggee were killed",
                self.session, self.target
            ),
            (false, _) => format!(
                "session {} had already ended ({}); its processes are gone",
                self.session, self.ended
            ),
        }
    }
}
