//! Where the debuggee went after it moved ([`Moved`]): the stop snapshot — why it stopped (an
//! exception with its message), `file:line` with the source around it, the top frames, the shown
//! frame's locals — or its exit with the new output, or that it still runs, or that the adapter
//! went away.

use super::rows::{FrameRow, VariableRow, lines};
use crate::limits::{EXIT_TAIL, STOP_CONTEXT};
use agent_tier::Report;
use agent_tier::display::clip_tail_chars;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// Where the debuggee is after it moved, by its `state`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "state")]
pub(crate) enum Moved {
    /// Stopped, with the snapshot of the stop.
    #[serde(rename = "stopped")]
    Stopped(Box<Snapshot>),
    /// Stopped where it cannot be seen (no thread, no frame).
    #[serde(rename = "stopped")]
    Unseen(Unseen),
    /// The program exited (or terminated without a code).
    #[serde(rename = "exited")]
    Exited(Exited),
    /// Still running after the wait.
    #[serde(rename = "running")]
    Running(Running),
    /// The adapter exited unexpectedly: the session is over.
    #[serde(rename = "adapter gone")]
    AdapterGone(AdapterGone),
}

impl Report for Moved {
    fn text(&self) -> String {
        match self {
            Moved::Stopped(s) => s.text(),
            Moved::Unseen(u) => format!("stopped ({}{}) {}", u.reason, u.description, u.why),
            Moved::Exited(e) => e.text(),
            Moved::Running(r) => format!(
                "still running after {}; call `status` to see where it stops, or `pause`",
                agent_tier::display::duration(r.waited)
            ),
            Moved::AdapterGone(g) => format!(
                "the debug adapter exited unexpectedly; the session is over{}",
                if g.stderr.is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {}", g.stderr)
                }
            ),
        }
    }
}

/// The snapshot of a stop.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Snapshot {
    /// `breakpoint`, `step`, `exception`, `pause`…
    pub reason: String,
    /// What the adapter adds in words, as ", …" (empty when it adds nothing, or when the
    /// exception's own line says it).
    #[serde(skip)]
    pub description: String,
    pub thread_id: i64,
    /// "name (file:line) in thread N" of the top frame.
    pub at: String,
    /// The exception it stopped on, when the adapter tells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<Raised>,
    /// The source around the shown frame's line, when it has one on disk.
    #[serde(flatten)]
    pub listing: Option<Listing>,
    /// The top frames, and the shown frame when it is below them.
    pub frames: Vec<FrameRow>,
    /// Frames of the thread not listed, when the adapter counts them.
    #[serde(skip)]
    pub more_frames: u64,
    /// The shown frame's locals.
    #[serde(flatten)]
    pub locals: Option<Locals>,
    /// Why the locals could not be fetched.
    #[serde(skip)]
    pub locals_unavailable: Option<String>,
}

impl Snapshot {
    fn text(&self) -> String {
        let mut text = format!(
            "stopped ({}{}) at {}",
            self.reason, self.description, self.at
        );
        if let Some(r) = &self.exception {
            let _ = write!(text, "\nexception {}: {}", r.id, r.message);
        }
        if let Some(l) = &self.listing {
            text.push_str(&l.text());
        }
        text.push_str("\nframes:");
        text.push_str(&lines(self.frames.iter().map(FrameRow::line_text)));
        if self.more_frames > 0 {
            let _ = write!(text, "\n… {} more frame(s) (`stack`)", self.more_frames);
        }
        if let Some(l) = &self.locals {
            text.push_str(&l.text());
        }
        if let Some(e) = &self.locals_unavailable {
            let _ = write!(text, "\nlocals unavailable: {e}");
        }
        text
    }
}

/// An exception's id (its type) and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Raised {
    pub id: String,
    pub message: String,
}

/// The source around the shown frame's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Listing {
    /// The file, relative to the root.
    pub file: String,
    pub line: u32,
    pub source: Vec<SourceLine>,
    /// Which frame it is, when not the top one (the first in the workspace).
    #[serde(skip)]
    pub frame_index: usize,
}

impl Listing {
    fn text(&self) -> String {
        let mut text = format!("\n{}:{}", self.file, self.line);
        if self.frame_index > 0 {
            let _ = write!(
                text,
                " (frame #{}, the first in the workspace)",
                self.frame_index
            );
        }
        let width = (self.line as usize + STOP_CONTEXT).to_string().len();
        for l in &self.source {
            let mark = if l.line == self.line { '>' } else { ' ' };
            let row = format!("{mark} {:>width$} | {}", l.line, l.text);
            let _ = write!(text, "\n{}", row.trim_end());
        }
        text
    }
}

/// One line of source, cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct SourceLine {
    pub line: u32,
    pub text: String,
}

/// A frame's locals: its first scope that is not expensive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Locals {
    /// The scope's name (`Locals`).
    #[serde(skip)]
    pub scope: String,
    /// The frame whose scope it is.
    #[serde(skip)]
    pub frame: i64,
    /// The scope's reference, for `variables`.
    #[serde(skip)]
    pub reference: i64,
    #[serde(rename = "locals")]
    pub rows: Vec<VariableRow>,
    /// How many were left out.
    #[serde(rename = "locals_not_shown")]
    pub not_shown: usize,
}

impl Locals {
    fn text(&self) -> String {
        let mut text = format!(
            "\n{} of frame {} (reference {}):",
            self.scope, self.frame, self.reference
        );
        text.push_str(&lines(
            self.rows.iter().map(|r| format!("- {}", r.line_text())),
        ));
        if self.not_shown > 0 {
            let _ = write!(
                text,
                "\n… {} more not shown (`variables` reference {})",
                self.not_shown, self.reference
            );
        }
        if self.rows.is_empty() {
            text.push_str("\n(none)");
        }
        text
    }
}

/// A stop that cannot be seen: no thread to look at, or a thread without frames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Unseen {
    pub reason: String,
    #[serde(skip)]
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<i64>,
    /// Where, in words: "at an unknown location (…)", "in thread 1, which has no frames".
    #[serde(skip)]
    pub why: String,
}

/// The program's exit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Exited {
    /// `None`: it terminated without saying a code.
    pub exit_code: Option<i64>,
    /// The output it wrote since it was last read.
    #[serde(skip)]
    pub output: String,
}

impl Exited {
    fn text(&self) -> String {
        let mut text = match self.exit_code {
            Some(c) => format!("the program exited with code {c}"),
            None => "the program terminated".to_string(),
        };
        if !self.output.is_empty() {
            let _ = write!(
                text,
                "; new output (also in `output`):\n{}",
                clip_tail_chars(&self.output, EXIT_TAIL)
            );
        }
        text
    }
}

/// The debuggee still runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Running {
    /// How long the call waited for a stop.
    #[serde(skip)]
    pub waited: Duration,
}

/// The adapter went away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct AdapterGone {
    /// The end of its stderr.
    #[serde(skip)]
    pub stderr: String,
}
