//! The parts of an adapter's messages around a body: an event's name and the command of a
//! request the adapter sends us (a reverse request). The transport reads them through these types
//! before it routes or answers; a refusal's error is read by agent-rpc's `Dap` outcome.

use agent_rpc::Malformed;
use serde::Deserialize;
use serde_json::Value;

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
