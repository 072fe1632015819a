//! The command line, declared with `clap` (derive): each subcommand takes only its own flags,
//! `--help` shows examples, `--version`; an unknown flag is an error naming the valid ones. What
//! it parses to ([`Invocation`], [`Command`], [`Common`]) and how it is refused ([`UsageError`])
//! are defined here too. The library gets plain typed options ([`HostOptions`]): this module and
//! the binary's others are the only code that parses flags.

use agent_tools::tier::UnknownSurface;
use agent_tools::{Surface, Tier};
use agent_tools_cli::host::{Asking, HostOptions, ToolSelection};
use clap::{Args, Parser, Subcommand};
use serde_json::Value;
use std::path::PathBuf;

/// Why the command line was refused (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// What `clap` refused, as it renders it, followed by the valid options or commands.
    #[error("{0}")]
    Flags(String),
    /// `call`'s arguments are not JSON.
    #[error(
        "`ARGS_JSON` is not valid JSON ({0}); give an object such as '{{\"path\": \"src/lib.rs\"}}'"
    )]
    ArgsJson(serde_json::Error),
    /// No `--root`, and the current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// The worker's gate ([`Surface::ENV`]) names no surface.
    #[error(
        "`{var}` = `{value}` is not a surface ({source}); the host does not guess its gate",
        var = Surface::ENV
    )]
    Gate {
        /// The variable's value.
        value: String,
        /// Why it is no surface.
        source: UnknownSurface,
    },
    /// `--tools` or `--without` names no tool or family.
    #[error("{0}")]
    Tools(String),
    /// `--root` is not a directory.
    #[error("`--root` = `{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// `--root` cannot be resolved.
    #[error("`--root` = `{}`: {source}", path.display())]
    Root {
        /// The root given.
        path: PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
}

/// `--sandbox-prefix` is not a command line by shell rules.
#[derive(Debug, thiserror::Error)]
#[error("not a shell command line ({0})")]
struct NotACommandLine(shell_words::ParseError);

/// `--approval` names something that is no tier.
#[derive(Debug, thiserror::Error)]
#[error("unknown tier `{0}`; valid: a comma-separated list of read, write, exec, or none")]
struct UnknownTier(String);

/// Printed after a usage error.
pub const USAGE: &str =
    "run `agent-tools --help`, or `agent-tools SUBCOMMAND --help`, for the flags and examples";

/// The parsed command line: the command, and where the log goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub command: Command,
    /// `--log-file`: the log is appended there instead of written to stderr.
    pub log_file: Option<PathBuf>,
}

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
    /// `hook claude-code`: a client's hook, reporting its own edit to the running host.
    Hook(HookClient),
    /// `--help` or `--version`: the text to print.
    Help(String),
}

/// The client whose hook input `hook` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookClient {
    /// Claude Code's `PostToolUse` hook (after its `Edit`, `MultiEdit` or `Write`).
    ClaudeCode,
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
    /// `--ask-timeout`: how long a person has to answer (zero: no limit; `None`: the default).
    pub ask_timeout: Option<std::time::Duration>,
    /// `--astgrep-cache-mib`: the parse cache's bound in bytes (`None`: the default).
    pub astgrep_cache_bytes: Option<u64>,
    /// `--tools` / `--without`: the tools served (`None`: all).
    pub tools: Option<ToolSelection>,
    /// `--trust` (or `AGENT_TOOLS_TRUST=1`): the project at the root is trusted.
    pub trust: bool,
}

impl Common {
    /// How the library composes the run.
    pub fn host(&self) -> HostOptions {
        HostOptions {
            root: self.root.clone(),
            vibe: self.vibe,
            conversation_id: self.conversation.clone(),
            sandbox_prefix: self.sandbox_prefix.clone(),
            approval: self.approval.clone(),
            ask_timeout: self.ask_timeout,
            astgrep_cache_bytes: self.astgrep_cache_bytes,
            // The library sets the port for the command it runs (terminal card, elicitation).
            asking: Asking::Nobody,
            tools: self.tools.clone(),
            trust_project: self.trust,
        }
    }
}

