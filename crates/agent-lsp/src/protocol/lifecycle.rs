//! A server's life: `initialize` (what we can do, what it offers), `initialized`, the settings
//! we push, `shutdown` and `exit`.

use super::{List, Sent};
use agent_rpc::Request;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `initialize`.
pub enum Initialize {}

impl Request for Initialize {
    const METHOD: &'static str = "initialize";
    type Params = InitializeParams;
    type Result = InitializeResult;
}

/// What we tell a server about ourselves and the root it serves.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The host's pid, or null where the server cannot see it (contained in its own pid
    /// namespace, or behind the run's sandbox prefix): a server that watches a pid it cannot
    /// see exits.
    pub process_id: Option<u32>,
    pub client_info: ClientInfo,
    pub root_uri: String,
    pub root_path: String,
    pub workspace_folders: Vec<WorkspaceFolder>,
    /// [`client_capabilities`].
    pub capabilities: Value,
    /// The server table's `init_options`, passed through as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization_options: Option<Value>,
}

/// Who we are.
#[derive(Debug, Clone, Serialize)]
pub struct ClientInfo {
    pub name: &'static str,
    pub version: &'static str,
}

/// A workspace folder (in `initialize`, and our answer to `workspace/workspaceFolders`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceFolder {
    pub uri: String,
    pub name: String,
}

/// What this client can do, as `initialize` says it: position encodings, work-done progress,
/// configuration, file operations in a workspace edit, links for the navigation requests,
/// hierarchical document symbols, code action literals, prepareRename, versioned publishes and
/// pull diagnostics (registered dynamically), and rust-analyzer's server status.
pub fn client_capabilities() -> Value {
    let kinds: Vec<u32> = (1..=26).collect();
    json!({
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "window": {"workDoneProgress": true, "showMessage": {}},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "didChangeConfiguration": {"dynamicRegistration": true},
            "workspaceEdit": {
                "documentChanges": true,
                "resourceOperations": ["create", "rename", "delete"],
                "failureHandling": "abort"
            },
            "symbol": {"symbolKind": {"valueSet": kinds}},
            "fileOperations": {"willRename": true},
        },
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "typeDefinition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "declaration": {"linkSupport": true},
            "references": {},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": {"valueSet": kinds}
            },
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                    "refactor.rewrite", "source", "source.organizeImports", "source.fixAll"
                ]}},
                "isPreferredSupport": true
            },
            "rename": {"prepareSupport": true},
            "callHierarchy": {},
            "typeHierarchy": {},
            "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
            "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false}
        },
        "experimental": {"serverStatusNotification": true}
    })
}

/// The server's answer to `initialize`.
#[derive(Debug, Clone, Deserialize)]
pub struct InitializeResult {
    pub capabilities: ServerCapabilities,
}

/// What a server offers, as far as this family asks. Every field may be left out; a value of
/// an unexpected shape where only "offered or not" matters counts as offered.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// `utf-8`, `utf-16` (the default) or `utf-32`.
    pub position_encoding: Option<String>,
    pub text_document_sync: Option<TextDocumentSync>,
    pub hover_provider: Option<Capability>,
    pub definition_provider: Option<Capability>,
    pub declaration_provider: Option<Capability>,
    pub type_definition_provider: Option<Capability>,
    pub implementation_provider: Option<Capability>,
    pub references_provider: Option<Capability>,
    pub document_symbol_provider: Option<Capability>,
    pub workspace_symbol_provider: Option<Capability>,
    pub code_action_provider: Option<Capability>,
    pub rename_provider: Option<Capability<RenameOptions>>,
    pub diagnostic_provider: Option<Capability>,
    pub execute_command_provider: Option<ExecuteCommandOptions>,
    pub call_hierarchy_provider: Option<Capability>,
    pub workspace: Option<WorkspaceCapabilities>,
    pub type_hierarchy_provider: Option<Capability>,
}

impl ServerCapabilities {
    /// Whether didSave should carry the document's text.
    pub fn save_includes_text(&self) -> bool {
        matches!(
            &self.text_document_sync,
            Some(TextDocumentSync::Options(TextDocumentSyncOptions {
                save: Some(Capability::Options(SaveOptions {
                    include_text: Some(true)
                })),
            }))
        )
    }

    /// Whether the server answers `prepareRename`.
    pub fn prepares_rename(&self) -> bool {
        matches!(
            &self.rename_provider,
            Some(Capability::Options(RenameOptions {
                prepare_provider: Some(true)
            }))
        )
    }

    /// Whether `workspace/executeCommand` runs `command`.
    pub fn runs_command(&self, command: &str) -> bool {
        self.execute_command_provider
            .as_ref()
            .is_some_and(|e| e.commands.iter().any(|c| c == command))
    }
}

/// A capability: a flag, or options (which mean it is offered). Anything else is taken as
/// offered too.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Capability<O = IgnoredAny> {
    Flag(bool),
    Options(O),
    Other(IgnoredAny),
}

impl<O> Capability<O> {
    /// Whether it is offered.
    pub fn on(&self) -> bool {
        !matches!(self, Capability::Flag(false))
    }
}

/// `textDocumentSync`: options, or a sync kind (a number, which says nothing of saves).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TextDocumentSync {
    Options(TextDocumentSyncOptions),
    Other(IgnoredAny),
}

/// The part of the sync options this family reads.
#[derive(Debug, Clone, Deserialize)]
pub struct TextDocumentSyncOptions {
    pub save: Option<Capability<SaveOptions>>,
}

/// Whether didSave carries the text.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveOptions {
    pub include_text: Option<bool>,
}

/// The workspace part of the server's capabilities, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceCapabilities {
    pub file_operations: Option<FileOperationsCapabilities>,
}

/// Which file operations the server wants to hear of (their filters are not read).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOperationsCapabilities {
    pub will_rename: Option<IgnoredAny>,
}

/// `renameProvider`'s options.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameOptions {
    pub prepare_provider: Option<bool>,
}

/// The commands `workspace/executeCommand` runs.
#[derive(Debug, Clone, Deserialize)]
pub struct ExecuteCommandOptions {
    #[serde(default)]
    pub commands: List<String>,
}

/// `initialized`.
pub enum Initialized {}

impl Sent for Initialized {
    const METHOD: &'static str = "initialized";
    type Params = Empty;
}

/// `{}`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Empty {}

/// `workspace/didChangeConfiguration`: the server table's settings, pushed after `initialized`.
pub enum DidChangeConfiguration {}

impl Sent for DidChangeConfiguration {
    const METHOD: &'static str = "workspace/didChangeConfiguration";
    type Params = ConfigurationChange;
}

/// The settings, as they are.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationChange {
    pub settings: Value,
}

/// `shutdown`: its result (`null`) is not read.
pub enum Shutdown {}

impl Request for Shutdown {
    const METHOD: &'static str = "shutdown";
    type Params = ();
    type Result = IgnoredAny;
}

/// `exit`.
pub enum Exit {}

impl Sent for Exit {
    const METHOD: &'static str = "exit";
    type Params = ();
}
