//! Command-line parsing and the commands.

use crate::host::{self, HostOptions};
use agent_tools::{Registry, Surface, Tier};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

/// Printed after a usage error.
pub const USAGE: &str =
    "run `agent-tools --help`, or `agent-tools SUBCOMMAND --help`, for the flags and examples";

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Serve(Common),
    Call {
        common: Common,
        tool: String,
        args: Value,
    },
    Tools(Common),
    Doctor(Common),
    Repl(Common),
    /// `--help` or `--version`: the text to print.
    Help(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    pub root: PathBuf,
    pub surface: Surface,
    pub json: bool,
    pub vibe: bool,
    pub conversation: Option<String>,
    pub sandbox_prefix: Vec<String>,
    /// Tiers that need the operator's approval before a call runs.
    pub approval: Vec<Tier>,
    /// `serve` over Streamable HTTP on this address instead of stdio.
    pub listen: Option<std::net::SocketAddr>,
    /// Where the HTTP bearer token is read from.
    pub token_file: Option<PathBuf>,
}

impl Common {
    fn host(&self) -> HostOptions {
        HostOptions {
            root: self.root.clone(),
            vibe: self.vibe,
            conversation_id: self.conversation.clone(),
            sandbox_prefix: self.sandbox_prefix.clone(),
            approval: self.approval.clone(),
        }
    }
}

/// Parse the arguments after the program name (see [`crate::args`]).
pub fn parse(args: &[String]) -> Result<Command, String> {
    crate::args::parse(args)
}

/// The registry for terminal commands (`call`, `tools`, `repl`): ask through the terminal card.
pub fn terminal_registry(common: &Common) -> Registry {
    let registry = host::build(&common.host());
    #[cfg(feature = "ask")]
    crate::repl::attach_terminal_ask(&registry);
    registry
}

pub async fn run(cmd: Command) -> ExitCode {
    match cmd {
        Command::Help(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Doctor(common) => {
            if common.json {
                let v =
                    serde_json::to_string_pretty(&host::doctor(&common.root)).unwrap_or_default();
                println!("{v}");
            } else {
                print!("{}", host::doctor_text(&common.root));
            }
            ExitCode::SUCCESS
        }
        Command::Tools(common) => {
            let registry = terminal_registry(&common);
            let tools = registry.list(common.surface);
            if common.json {
                let v: Vec<Value> = tools.iter().map(crate::mcp::tool_json).collect();
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                println!("surface: {}", common.surface);
                for t in tools {
                    println!(
                        "{:<12} {:<5} {:<13} {}",
                        t.name,
                        t.tier,
                        if t.parallel_safe {
                            "parallel"
                        } else {
                            "serialised"
                        },
                        t.description.lines().next().unwrap_or_default()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Command::Call { common, tool, args } => {
            let registry = terminal_registry(&common);
            let out = registry.call(&tool, args, common.surface).await;
            if common.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&crate::mcp::result_json(&out))
                        .unwrap_or_default()
                );
            } else {
                println!("{}", out.text);
                if !out.images.is_empty() {
                    println!("[{} image(s); use --json to get them]", out.images.len());
                }
            }
            if out.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Command::Serve(common) => {
            let surface = common.surface;
            let make_registry = |peer| {
                let registry = host::build(&common.host());
                #[cfg(feature = "ask")]
                crate::repl::attach_elicitation_ask(&registry, peer);
                #[cfg(not(feature = "ask"))]
                let _ = peer;
                registry
            };
            let res = match common.listen {
                Some(addr) => {
                    crate::http::serve(surface, addr, common.token_file.clone(), make_registry)
                        .await
                }
                None => crate::mcp::serve(surface, make_registry).await,
            };
            match res {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("agent-tools serve: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Repl(common) => crate::repl::run(common).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args).unwrap_err()
    }

    #[test]
    fn usage_errors_name_the_argument() {
        insta::assert_snapshot!(
            [
                parse_err(&["frobnicate"]),
                parse_err(&["tools", "--surface", "admin"]),
                parse_err(&["call"]),
                parse_err(&["call", "read", "{not json"]),
                parse_err(&["tools", "--colour"]),
                parse_err(&["serve", "--root"]),
                parse_err(&["serve", "--approval", "write,admin"]),
                parse_err(&["doctor", "--surface", "plan"]),
                parse_err(&["serve", "--listen", "localhost:x"]),
            ]
            .join("\n")
        );
    }
}
