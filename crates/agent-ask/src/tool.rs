//! The `ask_user` tool.

use crate::card::{AskOutcome, Card, CardKind, CardOption, human_duration};
use crate::error::AskError;
use crate::port::AskPort;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Tier, Tool, ToolOutput};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    /// What to ask the operator.
    pub question: String,
    /// Optional: why you ask, and what the answer decides.
    #[serde(default)]
    pub context: Option<String>,
    /// The choices, each `{label, description?}`; labels must be unique. Without options the
    /// answer is typed text.
    #[serde(default)]
    pub options: Vec<CardOption>,
    /// Whether a typed answer is accepted besides the options (always, when there are none).
    #[serde(default)]
    pub allow_free_text: bool,
    /// Whether several options may be chosen (needs options).
    #[serde(default)]
    pub multi_select: bool,
}

/// The instruction that goes with a skip.
pub const SKIP_INSTRUCTION: &str = "Proceed under an explicitly stated assumption (say what you assumed and why), and do not ask this question again.";

pub(crate) struct AskUser {
    pub port: Arc<dyn AskPort>,
    pub space: String,
    pub timeout: Duration,
    /// Questions skipped in this run (normalised), answered with the skip at once.
    pub skipped: Mutex<HashSet<String>>,
}

fn normalise(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn skipped_output(repeated: bool) -> ToolOutput {
    let text = if repeated {
        format!(
            "This question was already skipped in this run, so it was not shown again. {SKIP_INSTRUCTION}"
        )
    } else {
        format!("The operator skipped this question. {SKIP_INSTRUCTION}")
    };
    ToolOutput::text(text).with_structured(json!({"status": "skipped", "repeated": repeated}))
}

impl AskUser {
    fn skipped(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // Poisoning needs a panic while held; the sections that hold it cannot panic.
        self.skipped.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn run(&self, args: AskUserArgs, cx: &CallContext) -> Result<ToolOutput, AskError> {
        let card = Card {
            kind: CardKind::Question,
            question: args.question,
            context: args.context,
            // A bare question takes a typed answer: nothing else could answer it.
            allow_free_text: args.allow_free_text || args.options.is_empty(),
            options: args.options,
            multi_select: args.multi_select,
            timeout: Some(self.timeout),
            space: Some(self.space.clone()),
        };
        card.validate().map_err(AskError::InvalidArguments)?;
        let key = normalise(&card.question);
        if self.skipped().contains(&key) {
            return Ok(skipped_output(true));
        }
        // The port honours the card's timeout; the grace only guards against a port that does not.
        let grace = self.timeout.saturating_add(Duration::from_secs(5));
        // Other inactivity budgets of the run (a kernel cell's) pause while a person is asked.
        let _asking = cx.registry().asking();
        let outcome = tokio::time::timeout(grace, self.port.ask(card.clone()))
            .await
            .unwrap_or(AskOutcome::Timeout);
        match outcome {
            AskOutcome::Answer(answer) => {
                let mut text = String::from("The operator answered.");
                if !answer.selected.is_empty() {
                    text.push_str(&format!("\nchosen: {}", answer.selected.join(", ")));
                }
                if let Some(t) = &answer.text {
                    text.push_str(&format!("\ntyped: {t}"));
                }
                Ok(ToolOutput::text(text).with_structured(json!({
                    "status": "answered",
                    "selected": answer.selected,
                    "text": answer.text,
                })))
            }
            AskOutcome::Skip => {
                self.skipped().insert(key);
                Ok(skipped_output(false))
            }
            AskOutcome::Timeout => Err(AskError::Timeout {
                after: human_duration(self.timeout),
            }),
            AskOutcome::Unavailable(reason) => Err(AskError::Unavailable {
                port: self.port.name().to_string(),
                reason,
            }),
        }
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
        format!(
            "Ask the operator a question and wait for the answer. This is the only way to ask a person: never write a question as a chat message (that ends the turn). The question is shown as a numbered card with your options (each `{{label, description?}}`); set `allow_free_text` to accept a typed answer and `multi_select` to let several options be chosen. A skip is a success: proceed under an explicitly stated assumption and do not ask again (asking the same question again in this run returns the skip at once). No answer within {} is an error with the same instruction; so is a port with nobody attached.",
            human_duration(self.timeout)
        )
    }

    fn resource_key(&self) -> String {
        "ask".into()
    }

    async fn call(&self, args: AskUserArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(self.run(args, &cx).await?)
    }
}
