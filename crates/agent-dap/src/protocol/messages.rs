//! The parts of an adapter's messages around a body: an event's name, the command of a request
//! the adapter sends us (a reverse request), and the error a refusal carries. The transport reads
//! them through these types before it routes or answers.

use agent_rpc::Malformed;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// An event message: its name and its body (`null` when it has none).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct EventMessage {
    pub event: String,
    #[serde(default)]
    pub body: Value,
}

/// A request the adapter sends us (`runInTerminal`, `startDebugging`…), by its command.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ReverseRequest {
    pub command: String,
}

impl EventMessage {
    /// Read an event message; one without a name is [`Malformed`].
    pub fn read(msg: Value) -> Result<EventMessage, Malformed> {
        serde_json::from_value(msg).map_err(|e| Malformed {
            method: "event",
            what: "message",
            detail: e.to_string(),
        })
    }
}

/// The error of a refusal (`body.error`): a message with `{name}` placeholders and their values.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ErrorMessage {
    pub format: String,
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
}

impl ErrorMessage {
    /// The message with its placeholders filled in.
    pub fn text(&self) -> String {
        let mut text = self.format.clone();
        for (k, v) in &self.variables {
            text = text.replace(&format!("{{{k}}}"), v);
        }
        text
    }
}
