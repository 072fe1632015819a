//! The one error type of this crate.

/// Why an `ask_user` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The arguments cannot make an answerable card.
    #[error("invalid arguments for `ask_user`: {0}")]
    InvalidArguments(String),
}
