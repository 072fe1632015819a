//! How `ask_user` and the approver reach a person: the terminal card (`call`, `tools`, `repl`)
//! or MCP elicitation through the client of the session whose call caused the prompt (`serve`;
//! never another session's client). Both fail closed when nobody can answer.

use crate::mcp::Session;
use agent_tools::Registry;
use agent_tools::ask::{AskApprover, AskConfig, AskPort};
use agent_tools::tier::Requester;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Attach `ask_user` and the approver through one port, in the space `space`, waiting
/// `timeout` for a person (`None`: the default; zero: no limit).
fn attach(registry: &Registry, port: Arc<dyn AskPort>, space: &str, timeout: Option<Duration>) {
    let default = AskConfig::default();
    let config = AskConfig {
        port: Some(port),
        target_space: Some(space.to_string()),
        timeout: match timeout {
            None => default.timeout,
            Some(t) if t.is_zero() => None,
            Some(t) => Some(t),
        },
    };
    registry.set_approver(Arc::new(AskApprover::from_config(&config)));
    agent_tools::ask::attach(registry, config);
}

/// Attach `ask_user` with the terminal card (fails closed when stdin is not a TTY).
pub fn attach_terminal(registry: &Registry, timeout: Option<Duration>) {
    use agent_tools::ask::{TerminalOptions, TerminalPort};
    attach(
        registry,
        Arc::new(TerminalPort::new(TerminalOptions::default())),
        "terminal",
        timeout,
    );
}

/// Attach `ask_user` through MCP elicitation to the requesting session's client (fails closed when
/// that client did not declare it, or the call came from no MCP session).
pub fn attach_elicitation(registry: &Registry, timeout: Option<Duration>) {
    use agent_tools::ask::ElicitationPort;
    let space = registry
        .run()
        .conversation_id
        .clone()
        .unwrap_or_else(|| "mcp".to_string());
    attach(
        registry,
        Arc::new(ElicitationPort::new(Arc::new(McpElicitor))),
        &space,
        timeout,
    );
}

/// Sends the card as an MCP `elicitation/create` request to the client of the session that made
/// the call (the requester); it knows no other client.
struct McpElicitor;

impl agent_tools::ask::Elicitor for McpElicitor {
    fn elicit(
        &self,
        requester: Option<Arc<dyn Requester>>,
        message: String,
        requested_schema: Value,
    ) -> agent_tools::ask::BoxFuture<'_, Result<agent_tools::ask::ElicitOutcome, String>> {
        use agent_tools::ask::ElicitOutcome;
        Box::pin(async move {
            let Some(requester) = requester else {
                return Err(
                    "the call that asks came from no MCP session, so no client can answer"
                        .to_string(),
                );
            };
            let Some(session) = requester.as_any().downcast_ref::<Session>() else {
                return Err(format!(
                    "the call that asks came from `{}`, which is not an MCP session of this host",
                    requester.id()
                ));
            };
            if !session.client_has("elicitation") {
                tracing::info!(
                    session = requester.id(),
                    "ask refused: the client did not declare elicitation"
                );
                return Err(
                    "the MCP client did not declare the `elicitation` capability, so nobody can answer"
                        .to_string(),
                );
            }
            let result = session
                .request(
                    "elicitation/create",
                    serde_json::json!({"message": message, "requestedSchema": requested_schema}),
                )
                .await?;
            match result.get("action").and_then(Value::as_str) {
                Some("accept") => Ok(ElicitOutcome::Accept(
                    result.get("content").cloned().unwrap_or(Value::Null),
                )),
                Some("decline") => Ok(ElicitOutcome::Decline),
                Some("cancel") => Ok(ElicitOutcome::Cancel),
                other => Err(format!(
                    "the client answered elicitation/create with action {other:?}; expected accept, decline or cancel"
                )),
            }
        })
    }
}
