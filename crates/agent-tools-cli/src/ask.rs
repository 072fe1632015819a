//! How `ask_user` and the approver reach a person: the terminal card (`call`, `tools`, `repl`)
//! or MCP elicitation through the client of the session whose call caused the prompt (`serve`;
//! never another session's client). Both fail closed when nobody can answer.

use crate::error::ElicitError;
use crate::mcp::Session;
use agent_tools::Registry;
use agent_tools::ask::{AskApprover, AskConfig, AskPort, ElicitOutcome};
use agent_tools::tier::Requester;
use rmcp::model::{ElicitationAction, ElicitationSchema};
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
/// that client did not declare it, or the call came from no MCP session), in the run's
/// conversation `space`.
pub fn attach_elicitation(registry: &Registry, space: &str, timeout: Option<Duration>) {
    use agent_tools::ask::ElicitationPort;
    attach(
        registry,
        Arc::new(ElicitationPort::new(Arc::new(McpElicitor))),
        space,
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
    ) -> agent_tools::ask::BoxFuture<'_, Result<ElicitOutcome, agent_tools::tier::BoxError>> {
        Box::pin(async move {
            elicit(requester, message, requested_schema)
                .await
                .map_err(Into::into)
        })
    }
}

/// The card put to the requester's client. The schema the ask family wrote is read once into
/// MCP's typed schema, and the client's typed answer becomes the ask family's outcome.
async fn elicit(
    requester: Option<Arc<dyn Requester>>,
    message: String,
    requested_schema: Value,
) -> Result<ElicitOutcome, ElicitError> {
    let requester = requester.ok_or(ElicitError::NoRequester)?;
    let session = requester
        .as_any()
        .downcast_ref::<Session>()
        .ok_or_else(|| ElicitError::NotASession(requester.id().to_string()))?;
    if !session.can_elicit() {
        tracing::info!(
            session = requester.id(),
            "ask refused: the client did not declare elicitation"
        );
        return Err(ElicitError::NotDeclared);
    }
    let schema: ElicitationSchema =
        serde_json::from_value(requested_schema).map_err(ElicitError::Schema)?;
    let answer = session.elicit(message, schema).await?;
    match answer.action {
        ElicitationAction::Accept => {
            Ok(ElicitOutcome::Accept(answer.content.unwrap_or(Value::Null)))
        }
        ElicitationAction::Decline => Ok(ElicitOutcome::Decline),
        ElicitationAction::Cancel => Ok(ElicitOutcome::Cancel),
        other => Err(ElicitError::Action(format!("{other:?}"))),
    }
}
