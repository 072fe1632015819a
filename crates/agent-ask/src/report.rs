//! The result of `ask_user`: how the call ended, as a value, and the text a model reads of it.

use agent_tier::Report;
use agent_tier::display::duration;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::time::Duration;

/// The instruction that goes with a skip.
pub const SKIP_INSTRUCTION: &str = "Proceed under an explicitly stated assumption (say what you assumed and why), and do not ask this question again.";

/// How an `ask_user` call ended: the `outcome` of its structured result. There is always one;
/// an answer is never empty and never picked for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The operator chose options and/or typed text (`selected`, `text`).
    Answered,
    /// The operator skipped the question.
    Skipped,
    /// Nobody answered within the host's timeout (an error result).
    TimedOut,
    /// The operator's client refused the elicitation.
    Declined,
    /// Nobody can answer through the port (no terminal, a client without elicitation, a reply
    /// that does not fit the card): an error result, with `reason`.
    NoOperator,
}

/// The result of `ask_user`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AskReport {
    /// How the call ended.
    outcome: Outcome,
    /// The labels of the options chosen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    selected: Vec<String>,
    /// The typed answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// Skipped or declined earlier in this run, so not shown again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    repeated: bool,
    /// Why nobody can answer (`no_operator`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// How long the person had (`timed_out`; `None`: no limit).
    #[serde(skip)]
    limit: Option<Duration>,
    /// The port's name (`no_operator`).
    #[serde(skip)]
    port: String,
}

impl AskReport {
    fn of(outcome: Outcome) -> Self {
        AskReport {
            outcome,
            selected: Vec::new(),
            text: None,
            repeated: false,
            reason: None,
            limit: None,
            port: String::new(),
        }
    }

    /// The operator answered.
    pub(crate) fn answered(selected: Vec<String>, text: Option<String>) -> Self {
        AskReport {
            selected,
            text,
            ..AskReport::of(Outcome::Answered)
        }
    }

    /// The operator skipped or declined (`outcome`), now or earlier in this conversation
    /// (`repeated`).
    pub(crate) fn refused(outcome: Outcome, repeated: bool) -> Self {
        AskReport {
            repeated,
            ..AskReport::of(outcome)
        }
    }

    /// Nobody answered within `limit`.
    pub(crate) fn timed_out(limit: Option<Duration>) -> Self {
        AskReport {
            limit,
            ..AskReport::of(Outcome::TimedOut)
        }
    }

    /// Nobody can answer through `port`, for `reason`.
    pub(crate) fn no_operator(port: &str, reason: String) -> Self {
        AskReport {
            reason: Some(reason),
            port: port.to_string(),
            ..AskReport::of(Outcome::NoOperator)
        }
    }
}

impl Report for AskReport {
    fn text(&self) -> String {
        match self.outcome {
            Outcome::Answered => {
                let mut text = String::from("The operator answered.");
                if !self.selected.is_empty() {
                    text.push_str(&format!("\nchosen: {}", self.selected.join(", ")));
                }
                if let Some(t) = &self.text {
                    text.push_str(&format!("\ntyped: {t}"));
                }
                text
            }
            Outcome::Skipped | Outcome::Declined => {
                let what = match self.outcome {
                    Outcome::Declined => "declined to answer",
                    _ => "skipped",
                };
                if self.repeated {
                    format!(
                        "The operator already {what} this question in this conversation, so it was not shown again. {SKIP_INSTRUCTION}"
                    )
                } else {
                    format!("The operator {what} this question. {SKIP_INSTRUCTION}")
                }
            }
            Outcome::TimedOut => {
                let after = self
                    .limit
                    .map_or_else(String::new, |t| format!(" within {}", duration(t)));
                format!("Nobody answered{after}. {SKIP_INSTRUCTION}")
            }
            Outcome::NoOperator => format!(
                "Nobody can answer through the {} port: {}. The question was not answered. {SKIP_INSTRUCTION}",
                self.port,
                self.reason.as_deref().unwrap_or_default()
            ),
        }
    }

    fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::TimedOut | Outcome::NoOperator)
    }
}
