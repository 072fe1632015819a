//! Looking at a stopped debuggee: its `threads`, a thread's `stackTrace`, a frame's `scopes`, a
//! reference's `variables`, `evaluate` in a frame, and `exceptionInfo` for the exception it
//! stopped on.

use super::{List, NoArguments, Source, ThreadArguments};
use agent_rpc::Request;
use serde::{Deserialize, Serialize};

/// `threads`.
pub(crate) enum Threads {}

impl Request for Threads {
    const METHOD: &'static str = "threads";
    type Params = NoArguments;
    type Result = ThreadsBody;
}

/// The debuggee's threads.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ThreadsBody {
    pub threads: List<Thread>,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Thread {
    pub id: i64,
    pub name: String,
}

/// `stackTrace`: the top frames of a thread.
pub(crate) enum StackTrace {}

impl Request for StackTrace {
    const METHOD: &'static str = "stackTrace";
    type Params = StackTraceArguments;
    type Result = StackTraceBody;
}

/// Which thread, and how many frames from the top.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StackTraceArguments {
    pub thread_id: i64,
    pub start_frame: usize,
    pub levels: usize,
}

/// The frames, and how many the thread has in all when the adapter says.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StackTraceBody {
    pub stack_frames: List<StackFrame>,
    pub total_frames: Option<u64>,
}

/// One frame: its id (valid until the debuggee moves), its function's name, and where it is —
/// a source and a line, either of which it may lack (a library without debug information).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct StackFrame {
    pub id: i64,
    pub name: String,
    pub source: Option<Source>,
    #[serde(default, deserialize_with = "super::line")]
    pub line: Option<u32>,
}

impl StackFrame {
    /// The path of its source, when it has one on disk.
    pub fn path(&self) -> Option<&str> {
        self.source.as_ref().and_then(Source::path)
    }
}

/// `scopes`: a frame's scopes (locals, globals, registers…).
pub(crate) enum Scopes {}

impl Request for Scopes {
    const METHOD: &'static str = "scopes";
    type Params = ScopesArguments;
    type Result = ScopesBody;
}

/// Which frame.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScopesArguments {
    pub frame_id: i64,
}

/// A frame's scopes.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ScopesBody {
    pub scopes: List<Scope>,
}

/// One scope: its name, the reference of its variables, and whether fetching them is expensive
/// (left out: it is not).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Scope {
    pub name: String,
    pub variables_reference: i64,
    pub named_variables: Option<u64>,
    #[serde(default)]
    pub expensive: bool,
}

/// `variables`: the children of a reference.
pub(crate) enum Variables {}

impl Request for Variables {
    const METHOD: &'static str = "variables";
    type Params = VariablesArguments;
    type Result = VariablesBody;
}

/// Which reference.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VariablesArguments {
    pub variables_reference: i64,
}

/// A reference's children.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct VariablesBody {
    pub variables: List<Variable>,
}

/// One variable: its value as the adapter renders it, its type when it says, and the reference
/// of its children (0: none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Variable {
    pub name: String,
    pub value: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub variables_reference: i64,
}

/// `evaluate`: an expression in a frame.
pub(crate) enum Evaluate {}

impl Request for Evaluate {
    const METHOD: &'static str = "evaluate";
    type Params = EvaluateArguments;
    type Result = EvaluateBody;
}

/// The expression, the frame, and the context (`watch`, `repl`: where the adapter runs a
/// statement as well as an expression).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EvaluateArguments {
    pub expression: String,
    pub frame_id: i64,
    pub context: &'static str,
}

/// The result as the adapter renders it, its type, and the reference of its children.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EvaluateBody {
    pub result: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub variables_reference: i64,
}

/// `exceptionInfo`: the exception a thread stopped on.
pub(crate) enum ExceptionInfo {}

impl Request for ExceptionInfo {
    const METHOD: &'static str = "exceptionInfo";
    type Params = ThreadArguments;
    type Result = ExceptionInfoBody;
}

/// The exception's id (its type) and message: `description`, else the details' message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExceptionInfoBody {
    pub exception_id: String,
    pub description: Option<String>,
    pub details: Option<ExceptionDetails>,
}

/// What an adapter says of an exception beyond its id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ExceptionDetails {
    pub message: Option<String>,
}

impl ExceptionInfoBody {
    /// The message: the description, else the details' message; empty when neither says.
    pub fn message(&self) -> &str {
        self.description
            .as_deref()
            .or_else(|| self.details.as_ref().and_then(|d| d.message.as_deref()))
            .unwrap_or("")
    }
}