const EXAMPLES: &str = "\
Examples:
  agent-tools serve --root ~/src/app                      # MCP over stdio (what a harness starts)
  agent-tools serve --listen 127.0.0.1:8765 --token-file ~/.agent-tools-token
  agent-tools tools --surface plan
  agent-tools call read '{\"path\": \"src/lib.rs\"}'
  agent-tools doctor --json
  agent-tools repl --root tests/examples/demo < tests/examples/demo.calls
  AGENT_TOOLS_LOG=info agent-tools serve --log-file /tmp/agent-tools.log

Logging: AGENT_TOOLS_LOG sets the level (EnvFilter syntax, e.g. `info` or `warn,agent_tier=debug`;
default `warn`); the log goes to stderr, or to --log-file.";

const SERVE_EXAMPLES: &str = "\
Examples:
  agent-tools serve --root . --surface plan
  agent-tools serve --sandbox-prefix \"docker exec -i box\" --approval write,exec
  agent-tools serve --without files   # a client with its own read, grep, glob, edit, write
  AGENT_TOOLS_TOKEN=s3cret agent-tools serve --listen 127.0.0.1:8765   # http://127.0.0.1:8765/mcp";

const CALL_EXAMPLES: &str = "\
Examples:
  agent-tools call read '{\"path\": \"README.md\", \"offset\": 40}'
  agent-tools call ast_grep '{\"pattern\": \"fn $NAME($$$A)\", \"language\": \"rust\"}' --json

Exit status: 0 success, 1 the tool reported an error, 2 usage error.";

