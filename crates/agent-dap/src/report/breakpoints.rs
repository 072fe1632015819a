//! What a `breakpoints` call set: a file's lines ([`FileBreakpointsSet`]) or the function
//! breakpoints ([`FunctionBreakpointsSet`]) — kept for the next launch, or set in the live
//! session.

use super::rows::{BreakpointRow, FunctionBreakpointRow, lines, unsupported_note};
use agent_tier::Report;
use schemars::JsonSchema;
use serde::Serialize;

/// A file's breakpoints after the call.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum FileBreakpointsSet {
    /// No session runs: kept for the next launch (or cleared).
    Kept(FileLines),
    /// Cleared in the live session.
    Cleared(FileLines),
    /// Set in the live session, as the adapter verified them.
    Set(FileSet),
}

/// A file and the lines kept for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FileLines {
    /// The file, relative to the root.
    pub file: String,
    pub lines: Vec<u32>,
    /// Whether they wait for a session.
    pub pending: bool,
}

/// A file's breakpoints as the live adapter set them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FileSet {
    /// The file, relative to the root.
    pub file: String,
    pub breakpoints: Vec<BreakpointRow>,
    /// Always `false`: set now.
    pub pending: bool,
    /// The options asked for that the adapter does not honour.
    #[serde(skip)]
    pub unsupported: Vec<&'static str>,
}

impl Report for FileBreakpointsSet {
    fn text(&self) -> String {
        match self {
            FileBreakpointsSet::Kept(k) if k.lines.is_empty() => {
                format!(
                    "cleared the breakpoints of {}; no session is running",
                    k.file
                )
            }
            FileBreakpointsSet::Kept(k) => format!(
                "{} breakpoint(s) in {} (lines {}) will be set when the session launches",
                k.lines.len(),
                k.file,
                k.lines
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            FileBreakpointsSet::Cleared(c) => format!("cleared the breakpoints of {}", c.file),
            FileBreakpointsSet::Set(s) => format!(
                "breakpoints in {}:{}{}",
                s.file,
                lines(s.breakpoints.iter().map(BreakpointRow::line_text)),
                unsupported_note(&s.unsupported)
            ),
        }
    }
}

/// The function breakpoints after the call.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum FunctionBreakpointsSet {
    /// No session runs: kept for the next launch (or cleared), or cleared in the live session.
    Names(FunctionNames),
    /// Set in the live session.
    Set(FunctionSet),
}

/// The function names kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FunctionNames {
    pub functions: Vec<String>,
    /// Whether they wait for a session.
    pub pending: bool,
}

/// The function breakpoints as the live adapter set them (or as they were placed for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FunctionSet {
    pub function_breakpoints: Vec<FunctionBreakpointRow>,
    /// Always `false`: set now.
    pub pending: bool,
    /// Placed on lines by the language servers' definitions, the adapter having no function
    /// breakpoints (said only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub placed: bool,
    /// The adapter's name.
    #[serde(skip)]
    pub adapter: &'static str,
    /// The options asked for that the adapter does not honour.
    #[serde(skip)]
    pub unsupported: Vec<&'static str>,
}

impl Report for FunctionBreakpointsSet {
    fn text(&self) -> String {
        match self {
            FunctionBreakpointsSet::Names(n) if !n.pending => {
                "cleared the function breakpoints".to_string()
            }
            FunctionBreakpointsSet::Names(n) if n.functions.is_empty() => {
                "cleared the function breakpoints; no session is running".to_string()
            }
            FunctionBreakpointsSet::Names(n) => format!(
                "function breakpoint(s) {} will be set when the session launches",
                n.functions.join(", ")
            ),
            FunctionBreakpointsSet::Set(s) => format!(
                "function breakpoints{}:{}{}",
                if s.placed {
                    format!(
                        " (the {} adapter has none: placed by the language server's definitions)",
                        s.adapter
                    )
                } else {
                    String::new()
                },
                lines(
                    s.function_breakpoints
                        .iter()
                        .map(FunctionBreakpointRow::line_text)
                ),
                unsupported_note(&s.unsupported)
            ),
        }
    }
}
