//! The rows several results share — a line breakpoint, a function breakpoint, a frame, a
//! variable — each with the line it reads as.

use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;

/// A line breakpoint as the adapter set it, with the source line it landed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct BreakpointRow {
    /// The file, relative to the root.
    pub file: String,
    /// Where the adapter put it (the line asked for when it does not say).
    pub line: Option<u32>,
    /// The line asked for.
    pub requested_line: Option<u32>,
    pub verified: bool,
    /// What the adapter says about it (why it is not verified).
    pub message: Option<String>,
    /// The source line it landed on, trimmed and cut.
    pub source: Option<String>,
}

impl BreakpointRow {
    /// "- a.py:4: verified: `acc += i`", "- a.py:5 (asked 3, moved by the adapter): …".
    pub fn line_text(&self) -> String {
        let mut at = match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        };
        if let (Some(asked), Some(l)) = (self.requested_line, self.line)
            && asked != l
        {
            let _ = write!(at, " (asked {asked}, moved by the adapter)");
        }
        let mut text = format!("- {at}: {}", verified(self.verified));
        push_message_and_source(&mut text, self.message.as_deref(), self.source.as_deref());
        text
    }
}

/// A function breakpoint as the adapter set it (or why it was not), with where it landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FunctionBreakpointRow {
    /// The function's name, as asked.
    pub function: String,
    /// The file it landed in, relative to the root.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub verified: bool,
    pub message: Option<String>,
    /// The source line it landed on, trimmed and cut.
    pub source: Option<String>,
}

impl FunctionBreakpointRow {
    /// "- function main.helper: verified at main.go:21: `func helper(n int) int {`".
    pub fn line_text(&self) -> String {
        let mut text = format!("- function {}: {}", self.function, verified(self.verified));
        match (&self.file, self.line) {
            (Some(f), Some(l)) => {
                let _ = write!(text, " at {f}:{l}");
            }
            (Some(f), None) => {
                let _ = write!(text, " in {f}");
            }
            _ => {}
        }
        push_message_and_source(&mut text, self.message.as_deref(), self.source.as_deref());
        text
    }
}

fn verified(v: bool) -> &'static str {
    if v { "verified" } else { "not verified" }
}

/// " (message)", then ": `source`" when the source line is not empty.
fn push_message_and_source(text: &mut String, message: Option<&str>, source: Option<&str>) {
    if let Some(m) = message {
        let _ = write!(text, " ({m})");
    }
    if let Some(src) = source.filter(|s| !s.is_empty()) {
        let _ = write!(text, ": `{src}`");
    }
}

/// Each row's line, each on a line of its own after a newline.
pub(crate) fn lines(rows: impl IntoIterator<Item = String>) -> String {
    rows.into_iter().map(|r| format!("\n{r}")).collect()
}

/// One frame of a stack: its id (valid until the debuggee moves) and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FrameRow {
    /// Its position from the top (#0).
    #[serde(skip)]
    pub index: usize,
    pub frame_id: i64,
    /// "name (file:line)".
    pub at: String,
}

impl FrameRow {
    /// "#0 frame_id 7: total (app.py:4)".
    pub fn line_text(&self) -> String {
        format!("#{} frame_id {}: {}", self.index, self.frame_id, self.at)
    }
}

/// One variable (or an evaluation's result): its value cut, its type, and the reference of its
/// children (0: none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct VariableRow {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub value: String,
    /// The value looked like a secret and is not shown (`reveal: true` shows it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub masked: bool,
    pub reference: i64,
}

impl VariableRow {
    /// "n: int = 3", "data: dict = {…} [reference 5]".
    pub fn line_text(&self) -> String {
        let mut line = match &self.ty {
            Some(t) => format!("{}: {t} = {}", self.name, self.value),
            None => format!("{} = {}", self.name, self.value),
        };
        if self.reference > 0 {
            let _ = write!(line, " [reference {}]", self.reference);
        }
        line
    }
}

/// The line a breakpoint result ends with when the live adapter cannot honour some options.
pub(crate) fn unsupported_note(unsupported: &[&str]) -> String {
    if unsupported.is_empty() {
        String::new()
    } else {
        format!(
            "\nthis adapter does not support {}; it is ignored",
            unsupported.join(", ")
        )
    }
}
