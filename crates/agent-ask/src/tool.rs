//! The `ask_user` tool.

use crate::card::{AskOutcome, Card, CardKind, CardOption, human_duration};
use crate::error::AskError;
use crate::port::{AskPort, GRACE, within};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Rooms, Tier, Tool, ToolOutput};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    /// The question.
    pub question: String,
    /// Why you ask; what the answer decides.
    #[serde(default)]
    pub context: Option<String>,
    /// Choices: unique short labels, or `{label, description}` (what choosing it means); without
    /// them the answer is typed.
    #[serde(default)]
    pub options: Vec<AskOption>,
    /// Also accept a typed answer.
    #[serde(default)]
    pub allow_free_text: bool,
    /// Allow choosing several options.
    #[serde(default)]
    pub multi_select: bool,
}

// One choice as a model writes it: a plain label (`"postgres"`) or a label with what choosing
// it means. (A comment, not a doc comment: the field's description says it, once, in the
// schema.)
#[allow(missing_docs)]
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum AskOption {
    Label(String),
    Described(CardOption),
}

/// A string, or `{label, description}`: the field's description says what each is, once.
impl JsonSchema for AskOption {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AskOption".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
                    "required": ["label"]
                }
            ]
        })
    }
}

impl From<AskOption> for CardOption {
    fn from(o: AskOption) -> CardOption {
        match o {
            AskOption::Label(label) => CardOption::new(label, None),
            AskOption::Described(o) => o,
        }
    }
}

/// The instruction that goes with a skip.
pub const SKIP_INSTRUCTION: &str = "Proceed under an explicitly stated assumption (say what you assumed and why), and do not ask this question again.";

/// How an `ask_user` call ended: the `outcome` of its structured result. There is always one;
/// an answer is never empty and never picked for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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

/// The structured result of `ask_user`.
#[derive(Debug, Serialize)]
struct AskResult {
    outcome: Outcome,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    selected: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// Skipped or declined earlier in this run, so not shown again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    repeated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl AskResult {
    fn of(outcome: Outcome) -> Self {
        AskResult {
            outcome,
            selected: Vec::new(),
            text: None,
            repeated: false,
            reason: None,
        }
    }

    fn output(self, text: String) -> ToolOutput {
        let failed = matches!(self.outcome, Outcome::TimedOut | Outcome::NoOperator);
        let structured = serde_json::to_value(&self).unwrap_or_default();
        let out = if failed {
            ToolOutput::error(text)
        } else {
            ToolOutput::text(text)
        };
        out.with_structured(structured)
    }
}

pub(crate) struct AskUser {
    pub port: Arc<dyn AskPort>,
    pub space: String,
    /// `None`: no limit.
    pub timeout: Option<Duration>,
    /// Per room (conversation): the questions its person skipped or declined (normalised),
    /// answered the same way at once when that conversation asks again. Another conversation's
    /// person has not seen them.
    pub refused: Arc<Rooms<Mutex<HashMap<String, Outcome>>>>,
}

fn normalise(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The result of a skip or a decline, first time or repeated.
fn refused_output(outcome: Outcome, repeated: bool) -> ToolOutput {
    let what = match outcome {
        Outcome::Declined => "declined to answer",
        _ => "skipped",
    };
    let text = if repeated {
        format!(
            "The operator already {what} this question in this conversation, so it was not shown again. {SKIP_INSTRUCTION}"
        )
    } else {
        format!("The operator {what} this question. {SKIP_INSTRUCTION}")
    };
    AskResult {
        repeated,
        ..AskResult::of(outcome)
    }
    .output(text)
}

impl AskUser {
    /// The room's ledger of refused questions.
    fn ledger(&self, cx: &CallContext) -> Arc<Mutex<HashMap<String, Outcome>>> {
        self.refused.get_or_init(&cx.room(), Mutex::default)
    }

    async fn run(&self, args: AskUserArgs, cx: &CallContext) -> Result<ToolOutput, AskError> {
        let card = Card {
            kind: CardKind::Question,
            question: args.question,
            context: args.context,
            // A bare question takes a typed answer: nothing else could answer it.
            allow_free_text: args.allow_free_text || args.options.is_empty(),
            options: args.options.into_iter().map(CardOption::from).collect(),
            multi_select: args.multi_select,
            timeout: self.timeout,
            space: Some(self.space.clone()),
        };
        card.validate().map_err(AskError::InvalidArguments)?;
        let key = normalise(&card.question);
        let ledger = self.ledger(cx);
        // Poisoning needs a panic while held; the sections that hold it cannot panic.
        let refused = || ledger.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(outcome) = refused().get(&key).copied() {
            return Ok(refused_output(outcome, true));
        }
        // Other inactivity budgets of the run (a kernel cell's) pause while a person is asked.
        let _asking = cx.registry().asking();
        // The port honours the card's timeout; the grace only guards against a port that does not.
        let outcome = within(
            self.timeout.map(|t| t.saturating_add(GRACE)),
            self.port.ask(card.clone(), cx.requester().cloned()),
        )
        .await;
        Ok(match outcome {
            AskOutcome::Answer(answer) => {
                let mut text = String::from("The operator answered.");
                if !answer.selected.is_empty() {
                    text.push_str(&format!("\nchosen: {}", answer.selected.join(", ")));
                }
                if let Some(t) = &answer.text {
                    text.push_str(&format!("\ntyped: {t}"));
                }
                AskResult {
                    selected: answer.selected,
                    text: answer.text,
                    ..AskResult::of(Outcome::Answered)
                }
                .output(text)
            }
            AskOutcome::Skip => {
                refused().insert(key, Outcome::Skipped);
                refused_output(Outcome::Skipped, false)
            }
            AskOutcome::Decline => {
                refused().insert(key, Outcome::Declined);
                refused_output(Outcome::Declined, false)
            }
            AskOutcome::Timeout => {
                let after = self
                    .timeout
                    .map_or_else(String::new, |t| format!(" within {}", human_duration(t)));
                AskResult::of(Outcome::TimedOut)
                    .output(format!("Nobody answered{after}. {SKIP_INSTRUCTION}"))
            }
            AskOutcome::Unavailable(reason) => {
                let text = format!(
                    "Nobody can answer through the {} port: {reason}. The question was not answered. {SKIP_INSTRUCTION}",
                    self.port.name()
                );
                AskResult {
                    reason: Some(reason),
                    ..AskResult::of(Outcome::NoOperator)
                }
                .output(text)
            }
        })
    }
}

impl Tool for AskUser {
    type Args = AskUserArgs;

    fn name(&self) -> &str {
        "ask_user"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> String {
        let errors = match self.timeout {
            Some(t) => format!(
                "timed_out ({}) or no_operator are errors",
                human_duration(t)
            ),
            None => "no_operator is an error".into(),
        };
        format!(
            "Get a decision only a person can make (not what code or tools can tell you); a question in a chat message would end the turn. Waits for the answer. `outcome`: answered; skipped or declined (proceed on an assumption you state; asking again returns at once); {errors}: proceed the same way."
        )
    }

    fn resource_key(&self) -> String {
        "ask".into()
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: AskUserArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(self.run(args, &cx).await?)
    }
}
