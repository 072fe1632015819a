//! The one error type of this crate.

/// Why an `ask_user` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The arguments cannot make an answerable card.
    #[error("invalid arguments for `ask_user`: {0}")]
    InvalidArguments(String),
    /// Nobody answered in time.
    #[error(
        "nobody answered within {after}; proceed under an explicitly stated assumption (say what you assumed and why), and do not ask this question again"
    )]
    Timeout {
        /// The timeout, in human form.
        after: String,
    },
    /// Nobody can be reached through the port.
    #[error(
        "no answer could be had through the {port} port: {reason}; the question was not answered, so proceed under an explicitly stated assumption (say what you assumed and why), and do not ask this question again"
    )]
    Unavailable {
        /// The port's name.
        port: String,
        /// Why nobody can be reached.
        reason: String,
    },
}
