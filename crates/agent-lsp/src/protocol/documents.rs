//! Document sync: what the server is told about the files it holds (full text every time).

use super::{Sent, TextDocumentIdentifier};
use serde::Serialize;

/// `textDocument/didOpen`.
pub enum DidOpen {}

impl Sent for DidOpen {
    const METHOD: &'static str = "textDocument/didOpen";
    type Params = DidOpenParams;
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DidOpenParams {
    pub text_document: TextDocumentItem,
}

/// A document and its whole text.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentItem {
    pub uri: String,
    pub language_id: String,
    pub version: i64,
    pub text: String,
}

/// `textDocument/didChange`, with the whole new text.
pub enum DidChange {}

impl Sent for DidChange {
    const METHOD: &'static str = "textDocument/didChange";
    type Params = DidChangeParams;
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeParams {
    pub text_document: VersionedTextDocumentIdentifier,
    pub content_changes: Vec<WholeText>,
}

/// A document at a version.
#[derive(Debug, Clone, Serialize)]
pub struct VersionedTextDocumentIdentifier {
    pub uri: String,
    pub version: i64,
}

/// A content change that replaces the whole text.
#[derive(Debug, Clone, Serialize)]
pub struct WholeText {
    pub text: String,
}

/// `textDocument/didSave`.
pub enum DidSave {}

impl Sent for DidSave {
    const METHOD: &'static str = "textDocument/didSave";
    type Params = DidSaveParams;
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DidSaveParams {
    pub text_document: TextDocumentIdentifier,
    /// When the server asked for it (`save.includeText`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `textDocument/didClose`.
pub enum DidClose {}

impl Sent for DidClose {
    const METHOD: &'static str = "textDocument/didClose";
    type Params = DidCloseParams;
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DidCloseParams {
    pub text_document: TextDocumentIdentifier,
}
