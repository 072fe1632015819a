//! Asking the person on a family's own behalf (the language servers asking whether to trust a
//! folder): a question with fixed choices, put to the caller's own operator — the terminal card
//! or MCP elicitation to the requester's client — by whichever family reaches people (the `ask`
//! family provides a [`PersonAsker`] while the run is composed). A run without one has nobody
//! to ask, and the asking family says so. The asker is found by type, never by a tool's name.

use crate::{BoxFuture, CallContext};

/// A question with fixed choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Why it is asked; what the answer decides.
    pub context: Option<String>,
    /// The choices: a short label and what choosing it means.
    pub options: Vec<(String, String)>,
}

/// What the person did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Chose the option with this label.
    Chose(String),
    /// Refused to answer.
    Declined,
    /// No answer: skipped, timed out, or nobody can answer through the port (why).
    Unanswered(String),
}

/// Puts a question to the caller's operator.
pub trait PersonAsker: Send + Sync + 'static {
    /// Ask for the call `cx` (its requester is the one asked); resolve once answered.
    fn ask<'a>(&'a self, cx: &'a CallContext, question: Question) -> BoxFuture<'a, Reply>;
}
