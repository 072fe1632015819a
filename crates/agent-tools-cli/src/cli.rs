//! Command-line parsing and the commands.

use crate::host::{self, HostOptions};
use agent_tools::{Registry, Surface, Tier};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

pub const USAGE: &str = "usage:
  agent-tools serve  [--root DIR] [--surface full|plan|read-only] [--vibe] [--conversation ID] [--sandbox-prefix CMD] [--approval TIERS] [--listen ADDR [--token-file PATH]]
  agent-tools call   TOOL [ARGS_JSON] [--root DIR] [--surface S] [--json]
  agent-tools tools  [--root DIR] [--surface S] [--json] [--vibe]
  agent-tools doctor [--root DIR] [--json]
  agent-tools repl   [--root DIR] [--surface S] [--vibe] [--approval TIERS]

--conversation ID: the conversation this run belongs to (the debug session is keyed by it);
default: one per process, since one process serves one run.
--approval write,exec: calls of those tiers ask the operator first (the terminal card, or MCP
elicitation under `serve`); with nobody attached they fail closed. Default: none.
--listen 127.0.0.1:PORT: serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio; every
request needs `Authorization: Bearer TOKEN`, the token read from --token-file PATH or
AGENT_TOOLS_TOKEN, else generated and written 0600 to a file whose path is printed on stderr.

exit status of `call`: 0 success, 1 the tool reported an error, 2 usage error";

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
    Help,
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

/// `write,exec` → tiers; `none` → no tier.
fn parse_tiers(text: &str) -> Result<Vec<Tier>, String> {
    if text == "none" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|t| match t.trim() {
            "read" => Ok(Tier::Read),
            "write" => Ok(Tier::Write),
            "exec" => Ok(Tier::Exec),
            other => Err(format!(
                "`--approval` names an unknown tier `{other}`; valid: a comma-separated list of read, write, exec, or none"
            )),
        })
        .collect()
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((sub, rest)) = args.split_first() else {
        return Ok(Command::Help);
    };
    let mut common = Common {
        root: std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
        surface: Surface::Full,
        json: false,
        vibe: false,
        conversation: None,
        sandbox_prefix: Vec::new(),
        approval: Vec::new(),
        listen: None,
        token_file: None,
    };
    let mut positional = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match a.as_str() {
            "--root" => common.root = PathBuf::from(value("--root")?),
            "--surface" => common.surface = value("--surface")?.parse()?,
            "--json" => common.json = true,
            "--vibe" => common.vibe = true,
            "--conversation" => common.conversation = Some(value("--conversation")?),
            "--sandbox-prefix" => {
                common.sandbox_prefix = value("--sandbox-prefix")?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect()
            }
            "--approval" => {
                common.approval = parse_tiers(&value("--approval")?)?;
            }
            "--listen" => common.listen = Some(crate::http::parse_listen(&value("--listen")?)?),
            "--token-file" => common.token_file = Some(PathBuf::from(value("--token-file")?)),
            "-h" | "--help" => return Ok(Command::Help),
            flag if flag.starts_with("--") => {
                return Err(format!(
                    "unknown option `{flag}`; valid options: --root, --surface, --json, --vibe, --conversation, --sandbox-prefix, --approval, --listen, --token-file"
                ));
            }
            _ => positional.push(a.clone()),
        }
    }
    // A host started inside a worker keeps the gate of the call that spawned the worker: the
    // variable can only narrow `--surface`, never widen it; an unreadable value refuses to start.
    if let Some(gate) = std::env::var_os(Surface::ENV) {
        let text = gate.to_string_lossy();
        let gate: Surface = text.parse().map_err(|e| {
            format!(
                "`{}` = `{text}` is not a surface ({e}); the host does not guess its gate",
                Surface::ENV
            )
        })?;
        common.surface = common.surface.narrowest(gate);
    }
    if !common.root.is_dir() {
        return Err(format!(
            "`--root` = `{}` is not a directory",
            common.root.display()
        ));
    }
    common.root = common
        .root
        .canonicalize()
        .map_err(|e| format!("`--root` = `{}`: {e}", common.root.display()))?;
    let no_positional = |name: &str, positional: &[String]| {
        if positional.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "`{name}` takes no positional argument (got `{}`)",
                positional.join(" ")
            ))
        }
    };
    match sub.as_str() {
        "serve" => no_positional("serve", &positional).map(|_| Command::Serve(common)),
        "tools" => no_positional("tools", &positional).map(|_| Command::Tools(common)),
        "doctor" => no_positional("doctor", &positional).map(|_| Command::Doctor(common)),
        "repl" => no_positional("repl", &positional).map(|_| Command::Repl(common)),
        "call" => {
            let mut pos = positional.into_iter();
            let tool = pos
                .next()
                .ok_or("`call` needs a tool name: agent-tools call TOOL [ARGS_JSON]")?;
            let args = match pos.next() {
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| format!("`ARGS_JSON` is not valid JSON ({e}); give an object such as '{{\"path\": \"src/lib.rs\"}}'"))?,
                None => Value::Object(Default::default()),
            };
            if let Some(extra) = pos.next() {
                return Err(format!(
                    "`call` takes TOOL and ARGS_JSON only; unexpected `{extra}`"
                ));
            }
            Ok(Command::Call { common, tool, args })
        }
        "help" | "-h" | "--help" => Ok(Command::Help),
        other => Err(format!(
            "unknown command `{other}`; valid commands: serve, call, tools, doctor, repl"
        )),
    }
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
        Command::Help => {
            println!("{USAGE}");
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
            ]
            .join("\n")
        );
    }
}
