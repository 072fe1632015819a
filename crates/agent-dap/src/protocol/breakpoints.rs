//! Breakpoints: a file's lines (`setBreakpoints`), functions by name (`setFunctionBreakpoints`),
//! the exception filters (`setExceptionBreakpoints`), and the breakpoint the adapter answers with.

use super::{List, Source};
use agent_rpc::Request;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// `setBreakpoints`: replace one file's breakpoints.
pub(crate) enum SetBreakpoints {}

impl Request for SetBreakpoints {
    const METHOD: &'static str = "setBreakpoints";
    type Params = SetBreakpointsArguments;
    type Result = Breakpoints;
}

/// A file and its breakpoints (`lines` repeats their lines, for adapters that still read it).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetBreakpointsArguments {
    pub source: Source,
    pub breakpoints: Vec<SourceBreakpoint>,
    pub lines: Vec<u32>,
    pub source_modified: bool,
}

/// One line breakpoint and its options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SourceBreakpoint {
    pub line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_message: Option<String>,
}

/// `setFunctionBreakpoints`: replace the function breakpoints.
pub(crate) enum SetFunctionBreakpoints {}

impl Request for SetFunctionBreakpoints {
    const METHOD: &'static str = "setFunctionBreakpoints";
    type Params = SetFunctionBreakpointsArguments;
    type Result = Breakpoints;
}

/// The function breakpoints, all of them.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetFunctionBreakpointsArguments {
    pub breakpoints: Vec<FunctionBreakpoint>,
}

/// One function breakpoint, by the function's name, and its options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FunctionBreakpoint {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
}

/// The breakpoints an adapter answers with, one per breakpoint sent, in order.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Breakpoints {
    pub breakpoints: List<Breakpoint>,
}

/// A breakpoint as the adapter set it: whether it is verified, and where it landed (an adapter
/// may move a line breakpoint to the next line with code).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct Breakpoint {
    pub verified: bool,
    pub message: Option<String>,
    pub source: Option<Source>,
    #[serde(default, deserialize_with = "super::line")]
    pub line: Option<u32>,
}

/// `setExceptionBreakpoints`: which of the advertised exception filters are on.
pub(crate) enum SetExceptionBreakpoints {}

impl Request for SetExceptionBreakpoints {
    const METHOD: &'static str = "setExceptionBreakpoints";
    type Params = SetExceptionBreakpointsArguments;
    type Result = IgnoredAny;
}

/// The filters turned on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SetExceptionBreakpointsArguments {
    pub filters: Vec<String>,
}
