//! Permission prompts from the registry's approvals, rendered as the same card.

use crate::card::{AskOutcome, Card, CardKind, CardOption};
use crate::port::{AskPort, BoxFuture, GRACE};
use agent_tier::display::duration;
use agent_tier::{ApprovalDecision, ApprovalRequest, Approver, Origin};
use std::sync::Arc;
use std::time::Duration;

/// The label that approves.
pub const APPROVE: &str = "approve";
/// The label that declines.
pub const DECLINE: &str = "decline";
/// The most an approval prompt shows; a call whose arguments render larger is declined unasked.
pub const MAX_SHOWN: usize = 64 * 1024;

/// Escape what a terminal would act on instead of print (escape sequences, carriage returns,
/// other control characters, bidirectional overrides), keeping newlines and tabs, so the text
/// shown is the text run.
fn visible(text: &str) -> String {
    agent_tier::display::escape_keeping_lines(text).into_owned()
}

/// The whole arguments of a call, for a person: each string argument as its own block of text
/// (code reads as code), everything else as JSON. Nothing is cut.
pub fn render_arguments(arguments: &serde_json::Value) -> String {
    let Some(map) = arguments.as_object() else {
        return visible(&serde_json::to_string_pretty(arguments).unwrap_or_default());
    };
    let mut out = String::new();
    for (key, value) in map {
        match value {
            serde_json::Value::String(text) if text.contains('\n') => {
                out.push_str(&format!("{key}: ({} lines)\n", text.lines().count()));
                for line in text.lines() {
                    out.push_str("  | ");
                    out.push_str(&visible(line));
                    out.push('\n');
                }
            }
            other => {
                let json = serde_json::to_string(other).unwrap_or_default();
                out.push_str(&format!("{key}: {}\n", visible(&json)));
            }
        }
    }
    out
}

/// An [`Approver`] that asks through an ask port: the permission prompt is a card with
/// `approve` / `decline`, and a typed answer declines with it as the reason. A skip, a client's
/// decline, a timeout or a port with nobody attached declines; with no port at all it declines at once.
pub struct AskApprover {
    port: Option<Arc<dyn AskPort>>,
    timeout: Option<Duration>,
    space: Option<String>,
}

impl std::fmt::Debug for AskApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskApprover")
            .field("port", &self.port.as_ref().map(|p| p.name().to_string()))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl AskApprover {
    /// Ask through `port` (none: decline everything), giving the person `timeout`.
    pub fn new(port: Option<Arc<dyn AskPort>>, timeout: Duration) -> Self {
        AskApprover {
            port,
            timeout: Some(timeout),
            space: None,
        }
    }

    /// The same port, timeout and target space as `ask_user` uses.
    pub fn from_config(config: &crate::AskConfig) -> Self {
        AskApprover {
            port: config.port.clone(),
            timeout: config.timeout,
            space: config.target_space.clone(),
        }
    }

    /// The card a request renders as.
    pub fn card(&self, request: &ApprovalRequest) -> Card {
        let who = match &request.origin {
            Origin::Model => "the model".to_string(),
            Origin::Bridge { via } => format!("a `{via}` cell's tool() bridge"),
            Origin::Worker { worker_id } => format!("worker `{worker_id}`"),
        };
        let args = render_arguments(&request.arguments);
        Card {
            kind: CardKind::Permission,
            question: format!("May {who} run `{}` ({}-tier)?", request.tool, request.tier),
            context: Some(format!("arguments:\n{args}")),
            options: vec![
                CardOption::new(APPROVE, Some("run this call once")),
                CardOption::new(DECLINE, Some("do not run it; the caller gets an error")),
            ],
            allow_free_text: true,
            multi_select: false,
            timeout: self.timeout,
            space: self.space.clone(),
        }
    }
}

impl Approver for AskApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async move {
            let Some(port) = &self.port else {
                return ApprovalDecision::Decline {
                    reason: Some("no ask port is attached to ask the operator".into()),
                };
            };
            let card = self.card(&request);
            // The person approves exactly what they were shown: a payload too large to show
            // whole is refused without asking, never shown cut.
            let shown = card.context.as_deref().map_or(0, str::len);
            if shown > MAX_SHOWN {
                return ApprovalDecision::Decline {
                    reason: Some(format!(
                        "the call's arguments render to {shown} bytes, more than the {MAX_SHOWN} bytes an approval prompt shows whole; it was not put to the operator (split the work into smaller calls)"
                    )),
                };
            }
            let outcome = crate::port::within(
                self.timeout.map(|t| t.saturating_add(GRACE)),
                port.ask(card, request.requester.clone()),
            )
            .await;
            match outcome {
                AskOutcome::Answer(a) if a.selected.iter().any(|l| l == APPROVE) => {
                    ApprovalDecision::Approve
                }
                AskOutcome::Answer(a) => ApprovalDecision::Decline {
                    reason: a.text.or_else(|| Some("the operator chose decline".into())),
                },
                AskOutcome::Skip => ApprovalDecision::Decline {
                    reason: Some("the operator skipped the prompt".into()),
                },
                AskOutcome::Decline => ApprovalDecision::Decline {
                    reason: Some("the operator's client declined the prompt".into()),
                },
                AskOutcome::Timeout => ApprovalDecision::Decline {
                    reason: Some(match self.timeout {
                        Some(t) => format!("no answer within {}", duration(t)),
                        None => "no answer".into(),
                    }),
                },
                AskOutcome::Unavailable(reason) => ApprovalDecision::Decline {
                    reason: Some(format!("nobody attached to approve: {reason}")),
                },
            }
        })
    }
}
