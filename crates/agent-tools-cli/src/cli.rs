//! The commands, run: `serve` hands the run to the library's [`host::serve`]; `call`, `tools`
//! and `doctor` print what the registry says; `repl` is [`crate::repl`], `hook` is
//! [`crate::hook`].

use crate::args::{Command, Common};
use crate::out;
use agent_tools_cli::host::{self, Transport};
use agent_tools_cli::mcp;
use serde_json::Value;
use std::process::ExitCode;

pub async fn run(cmd: Command) -> ExitCode {
    match cmd {
        Command::Help(text) => out::finish(out::stdout(&text), ExitCode::SUCCESS),
        Command::Doctor(common) => {
            let text = if common.json {
                out::json(&host::doctor(&common.root))
            } else {
                host::doctor_text(&common.root)
            };
            out::finish(out::stdout(&text), ExitCode::SUCCESS)
        }
        Command::Tools(common) => out::finish(out::stdout(&tools_text(&common)), ExitCode::SUCCESS),
        Command::Call { common, tool, args } => {
            let registry = host::terminal_registry(&common.host());
            let res = registry.call(&tool, args, common.surface).await;
            let text = if common.json {
                out::json(&mcp::result_json(&res))
            } else if res.images.is_empty() {
                format!("{}\n", res.text)
            } else {
                format!(
                    "{}\n[{} image(s); use --json to get them]\n",
                    res.text,
                    res.images.len()
                )
            };
            let code = if res.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
            out::finish(out::stdout(&text), code)
        }
        Command::Serve(common) => {
            let transport = match common.listen {
                Some(addr) => Transport::Http {
                    addr,
                    token_file: common.token_file.clone(),
                },
                None => Transport::Stdio,
            };
            match host::serve(&common.host(), common.surface, transport).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    out::stderr(&format!("agent-tools serve: {e}"));
                    ExitCode::from(1)
                }
            }
        }
        Command::Repl(common) => crate::repl::run(common).await,
        Command::Hook(client) => crate::hook::run(client),
    }
}

/// `tools`: one line per tool (name, tier, parallel or serialised, first line of the
/// description), or the MCP listing as JSON.
fn tools_text(common: &Common) -> String {
    let registry = host::terminal_registry(&common.host());
    let tools = registry.list(common.surface);
    if common.json {
        let v: Vec<Value> = tools.iter().map(mcp::tool_json).collect();
        return out::json(&v);
    }
    let mut text = format!("surface: {}\n", common.surface);
    for t in tools {
        text.push_str(&format!(
            "{:<12} {:<5} {:<13} {}\n",
            t.name,
            t.tier,
            if t.parallel_safe {
                "parallel"
            } else {
                "serialised"
            },
            t.description.lines().next().unwrap_or_default()
        ));
    }
    text
}