#[derive(Parser, Debug)]
#[command(
    name = "agent-tools",
    version,
    about = "The built-in tools of a coding-agent run: a per-run MCP tool host and its terminal commands",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Sub,
    /// Append the log to this file instead of stderr (level: AGENT_TOOLS_LOG, default warn)
    #[arg(long, value_name = "PATH", global = true)]
    log_file: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Serve the run's tools over MCP: stdio, or Streamable HTTP with --listen
    #[command(after_help = SERVE_EXAMPLES)]
    Serve {
        #[command(flatten)]
        run: RunArgs,
        /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio (a bare port binds
        /// loopback); every request needs `Authorization: Bearer TOKEN`
        #[arg(long, value_name = "ADDR", value_parser = agent_tools_cli::http::parse_listen)]
        listen: Option<std::net::SocketAddr>,
        /// File holding the bearer token (else AGENT_TOOLS_TOKEN; else one is generated, written
        /// 0600, and its path printed on stderr)
        #[arg(long, value_name = "PATH", requires = "listen")]
        token_file: Option<PathBuf>,
        /// Serve only these tools or families, comma-separated (files, lsp, astgrep, dap,
        /// kernel, ask, vibe, or a tool's name); default: all
        #[arg(long, value_name = "NAMES", value_delimiter = ',')]
        tools: Vec<String>,
        /// Serve every tool but these tools or families, comma-separated (`--without files`
        /// for a client that has its own read, grep, glob, edit and write)
        #[arg(long, value_name = "NAMES", value_delimiter = ',')]
        without: Vec<String>,
    },
    /// Call one tool and print its result
    #[command(after_help = CALL_EXAMPLES)]
    Call {
        /// The tool's name (see `agent-tools tools`)
        tool: String,
        /// Its arguments, a JSON object (default `{}`)
        args_json: Option<String>,
        #[command(flatten)]
        run: RunArgs,
        /// Print the MCP result as JSON (images included)
        #[arg(long)]
        json: bool,
    },
    /// List the tools a surface sees
    Tools {
        #[command(flatten)]
        root: RootArg,
        #[command(flatten)]
        surface: SurfaceArg,
        /// Print the tools as MCP lists them, as JSON
        #[arg(long)]
        json: bool,
        /// Include the background-worker tools
        #[arg(long)]
        vibe: bool,
    },
    /// Say which language servers, debug adapters and kernels this checkout can use
    Doctor {
        #[command(flatten)]
        root: RootArg,
        /// Print the entries as JSON
        #[arg(long)]
        json: bool,
    },
    /// An interactive console: `TOOL {json}` per line
    Repl {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run as a client's hook: report the file its own edit tool just changed to the host that
    /// client started, and print the new problems for the model (Claude Code: PostToolUse)
    #[command(after_help = HOOK_EXAMPLES)]
    Hook {
        /// Whose hook input is on stdin
        #[arg(value_enum)]
        client: HookClient,
    },
}

const HOOK_EXAMPLES: &str = "Examples:
  In .claude/settings.json, after Claude Code's own Edit, MultiEdit or Write:
    {\"hooks\": {\"PostToolUse\": [{\"matcher\": \"Edit|MultiEdit|Write\",
      \"hooks\": [{\"type\": \"command\", \"command\": \"agent-tools hook claude-code\", \"timeout\": 120}]}]}}";

#[derive(Args, Debug)]
struct RootArg {
    /// The workspace root the tools are confined to (default: the current directory)
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SurfaceArg {
    /// Which tiers the caller sees: full (read, write, exec), plan (read), read-only (read)
    #[arg(long, value_name = "SURFACE", default_value = "full", value_parser = parse_surface)]
    surface: Surface,
}

/// How one run is set up (serve, call, repl).
#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    root: RootArg,
    #[command(flatten)]
    surface: SurfaceArg,
    /// Attach the background workers (vibe_* tools)
    #[arg(long)]
    vibe: bool,
    /// The conversation this run belongs to (debug sessions are keyed by it; default: one per
    /// process)
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Start kernels and workers through this command, split with shell rules
    /// (e.g. "docker exec -i box")
    #[arg(long, value_name = "CMD", value_parser = parse_prefix)]
    sandbox_prefix: Option<Words>,
    /// Calls of these tiers ask the operator first (terminal card, or MCP elicitation under
    /// serve); with nobody attached they fail closed: a comma-separated list of read, write,
    /// exec, or none
    #[arg(long, value_name = "TIERS", value_parser = parse_tiers)]
    approval: Option<Tiers>,
    /// How long ask_user and approval prompts wait for an answer, in seconds (default 600;
    /// 0: no limit)
    #[arg(long, value_name = "SECS")]
    ask_timeout: Option<u64>,
    /// Memory for ast_grep's parse cache of this run, in MiB: parsed trees (about 32 bytes per
    /// byte of source) kept so later searches skip re-parsing (default 96, `call` 0; 0: no
    /// trees, no token index and no memo of finished searches)
    #[arg(long, value_name = "MIB")]
    astgrep_cache_mib: Option<u64>,
    /// Trust the project at --root: its language servers run uncontained and may use its own
    /// binaries and config (for a harness that already asked the person, as Claude Code, Codex
    /// and Gemini CLI do before opening a folder). Also AGENT_TOOLS_TRUST=1
    #[arg(long, env = "AGENT_TOOLS_TRUST", value_parser = clap::builder::BoolishValueParser::new(), num_args = 0, default_missing_value = "true")]
    trust: bool,
}

fn parse_surface(text: &str) -> Result<Surface, UnknownSurface> {
    text.parse()
}

/// A command line split with shell rules (one value, not a repeated flag).
#[derive(Debug, Clone)]
struct Words(Vec<String>);

/// A list of tiers (one value, not a repeated flag).
#[derive(Debug, Clone)]
struct Tiers(Vec<Tier>);

fn parse_prefix(text: &str) -> Result<Words, NotACommandLine> {
    shell_words::split(text).map(Words).map_err(NotACommandLine)
}

/// `write,exec` → tiers; `none` → no tier.
fn parse_tiers(text: &str) -> Result<Tiers, UnknownTier> {
    if text == "none" {
        return Ok(Tiers(Vec::new()));
    }
    text.split(',')
        .map(|t| match t.trim() {
            "read" => Ok(Tier::Read),
            "write" => Ok(Tier::Write),
            "exec" => Ok(Tier::Exec),
            other => Err(UnknownTier(other.to_string())),
        })
        .collect::<Result<_, _>>()
        .map(Tiers)
}

fn common(root: RootArg, surface: Surface) -> Common {
    Common {
        root: root.root.unwrap_or_default(),
        surface,
        json: false,
        vibe: false,
        conversation: None,
        sandbox_prefix: Vec::new(),
        approval: Vec::new(),
        listen: None,
        token_file: None,
        ask_timeout: None,
        astgrep_cache_bytes: None,
        tools: None,
        trust: false,
    }
}

fn run_common(run: RunArgs) -> Common {
    Common {
        vibe: run.vibe,
        conversation: run.conversation,
        sandbox_prefix: run.sandbox_prefix.map(|w| w.0).unwrap_or_default(),
        approval: run.approval.map(|t| t.0).unwrap_or_default(),
        ask_timeout: run.ask_timeout.map(std::time::Duration::from_secs),
        astgrep_cache_bytes: run.astgrep_cache_mib.map(|m| m.saturating_mul(1024 * 1024)),
        trust: run.trust,
        ..common(run.root, run.surface.surface)
    }
}

/// clap's message without its closing hint (the caller prints where help is).
fn rendered(e: &clap::Error) -> String {
    let text = e.to_string();
    text.lines()
        .filter(|l| !l.starts_with("For more information, try"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// `valid options for `tools`: --root, --surface, …` for the subcommand named in `args`.
fn valid_options(args: &[String]) -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    let sub = args.first().and_then(|name| cli.find_subcommand(name));
    let (name, cmd) = match sub {
        Some(sub) => (sub.get_name().to_string(), sub),
        None => ("agent-tools".to_string(), &cli),
    };
    let globals = cli.get_arguments().filter(|a| a.is_global_set());
    let own = cmd.get_arguments().filter(|a| !a.is_global_set());
    let flags: Vec<String> = own
        .chain(globals)
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    format!("valid options for `{name}`: {}, --help", flags.join(", "))
}

/// Parse the arguments after the program name. `Ok(Command::Help(text))` for `--help` and
/// `--version`; `Err` is the usage error, already rendered.
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let argv = std::iter::once("agent-tools".to_string()).chain(args.iter().cloned());
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Ok(Invocation {
                    command: Command::Help(e.to_string()),
                    log_file: None,
                }),
                ErrorKind::UnknownArgument => Err(UsageError::Flags(format!(
                    "{}\n{}",
                    rendered(&e),
                    valid_options(args)
                ))),
                ErrorKind::InvalidSubcommand => {
                    use clap::CommandFactory;
                    let names: Vec<String> = Cli::command()
                        .get_subcommands()
                        .map(|c| c.get_name().to_string())
                        .collect();
                    Err(UsageError::Flags(format!(
                        "{}\nvalid commands: {}",
                        rendered(&e),
                        names.join(", ")
                    )))
                }
                _ => Err(UsageError::Flags(rendered(&e))),
            };
        }
    };
    let mut cmd = match cli.command {
        Sub::Serve {
            run,
            listen,
            token_file,
            tools,
            without,
        } => Command::Serve(Common {
            listen,
            token_file,
            tools: ToolSelection::new(&tools, &without, &agent_tools_cli::host::catalog())
                .map_err(UsageError::Tools)?,
            ..run_common(run)
        }),
        Sub::Call {
            tool,
            args_json,
            run,
            json,
        } => {
            let args = match args_json {
                Some(text) => serde_json::from_str(&text).map_err(UsageError::ArgsJson)?,
                None => Value::Object(Default::default()),
            };
            let common = run_common(run);
            Command::Call {
                common: Common {
                    json,
                    // A one-shot call never searches again: it keeps no parse cache unless
                    // asked to (issue 26).
                    astgrep_cache_bytes: common.astgrep_cache_bytes.or(Some(0)),
                    ..common
                },
                tool,
                args,
            }
        }
        Sub::Tools {
            root,
            surface,
            json,
            vibe,
        } => Command::Tools(Common {
            json,
            vibe,
            ..common(root, surface.surface)
        }),
        Sub::Doctor { root, json } => Command::Doctor(Common {
            json,
            ..common(root, Surface::Full)
        }),
        Sub::Repl { run } => Command::Repl(run_common(run)),
        Sub::Hook { client } => Command::Hook(client),
    };
    let c = match &mut cmd {
        Command::Serve(c) | Command::Tools(c) | Command::Doctor(c) | Command::Repl(c) => Some(c),
        Command::Call { common, .. } => Some(common),
        Command::Help(_) | Command::Hook(_) => None,
    };
    if let Some(c) = c {
        finish(c)?;
    }
    Ok(Invocation {
        command: cmd,
        log_file: cli.log_file,
    })
}

