//! Permission prompts from the registry's approvals, rendered as the same card.

use crate::card::{AskOutcome, Card, CardKind, CardOption, human_duration};
use crate::port::{AskPort, BoxFuture};
use agent_tier::{ApprovalDecision, ApprovalRequest, Approver, Origin};
use std::sync::Arc;
use std::time::Duration;

/// The label that approves.
pub const APPROVE: &str = "approve";
/// The label that declines.
pub const DECLINE: &str = "decline";

/// An [`Approver`] that asks through an ask port: the permission prompt is a card with
/// `approve` / `decline`, and a typed answer declines with it as the reason. A skip, a timeout
/// or a port with nobody attached declines; with no port at all it declines at once.
pub struct AskApprover {
    port: Option<Arc<dyn AskPort>>,
    timeout: Duration,
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
            timeout,
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
        let mut args = serde_json::to_string_pretty(&request.arguments)
            .unwrap_or_else(|_| request.arguments.to_string());
        if args.chars().count() > 1500 {
            args = args.chars().take(1500).collect::<String>() + "\n... (truncated)";
        }
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
            timeout: Some(self.timeout),
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
            let grace = self.timeout + Duration::from_secs(5);
            let outcome = tokio::time::timeout(grace, port.ask(card))
                .await
                .unwrap_or(AskOutcome::Timeout);
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
                AskOutcome::Timeout => ApprovalDecision::Decline {
                    reason: Some(format!("no answer within {}", human_duration(self.timeout))),
                },
                AskOutcome::Unavailable(reason) => ApprovalDecision::Decline {
                    reason: Some(format!("nobody attached to approve: {reason}")),
                },
            }
        })
    }
}
