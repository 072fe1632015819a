//! The host library's errors: one type per job that can fail, each message saying what to do.

use std::path::PathBuf;

/// `--listen` was given something that is no address ([`crate::http::parse_listen`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--listen` = `{0}` is not an address; give 127.0.0.1:PORT (or a port, which binds loopback)"
)]
pub struct NotAnAddress(pub String);

/// Why the log could not be set up ([`crate::logging::init`]); the host refuses to start rather
/// than log nowhere.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The `--log-file` cannot be opened for appending.
    #[error("`--log-file` = `{}`: {source}", path.display())]
    File {
        /// The file asked for.
        path: PathBuf,
        /// Why it cannot be opened.
        source: std::io::Error,
    },
    /// A subscriber is installed already (the host was set up twice in one process).
    #[error("cannot install the log subscriber: {0}")]
    Subscriber(#[from] tracing_subscriber::util::TryInitError),
}

/// Why a question (`ask_user`, an approval) could not be put to the client of the session whose
/// call caused it. The card then fails closed, saying this.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElicitError {
    /// The call named no requester (it did not come through an MCP session).
    #[error("the call that asks came from no MCP session, so no client can answer")]
    NoRequester,
    /// The call's requester is not one of this host's MCP sessions.
    #[error("the call that asks came from `{0}`, which is not an MCP session of this host")]
    NotASession(String),
    /// The session's client did not declare the `elicitation` capability in `initialize`.
    #[error("the MCP client did not declare the `elicitation` capability, so nobody can answer")]
    NotDeclared,
    /// The session's connection is gone.
    #[error("the MCP session `{0}` that made the call has gone, so nobody can answer")]
    Gone(String),
    /// The card's schema is not one MCP's `elicitation/create` accepts.
    #[error("the elicitation request is not one MCP accepts: {0}")]
    Schema(serde_json::Error),
    /// The client answered with a JSON-RPC error (or the request could not be sent).
    #[error("the client answered `elicitation/create` with an error: {0}")]
    Client(#[from] rmcp::ServiceError),
    /// The client answered with an action this host does not know.
    #[error(
        "the client answered elicitation/create with action {0}; expected accept, decline or cancel"
    )]
    Action(String),
}
