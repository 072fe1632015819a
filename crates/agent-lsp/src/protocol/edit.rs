//! Renaming: `prepareRename`, `rename` and the `WorkspaceEdit` it answers with.

use super::{
    Position, Range, TextDocumentIdentifier, TextDocumentPositionParams, from_value, has_key,
    ordered_map,
};
use agent_rpc::Request;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// `textDocument/prepareRename`.
pub enum PrepareRename {}

impl Request for PrepareRename {
    const METHOD: &'static str = "textDocument/prepareRename";
    type Params = TextDocumentPositionParams;
    type Result = Option<PrepareRenameResult>;
}

/// What can be renamed at the position: a range, a range with a placeholder, or "the default
/// behaviour"; `null` (nothing) is the answer that matters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PrepareRenameResult {
    #[serde(rename_all = "camelCase")]
    Placeholder { range: Range, placeholder: String },
    Range(Range),
    #[serde(rename_all = "camelCase")]
    Default { default_behavior: bool },
}

/// `textDocument/rename`.
pub enum Rename {}

impl Request for Rename {
    const METHOD: &'static str = "textDocument/rename";
    type Params = RenameParams;
    type Result = Option<WorkspaceEdit>;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
    pub new_name: String,
}

/// The edit a rename answers with: `changes` (text edits per URI, in the order the server
/// sent them) or `documentChanges` (text edits and file operations, in order).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceEdit {
    #[serde(default, deserialize_with = "ordered_map")]
    pub changes: Option<Vec<(String, Vec<TextEdit>)>>,
    pub document_changes: Option<Vec<DocumentChange>>,
}

impl WorkspaceEdit {
    /// Neither `changes` nor `documentChanges`.
    pub fn is_empty(&self) -> bool {
        self.changes.is_none() && self.document_changes.is_none()
    }
}

/// A text edit (an `AnnotatedTextEdit`'s annotation is not read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    pub range: Range,
    pub new_text: String,
}

/// One step of `documentChanges`: a document's text edits (no `kind`), or a file created,
/// renamed or deleted.
#[derive(Debug, Clone, PartialEq)]
pub enum DocumentChange {
    Edit(TextDocumentEdit),
    File(FileOperation),
}

impl<'de> Deserialize<'de> for DocumentChange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if has_key(&v, "kind") {
            from_value::<_, D>(v).map(DocumentChange::File)
        } else if has_key(&v, "textDocument") {
            from_value::<_, D>(v).map(DocumentChange::Edit)
        } else {
            Err(D::Error::custom(
                "a document change with neither `kind` (a file operation) nor `textDocument` (text edits)",
            ))
        }
    }
}

/// A document's text edits.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentEdit {
    pub text_document: TextDocumentIdentifier,
    pub edits: Vec<TextEdit>,
}

/// A file operation of a workspace edit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FileOperation {
    Create {
        uri: String,
        options: Option<FileOptions>,
    },
    #[serde(rename_all = "camelCase")]
    Rename {
        old_uri: String,
        new_uri: String,
        options: Option<FileOptions>,
    },
    Delete {
        uri: String,
        options: Option<FileOptions>,
    },
}

/// Whether a create or rename may replace an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct FileOptions {
    pub overwrite: Option<bool>,
}

impl FileOperation {
    /// Whether it may replace an existing file.
    pub fn overwrites(&self) -> bool {
        let options = match self {
            FileOperation::Create { options, .. }
            | FileOperation::Rename { options, .. }
            | FileOperation::Delete { options, .. } => options,
        };
        options.is_some_and(|o| o.overwrite == Some(true))
    }
}
