//! `agent-tools repl`: an interactive console on a root. It prints what is attached (as
//! `doctor`), then reads tool calls `name {json}` line by line, runs them through the registry
//! and prints the results. With stdin not a TTY it reads calls line by line (for scripts).

use crate::cli::Common;
use agent_tools::Registry;
use serde_json::Value;
use std::io::IsTerminal;
use std::process::ExitCode;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Split `name {json}` into the tool name and its arguments.
pub fn parse_line(line: &str) -> Result<(String, Value), String> {
    let line = line.trim();
    let (name, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let args = if rest.is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(rest).map_err(|e| {
            format!("the arguments of `{name}` are not valid JSON ({e}); write `{name} {{\"key\": \"value\"}}`")
        })?
    };
    Ok((name.to_string(), args))
}

pub async fn run(common: Common) -> ExitCode {
    let registry = crate::cli::terminal_registry(&common);
    let interactive = std::io::stdin().is_terminal();
    let mut out = tokio::io::stdout();
    let banner = format!(
        "{}surface: {}; tools: {}\ntype `TOOL {{json}}` (e.g. `read {{\"path\": \"README.md\"}}`), `tools`, or `quit`\n",
        crate::host::doctor_text(&common.root),
        common.surface,
        registry
            .list(common.surface)
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = out.write_all(banner.as_bytes()).await;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut failures = 0u32;
    loop {
        if interactive {
            let _ = out.write_all(b"> ").await;
            let _ = out.flush().await;
        }
        let Ok(Some(line)) = lines.next_line().await else {
            break;
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if trimmed == "quit" || trimmed == "exit" {
            break;
        }
        if trimmed == "tools" {
            let names: Vec<String> = registry
                .list(common.surface)
                .into_iter()
                .map(|t| format!("{} ({})", t.name, t.tier))
                .collect();
            let _ = out
                .write_all(format!("{}\n", names.join(", ")).as_bytes())
                .await;
            continue;
        }
        let text = match parse_line(trimmed) {
            Ok((name, args)) => {
                let res = registry.call(&name, args, common.surface).await;
                if res.is_error {
                    failures += 1;
                    format!("error: {}\n", res.text)
                } else {
                    format!("{}\n", res.text)
                }
            }
            Err(e) => {
                failures += 1;
                format!("error: {e}\n")
            }
        };
        let _ = out.write_all(text.as_bytes()).await;
        let _ = out.flush().await;
    }
    if failures > 0 && !interactive {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Attach `ask_user` and the approver through one port, in the space `space`.
#[cfg(feature = "ask")]
fn attach_ask(
    registry: &Registry,
    port: std::sync::Arc<dyn agent_tools::ask::AskPort>,
    space: &str,
) {
    use agent_tools::ask::{AskApprover, AskConfig};
    let config = AskConfig {
        port: Some(port),
        target_space: Some(space.to_string()),
        ..AskConfig::default()
    };
    registry.set_approver(std::sync::Arc::new(AskApprover::from_config(&config)));
    agent_tools::ask::attach(registry, config);
}

/// Attach `ask_user` with the terminal card (fails closed when stdin is not a TTY).
#[cfg(feature = "ask")]
pub fn attach_terminal_ask(registry: &Registry) {
    use agent_tools::ask::{TerminalOptions, TerminalPort};
    attach_ask(
        registry,
        std::sync::Arc::new(TerminalPort::new(TerminalOptions::default())),
        "terminal",
    );
}

/// Attach `ask_user` through MCP elicitation (fails closed when the client did not declare it).
#[cfg(feature = "ask")]
pub fn attach_elicitation_ask(registry: &Registry, peer: crate::mcp::Peer) {
    use agent_tools::ask::ElicitationPort;
    let space = registry
        .run()
        .conversation_id
        .clone()
        .unwrap_or_else(|| "mcp".to_string());
    attach_ask(
        registry,
        std::sync::Arc::new(ElicitationPort::new(std::sync::Arc::new(McpElicitor(peer)))),
        &space,
    );
}

/// Sends the card as an MCP `elicitation/create` request to the connected client.
#[cfg(feature = "ask")]
struct McpElicitor(crate::mcp::Peer);

#[cfg(feature = "ask")]
impl agent_tools::ask::Elicitor for McpElicitor {
    fn elicit(
        &self,
        message: String,
        requested_schema: Value,
    ) -> agent_tools::ask::BoxFuture<'_, Result<agent_tools::ask::ElicitOutcome, String>> {
        use agent_tools::ask::ElicitOutcome;
        Box::pin(async move {
            if !self.0.client_has("elicitation") {
                return Err(
                    "the MCP client did not declare the `elicitation` capability, so nobody can answer"
                        .to_string(),
                );
            }
            let result = self
                .0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_calls() {
        assert_eq!(
            parse_line("read {\"path\": \"a\"}").unwrap(),
            ("read".to_string(), serde_json::json!({"path": "a"}))
        );
        assert_eq!(
            parse_line("vibe_list").unwrap(),
            ("vibe_list".to_string(), serde_json::json!({}))
        );
        assert!(
            parse_line("read {oops")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
