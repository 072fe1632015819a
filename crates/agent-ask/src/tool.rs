//! The `ask_user` tool.

use crate::card::{AskOutcome, Card, CardKind, CardOption};
use crate::error::AskError;
use crate::port::{AskPort, GRACE, within};
use crate::report::{AskReport, Outcome};
use agent_tier::display::duration;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, ResourceKey, Rooms, Tier, Tool, ToolOutput};
use parking_lot::Mutex;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
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

impl AskUser {
    /// The room's ledger of refused questions.
    fn ledger(&self, cx: &CallContext) -> Arc<Mutex<HashMap<String, Outcome>>> {
        self.refused.get_or_init(&cx.room(), Mutex::default)
    }

    async fn run(&self, args: AskUserArgs, cx: &CallContext) -> Result<AskReport, AskError> {
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
        card.validate()?;
        let key = normalise(&card.question);
        let ledger = self.ledger(cx);
        if let Some(outcome) = ledger.lock().get(&key).copied() {
            return Ok(AskReport::refused(outcome, true));
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
            AskOutcome::Answer(answer) => AskReport::answered(answer.selected, answer.text),
            AskOutcome::Skip => {
                ledger.lock().insert(key, Outcome::Skipped);
                AskReport::refused(Outcome::Skipped, false)
            }
            AskOutcome::Decline => {
                ledger.lock().insert(key, Outcome::Declined);
                AskReport::refused(Outcome::Declined, false)
            }
            AskOutcome::Timeout => AskReport::timed_out(self.timeout),
            AskOutcome::Unavailable(reason) => AskReport::no_operator(self.port.name(), reason),
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
            Some(t) => format!("timed_out ({}) or no_operator are errors", duration(t)),
            None => "no_operator is an error".into(),
        };
        format!(
            "Get a decision only a person can make (not what code or tools can tell you); a question in a chat message would end the turn. Waits for the answer. `outcome`: answered; skipped or declined (proceed on an assumption you state; asking again returns at once); {errors}: proceed the same way."
        )
    }

    fn resource_key(&self) -> ResourceKey {
        ResourceKey::named("ask")
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    fn asks_a_person(&self) -> bool {
        true
    }

    async fn call(&self, args: AskUserArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::report(&self.run(args, &cx).await?))
    }
}
