//! Problems in a document: the diagnostics a server publishes or is asked for (pull), the code
//! actions offered for them, and typescript-language-server's passthrough to tsserver, which
//! answers for the synced content at once.

use super::{DocumentParams, List, Offered, Range, ServerCapabilities, TextDocumentIdentifier};
use agent_rpc::{Notification, Request};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A diagnostic. The fields nobody here reads (`data`, `tags`, `relatedInformation`, …) are
/// kept as they came, so that a code action request gives the server back what it sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub range: Range,
    /// 1 error, 2 warning, 3 information, 4 hint; absent: the client decides (an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<DiagnosticCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub message: String,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A diagnostic's code: a number or a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DiagnosticCode {
    Number(serde_json::Number),
    Text(String),
}

impl std::fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiagnosticCode::Number(n) => write!(f, "{n}"),
            DiagnosticCode::Text(s) => f.write_str(s),
        }
    }
}

/// `textDocument/publishDiagnostics`.
pub enum PublishDiagnostics {}

impl Notification for PublishDiagnostics {
    const METHOD: &'static str = "textDocument/publishDiagnostics";
    type Params = PublishDiagnosticsParams;
}

#[derive(Debug, Clone, Deserialize)]
pub struct PublishDiagnosticsParams {
    pub uri: String,
    /// The document version they are for, when the server says.
    pub version: Option<i64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// `textDocument/diagnostic` (pull).
pub enum DocumentDiagnostic {}

impl Request for DocumentDiagnostic {
    const METHOD: &'static str = "textDocument/diagnostic";
    type Params = DocumentParams;
    type Result = DocumentDiagnosticReport;
}

impl Offered for DocumentDiagnostic {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.diagnostic_provider.as_ref().map(|c| c.on())
    }
}

/// A pulled report: every diagnostic of the document, or "unchanged since `resultId`" (which
/// this client never asks for, so it is no answer).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DocumentDiagnosticReport {
    Full { items: Vec<Diagnostic> },
    Unchanged {},
}

/// `textDocument/codeAction`.
pub enum CodeActionRequest {}

impl Request for CodeActionRequest {
    const METHOD: &'static str = "textDocument/codeAction";
    type Params = CodeActionParams;
    type Result = List<CodeActionItem>;
}

impl Offered for CodeActionRequest {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.code_action_provider.as_ref().map(|c| c.on())
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionParams {
    pub text_document: TextDocumentIdentifier,
    pub range: Range,
    pub context: CodeActionContext,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionContext {
    /// The diagnostics on the range, as the server sent them.
    pub diagnostics: Vec<Diagnostic>,
    /// 1: asked for explicitly.
    pub trigger_kind: u32,
}

/// A code action or a bare command (which has no kind and is never preferred).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionItem {
    pub title: String,
    pub kind: Option<String>,
    pub is_preferred: Option<bool>,
}

/// typescript-language-server's command that passes a request through to tsserver.
pub const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

/// `workspace/executeCommand` with [`TSSERVER_REQUEST`] (typescript-language-server 5.3:
/// arguments `[command, args]`; a `file` given as the document's URI is mapped to the open
/// document's path); the result is tsserver's raw response. Used for
/// `syntacticDiagnosticsSync` and `semanticDiagnosticsSync`.
pub enum TsserverRequest {}

impl Request for TsserverRequest {
    const METHOD: &'static str = "workspace/executeCommand";
    type Params = ExecuteCommandParams<(&'static str, TsserverFile)>;
    type Result = Option<TsserverResponse>;
}

/// `workspace/executeCommand`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct ExecuteCommandParams<A> {
    pub command: &'static str,
    pub arguments: A,
}

/// The file a tsserver request is about.
#[derive(Debug, Clone, Serialize)]
pub struct TsserverFile {
    pub file: String,
}

/// tsserver's response to a diagnostics request.
#[derive(Debug, Clone, Deserialize)]
pub struct TsserverResponse {
    pub success: bool,
    pub body: Option<List<TsserverDiagnostic>>,
}

/// A tsserver diagnostic: 1-based `line` and `offset`.
#[derive(Debug, Clone, Deserialize)]
pub struct TsserverDiagnostic {
    pub start: TsserverPosition,
    pub end: TsserverPosition,
    pub text: String,
    pub code: Option<DiagnosticCode>,
    /// `error`, `warning`, `suggestion` or `message`.
    pub category: Option<String>,
    pub source: Option<String>,
}

/// A tsserver position, 1-based.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct TsserverPosition {
    pub line: u32,
    pub offset: u32,
}
