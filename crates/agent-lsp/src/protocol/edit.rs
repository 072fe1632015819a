//! Renaming: `prepareRename`, `rename` and the `WorkspaceEdit` it answers with.

use super::{
    Offered, Position, Range, ServerCapabilities, TextDocumentIdentifier,
    TextDocumentPositionParams, ordered_map,
};
use agent_rpc::Request;
use serde::{Deserialize, Serialize};

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
    Placeholder {
        range: Range,
        placeholder: String,
    },
    Range(Range),
    #[serde(rename_all = "camelCase")]
    Default {
        default_behavior: bool,
    },
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
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "WireChange")]
pub enum DocumentChange {
    Edit(TextDocumentEdit),
    File(FileOperation),
}

/// A step of `documentChanges` as it comes: a `TextDocumentEdit`'s fields, or a file
/// operation's (with its `kind`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireChange {
    kind: Option<String>,
    text_document: Option<TextDocumentIdentifier>,
    edits: Option<Vec<TextEdit>>,
    uri: Option<String>,
    old_uri: Option<String>,
    new_uri: Option<String>,
    options: Option<FileOptions>,
}

/// Why a step of `documentChanges` is neither text edits nor a file operation.
#[derive(Debug, thiserror::Error)]
pub enum BadChange {
    #[error(
        "a document change with neither `kind` (a file operation) nor `textDocument` (text edits)"
    )]
    Neither,
    #[error("missing field `{0}`")]
    Missing(&'static str),
    #[error("unknown file operation `{0}` (expected create, rename or delete)")]
    UnknownKind(String),
}

impl TryFrom<WireChange> for DocumentChange {
    type Error = BadChange;

    fn try_from(w: WireChange) -> Result<Self, BadChange> {
        let options = w.options;
        Ok(match w.kind {
            None => DocumentChange::Edit(TextDocumentEdit {
                text_document: w.text_document.ok_or(BadChange::Neither)?,
                edits: w.edits.ok_or(BadChange::Missing("edits"))?,
            }),
            Some(kind) => DocumentChange::File(match kind.as_str() {
                "create" => FileOperation::Create {
                    uri: w.uri.ok_or(BadChange::Missing("uri"))?,
                    options,
                },
                "rename" => FileOperation::Rename {
                    old_uri: w.old_uri.ok_or(BadChange::Missing("oldUri"))?,
                    new_uri: w.new_uri.ok_or(BadChange::Missing("newUri"))?,
                    options,
                },
                "delete" => FileOperation::Delete {
                    uri: w.uri.ok_or(BadChange::Missing("uri"))?,
                    options,
                },
                _ => return Err(BadChange::UnknownKind(kind)),
            }),
        })
    }
}

/// A document's text edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDocumentEdit {
    pub text_document: TextDocumentIdentifier,
    pub edits: Vec<TextEdit>,
}

/// A file operation of a workspace edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOperation {
    Create {
        uri: String,
        options: Option<FileOptions>,
    },
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

/// `workspace/willRenameFiles`: the edits a move of files needs (imports of the moved file),
/// asked before the move is made.
pub enum WillRenameFiles {}

impl Request for WillRenameFiles {
    const METHOD: &'static str = "workspace/willRenameFiles";
    type Params = RenameFilesParams;
    type Result = Option<WorkspaceEdit>;
}

impl Offered for WillRenameFiles {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        let ops = caps.workspace.as_ref()?.file_operations.as_ref()?;
        ops.will_rename.as_ref().map(|_| true)
    }
}

/// The files moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RenameFilesParams {
    pub files: Vec<FileRename>,
}

/// One file moved, by URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRename {
    pub old_uri: String,
    pub new_uri: String,
}
