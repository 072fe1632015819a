//! # agent-ask — `ask_user`, and the card that approvals render through
//!
//! Owns the run's ask port and the card it renders. A card is a question (or a permission
//! prompt) with numbered options, optional free text and optional multi-select; a port shows it
//! and resolves to an answer, a skip, a decline, a timeout, or "nobody is attached"; `ask_user`
//! reports which as the `outcome` of its structured result ([`Outcome`]), never an empty answer:
//!
//! - [`TerminalPort`]: the card on a real TTY (stderr), answered on stdin; fails at once when
//!   stdin or stderr is not a terminal;
//! - [`ElicitationPort`]: the card as an MCP `elicitation/create` request, sent by the host
//!   through an [`Elicitor`] (accept → answer, decline → declined, cancel → skip);
//! - [`ScriptedPort`]: queued outcomes, for tests and embedding.
//!
//! [`attach`] registers `ask_user` when a port and a target space both exist, and provides the
//! run's [`PersonAsker`](agent_tier::person::PersonAsker) (a family's own question, such as the
//! language servers' trust question) through the same port; [`AskApprover`] renders the
//! registry's permission prompts as the same card through the same port.
//!
//! Never: invents an answer, blocks when nobody is attached, or speaks the MCP transport (the
//! host's [`Elicitor`] does).

mod approver;
mod card;
mod elicit;
mod error;
mod person;
mod port;
mod report;
mod terminal;
mod tool;

pub use approver::{APPROVE, AskApprover, DECLINE, MAX_SHOWN, render_arguments};
pub use card::{Answer, AskOutcome, Card, CardKind, CardOption, SKIP_KEY};
pub use elicit::{
    CHOICE, ElicitOutcome, ElicitationPort, Elicitor, JsonType, Property, RequestedSchema, TEXT,
    elicitation_request, option_property, read_accepted,
};
pub use error::{AnswerError, AskError, CardError, ContentError, NotAttached, ReplyError};
pub use port::{AskPort, BoxFuture, ScriptedPort};
pub use report::{Outcome, SKIP_INSTRUCTION};
pub use terminal::{TerminalOptions, TerminalPort};
pub use tool::{AskOption, AskUserArgs};

use agent_tier::Registry;
use std::sync::Arc;
use std::time::Duration;

/// How long a person has to answer by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// What `ask_user` needs: a port, a target space, and a timeout.
#[derive(Clone)]
pub struct AskConfig {
    /// Where cards are shown. `None`: `ask_user` is not registered.
    pub port: Option<Arc<dyn AskPort>>,
    /// The space cards belong to (a conversation id, `terminal`). `None`: the run's
    /// conversation id is used; with neither, `ask_user` is not registered.
    pub target_space: Option<String>,
    /// How long a person has to answer (default [`DEFAULT_TIMEOUT`]); `None`: no limit.
    pub timeout: Option<Duration>,
}

impl Default for AskConfig {
    fn default() -> Self {
        AskConfig {
            port: None,
            target_space: None,
            timeout: Some(DEFAULT_TIMEOUT),
        }
    }
}

impl std::fmt::Debug for AskConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskConfig")
            .field("port", &self.port.as_ref().map(|p| p.name().to_string()))
            .field("target_space", &self.target_space)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Attach the ask port to this run and register `ask_user` — only when the config has a port
/// and a target space. Check `registry.contains("ask_user")` to see whether it was.
pub fn attach(registry: &Registry, config: AskConfig) {
    let Some(port) = config.port else {
        return;
    };
    let Some(space) = config.target_space else {
        return;
    };
    registry.provide_person_asker(Arc::new(person::PortAsker {
        port: port.clone(),
        space: space.clone(),
        timeout: config.timeout,
    }));
    registry.register(tool::AskUser {
        port,
        space,
        timeout: config.timeout,
        refused: agent_tier::Rooms::attach(registry),
    });
}