/// The root resolved, and the surface narrowed by the worker's gate.
fn finish(common: &mut Common) -> Result<(), UsageError> {
    if common.root.as_os_str().is_empty() {
        common.root = std::env::current_dir().map_err(UsageError::CurrentDir)?;
    }
    // A host started inside a worker keeps the gate of the call that spawned the worker: the
    // variable can only narrow `--surface`, never widen it; an unreadable value refuses to start.
    if let Some(gate) = std::env::var_os(Surface::ENV) {
        let text = gate.to_string_lossy();
        let gate: Surface = text.parse().map_err(|source| UsageError::Gate {
            value: text.to_string(),
            source,
        })?;
        common.surface = common.surface.narrowest(gate);
    }
    if !common.root.is_dir() {
        return Err(UsageError::NotADirectory(common.root.clone()));
    }
    common.root = common
        .root
        .canonicalize()
        .map_err(|source| UsageError::Root {
            path: common.root.clone(),
            source,
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Command {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args).unwrap().command
    }

    fn parse_err(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&args).unwrap_err().to_string()
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

    #[test]
    fn ask_timeout_is_seconds_and_zero_is_no_limit() {
        use std::time::Duration;
        let timeout = |args: &[&str]| match parsed(args) {
            Command::Serve(c) | Command::Repl(c) => c.host().ask_timeout,
            Command::Call { common, .. } => common.host().ask_timeout,
            other => panic!("{other:?}"),
        };
        assert_eq!(timeout(&["serve"]), None);
        assert_eq!(
            timeout(&["serve", "--ask-timeout", "30"]),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            timeout(&["repl", "--ask-timeout", "0"]),
            Some(Duration::ZERO)
        );
        assert_eq!(
            timeout(&["call", "read", "--ask-timeout", "5"]),
            Some(Duration::from_secs(5))
        );
        assert!(parse_err(&["serve", "--ask-timeout", "-1"]).contains("--ask-timeout"));
    }

    #[test]
    fn astgrep_cache_is_mebibytes_and_zero_turns_it_off() {
        let cache = |args: &[&str]| match parsed(args) {
            Command::Serve(c) | Command::Repl(c) => c.host().astgrep_cache_bytes,
            Command::Call { common, .. } => common.host().astgrep_cache_bytes,
            other => panic!("{other:?}"),
        };
        assert_eq!(cache(&["serve"]), None);
        assert_eq!(
            cache(&["serve", "--astgrep-cache-mib", "64"]),
            Some(64 << 20)
        );
        assert_eq!(cache(&["repl", "--astgrep-cache-mib", "0"]), Some(0));
        // A one-shot call keeps none unless asked to (issue 26).
        assert_eq!(cache(&["call", "ast_grep"]), Some(0));
        assert_eq!(
            cache(&["call", "ast_grep", "--astgrep-cache-mib", "8"]),
            Some(8 << 20)
        );
    }

    #[test]
    fn the_log_file_is_global() {
        let args: Vec<String> = ["doctor", "--log-file", "/tmp/x.log"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let inv = parse(&args).unwrap();
        assert_eq!(inv.log_file, Some(PathBuf::from("/tmp/x.log")));
        assert!(matches!(inv.command, Command::Doctor(_)));
    }

    #[test]
    fn each_subcommand_its_own_flags_and_shell_rules_for_the_prefix() {
        let Command::Serve(c) = parsed(&[
            "serve",
            "--sandbox-prefix",
            "docker exec -i 'my box' --env A=\"x y\"",
            "--approval",
            "write,exec",
        ]) else {
            panic!("not serve")
        };
        assert_eq!(
            c.sandbox_prefix,
            ["docker", "exec", "-i", "my box", "--env", "A=x y"]
        );
        assert_eq!(c.approval, [Tier::Write, Tier::Exec]);
        let refused = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            parse(&args).unwrap_err().to_string()
        };
        assert!(refused(&["tools", "--listen", "8080"]).contains("valid options for `tools`"));
        assert!(refused(&["doctor", "--surface", "plan"]).contains("valid options for `doctor`"));
        assert!(refused(&["call", "read", "--token-file", "t"]).contains("--token-file"));
        assert!(
            matches!(parsed(&["--version"]), Command::Help(v) if v.contains(env!("CARGO_PKG_VERSION")))
        );
        assert!(
            matches!(parsed(&["serve", "--help"]), Command::Help(h) if h.contains("Examples:"))
        );
    }
}
