//! What a server sends the client besides answers: work-done progress, rust-analyzer's status,
//! and its own requests (configuration, registrations, workspace folders, edits to apply).

use super::{List, WorkspaceFolder};
use agent_rpc::{Notification, Request};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `$/progress`.
pub enum Progress {}

impl Notification for Progress {
    const METHOD: &'static str = "$/progress";
    type Params = ProgressParams;
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProgressParams {
    pub token: ProgressToken,
    pub value: WorkDoneProgress,
}

/// A progress token: a number or a string.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    Number(serde_json::Number),
    Text(String),
}

impl ProgressToken {
    /// The token as a key: a string as it is, a number as its digits.
    pub fn key(&self) -> String {
        match self {
            ProgressToken::Number(n) => n.to_string(),
            ProgressToken::Text(s) => s.clone(),
        }
    }
}

/// Where a work-done task is.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkDoneProgress {
    Begin {},
    Report {},
    End {},
}

/// rust-analyzer's `experimental/serverStatus`.
pub enum ServerStatus {}

impl Notification for ServerStatus {
    const METHOD: &'static str = "experimental/serverStatus";
    type Params = ServerStatusParams;
}

#[derive(Debug, Clone, Deserialize)]
pub struct ServerStatusParams {
    /// Whether it has finished its work (indexing, a check).
    pub quiescent: Option<bool>,
}

/// `workspace/configuration`: the server asks for settings by section.
pub enum Configuration {}

impl Request for Configuration {
    const METHOD: &'static str = "workspace/configuration";
    type Params = ConfigurationParams;
    /// One value per item: the server table's settings at that section (opaque).
    type Result = Vec<Value>;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigurationParams {
    pub items: List<ConfigurationItem>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigurationItem {
    /// A dotted section (`python.analysis`); none: all the settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// `client/registerCapability`: a method the server now offers (pull diagnostics, say).
pub enum RegisterCapability {}

impl Request for RegisterCapability {
    const METHOD: &'static str = "client/registerCapability";
    type Params = RegistrationParams;
    type Result = ();
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegistrationParams {
    pub registrations: List<Registration>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Registration {
    pub method: String,
}

/// `workspace/workspaceFolders`.
pub enum WorkspaceFolders {}

impl Request for WorkspaceFolders {
    const METHOD: &'static str = "workspace/workspaceFolders";
    type Params = Unread;
    type Result = Vec<WorkspaceFolder>;
}

/// `workspace/applyEdit`: refused, edits are applied only through `lsp_rename`.
pub enum ApplyEdit {}

impl Request for ApplyEdit {
    const METHOD: &'static str = "workspace/applyEdit";
    type Params = Unread;
    type Result = ApplyEditResult;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyEditResult {
    pub applied: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

/// Params this client does not read, whatever they are (sent as `null`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Unread;

impl<'de> Deserialize<'de> for Unread {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Unread)
    }
}
