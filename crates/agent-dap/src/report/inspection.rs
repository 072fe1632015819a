//! Looking deeper into a stopped debuggee, and at its output: [`Threads`], [`Stack`],
//! [`ScopesOf`], [`VariablesOf`], [`Evaluated`], [`Output`].

use super::rows::{FrameRow, VariableRow, lines};
use agent_tier::Report;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;

/// `threads`: the debuggee's threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Threads {
    pub threads: Vec<ThreadRow>,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ThreadRow {
    pub id: i64,
    pub name: String,
}

impl Report for Threads {
    fn text(&self) -> String {
        let mut text = format!("{} thread(s):", self.threads.len());
        for t in &self.threads {
            let _ = write!(text, "\n- {}: {}", t.id, t.name);
        }
        text
    }
}

/// `stack`: a stopped thread's top frames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Stack {
    pub thread_id: i64,
    pub frames: Vec<FrameRow>,
    /// How many frames the thread has, when the adapter counts them.
    #[serde(skip)]
    pub total: Option<u64>,
}

impl Report for Stack {
    fn text(&self) -> String {
        let mut text = format!(
            "thread {}, {} frame(s):{}",
            self.thread_id,
            self.frames.len(),
            lines(self.frames.iter().map(FrameRow::line_text))
        );
        let shown = self.frames.len() as u64;
        if let Some(t) = self.total
            && t > shown
        {
            let _ = write!(text, "\n… {} more frame(s) not shown", t - shown);
        }
        text
    }
}

/// `scopes`: a frame's scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ScopesOf {
    pub frame_id: i64,
    pub scopes: Vec<ScopeRow>,
}

/// One scope and the reference of its variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ScopeRow {
    pub name: String,
    pub reference: i64,
    /// How many variables it has, when the adapter says.
    #[serde(skip)]
    pub named_variables: Option<u64>,
    /// Fetching its variables is expensive (globals, registers).
    #[serde(skip)]
    pub expensive: bool,
}

impl Report for ScopesOf {
    fn text(&self) -> String {
        let mut text = format!("scopes of frame {}:", self.frame_id);
        for sc in &self.scopes {
            let _ = write!(text, "\n- {}: reference {}", sc.name, sc.reference);
            if let Some(n) = sc.named_variables {
                let _ = write!(text, ", {n} variable(s)");
            }
            if sc.expensive {
                text.push_str(", expensive");
            }
        }
        text
    }
}

/// `variables`: the children of a reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct VariablesOf {
    pub reference: i64,
    pub variables: Vec<VariableRow>,
    /// How many were left out.
    pub not_shown: usize,
}

impl Report for VariablesOf {
    fn text(&self) -> String {
        let mut text = format!(
            "{} variable(s) in reference {}:{}",
            self.variables.len() + self.not_shown,
            self.reference,
            lines(
                self.variables
                    .iter()
                    .map(|v| format!("- {}", v.line_text()))
            )
        );
        if self.not_shown > 0 {
            let _ = write!(text, "\n… {} more not shown", self.not_shown);
        }
        text
    }
}

/// `evaluate`: an expression's value in a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Evaluated {
    /// The frame it was evaluated in.
    #[serde(skip)]
    pub frame: i64,
    /// The expression as the name, its result as the value.
    #[serde(flatten)]
    pub result: VariableRow,
}

impl Report for Evaluated {
    fn text(&self) -> String {
        format!("in frame {}: {}", self.frame, self.result.line_text())
    }
}

/// `output`: the debuggee's captured output from a cursor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Output {
    pub output: String,
    /// Where the text really starts (later than asked when earlier output was dropped).
    pub cursor: usize,
    /// Where the next call starts.
    pub next_cursor: usize,
    /// Bytes after this text, not returned yet.
    pub remaining: usize,
    /// The cursor asked for (or where the last call stopped).
    #[serde(skip)]
    pub asked: usize,
}

impl Report for Output {
    fn text(&self) -> String {
        let mut out = if self.output.is_empty() {
            "no new output".to_string()
        } else {
            self.output.clone()
        };
        if self.cursor > self.asked {
            out = format!(
                "({} earlier bytes were dropped)\n{out}",
                self.cursor - self.asked
            );
        }
        if self.remaining > 0 {
            let _ = write!(
                out,
                "\n… {} more byte(s): call `output` again",
                self.remaining
            );
        }
        out
    }
}
