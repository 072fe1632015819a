//! Composing one run: the registry, the host's file tools, every family compiled in (one list,
//! [`FAMILIES`]), less what `serve --tools`/`--without` leave out ([`ToolSelection`]), the way
//! `ask_user` reaches a person, and the run served over MCP ([`serve`]).

mod families;
mod selection;

pub use families::{FAMILIES, Family};
pub use selection::{ToolSelection, catalog};

use agent_tools::tier::doctor::DoctorEntry;
use agent_tools::{Registry, RunInfo, Surface};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// How the host was asked to set up the run.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// The workspace root.
    pub root: PathBuf,
    /// Attach the background workers (`vibe_*` tools).
    pub vibe: bool,
    /// The conversation this run belongs to: `None` one per process ([`HostOptions::conversation`]).
    pub conversation_id: Option<String>,
    /// A command prefix that starts kernels and workers in a sandbox; empty: on the host.
    pub sandbox_prefix: Vec<String>,
    /// The tiers whose calls need the operator's approval.
    pub approval: Vec<agent_tools::Tier>,
    /// How long `ask_user` and approval prompts wait for a person: `None` the default (10
    /// minutes), zero no limit.
    pub ask_timeout: Option<std::time::Duration>,
    /// The bound of `ast_grep`'s parse cache in bytes: `None` the default, zero off.
    pub astgrep_cache_bytes: Option<u64>,
    /// How `ask_user` and approvals reach a person. [`terminal_registry`] and [`serve`] set it
    /// for their port.
    pub asking: Asking,
    /// The tools served (`serve --tools` / `--without`): `None` every tool attached.
    pub tools: Option<ToolSelection>,
    /// The project at the root is trusted (`--trust`): its language servers run uncontained.
    pub trust_project: bool,
}

impl HostOptions {
    /// The run's conversation: the one asked for, else one per process (`run-<pid>`). `debug`
    /// sessions and `ask_user` cards belong to it.
    pub fn conversation(&self) -> String {
        self.conversation_id
            .clone()
            .unwrap_or_else(|| format!("run-{}", std::process::id()))
    }
}

/// How `ask_user` and approvals reach a person: the port the `ask` family is attached with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Asking {
    /// Nobody: `ask_user` is not attached, and approvals fail closed (no approver).
    #[default]
    Nobody,
    /// The terminal card (`call`, `tools`, `repl`); it fails closed when stdin is not a TTY.
    Terminal,
    /// MCP elicitation, to the client of the session whose call asks (`serve`).
    Elicitation,
}

/// Which families this binary was built with.
pub fn families() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.feature()).collect()
}

/// A fresh registry for one run with the file tools and every family compiled in attached, as
/// `opts` says (`ask` through [`HostOptions::asking`]).
pub fn build(opts: &HostOptions) -> Registry {
    let registry = Registry::new(RunInfo {
        root: opts.root.clone(),
        sandbox_prefix: opts.sandbox_prefix.clone(),
    });
    registry.set_policy(agent_tools::tier::ApprovalPolicy::tiers(
        opts.approval.iter().copied(),
    ));
    attach_all(&registry, opts);
    if let Some(selection) = &opts.tools {
        selection.apply(&registry);
    }
    registry
}

/// Attach the file tools and every family compiled in, as `opts` says; the tools each
/// registered, by family (`files` first).
fn attach_all(registry: &Registry, opts: &HostOptions) -> Vec<(String, Vec<String>)> {
    let added = |before: &[String]| -> Vec<String> {
        registry
            .names()
            .into_iter()
            .filter(|n| !before.contains(n))
            .collect()
    };
    let mut out = Vec::new();
    let before = registry.names();
    agent_tools::files::attach(registry);
    out.push(("files".to_string(), added(&before)));
    for family in FAMILIES {
        let before = registry.names();
        family.attach(registry, opts);
        out.push((family.feature().to_string(), added(&before)));
    }
    out
}

/// The registry for terminal commands (`call`, `tools`, `repl`): `ask_user` and approvals go
/// through the terminal card.
pub fn terminal_registry(opts: &HostOptions) -> Registry {
    build(&HostOptions {
        asking: Asking::Terminal,
        ..opts.clone()
    })
}

/// The registry `serve` serves: `ask_user` and approvals go as MCP elicitation to the client of
/// the session whose call caused them (the sessions are the requesters the host passes with each
/// call; the registry keeps no session table).
fn served_registry(opts: &HostOptions) -> Registry {
    build(&HostOptions {
        asking: Asking::Elicitation,
        ..opts.clone()
    })
}

/// Which MCP transport `serve` speaks.
#[derive(Debug, Clone, Default)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout (what a harness starts).
    #[default]
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`, gated by a bearer token.
    Http {
        /// The address to listen on.
        addr: SocketAddr,
        /// Where the token is read from (else `AGENT_TOOLS_TOKEN`, else one is generated).
        token_file: Option<PathBuf>,
    },
}

/// Serve one run's tools on `surface` over `transport` until the client goes away (stdio) or the
/// listener fails (HTTP).
pub async fn serve(
    opts: &HostOptions,
    surface: Surface,
    transport: Transport,
) -> anyhow::Result<()> {
    tracing::info!(
        root = %opts.root.display(),
        %surface,
        families = %families().join(","),
        transport = ?transport,
        "serving"
    );
    let res = match transport {
        Transport::Stdio => crate::mcp::serve(surface, served_registry(opts)).await,
        Transport::Http { addr, token_file } => {
            crate::http::serve(surface, addr, token_file, || served_registry(opts)).await
        }
    };
    match &res {
        Ok(()) => tracing::info!("serve ended: the client went away"),
        Err(e) => tracing::error!(error = %e, "serve failed"),
    }
    res
}

/// Every program the families know, for this checkout.
pub fn doctor(root: &Path) -> Vec<DoctorEntry> {
    FAMILIES.iter().flat_map(|f| f.doctor(root)).collect()
}

/// `doctor` as text.
pub fn doctor_text(root: &Path) -> String {
    let entries = doctor(root);
    let mut out = format!(
        "agent-tools {} at {}\nfamilies compiled in: {}\n",
        env!("CARGO_PKG_VERSION"),
        root.display(),
        families().join(", ")
    );
    if entries.is_empty() {
        out.push_str("no language server, debug adapter or kernel family is compiled in\n");
    }
    for e in &entries {
        out.push_str(&e.summary());
        out.push('\n');
    }
    for note in FAMILIES.iter().flat_map(|f| f.notes(root)) {
        out.push_str(&note);
        out.push('\n');
    }
    out.push_str(&agent_proc::orphan_hold());
    out.push('\n');
    out
}
