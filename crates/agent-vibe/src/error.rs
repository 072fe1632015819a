//! The one error type of this crate.

/// Why a `vibe_*` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VibeError {
    /// No worker of that id in this conversation.
    #[error(
        "unknown worker id `{id}`; workers in this conversation: {known} (vibe_list shows them all)"
    )]
    UnknownWorker {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// The backend cannot start a worker of that tier.
    #[error("cannot spawn the worker: {reason}")]
    Backend {
        /// Why.
        reason: String,
    },
    /// An argument is unusable.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
}
