//! # agent-vibe — the five `vibe_*` tools that direct background workers
//!
//! Owns the run's worker rosters (one per conversation) and the backend that runs workers:
//!
//! - [`VibeBackend`]: what the harness supplies to run one worker run to its end (dropping the
//!   run stops the worker);
//! - [`CommandBackend`]: the shipped backend — a configured program per tier (`fast`, `good`),
//!   started through `agent_proc` (own process group, run tag, swept when it ends) with the
//!   brief on stdin and `VIBE_LABEL`, `VIBE_TIER`, `VIBE_WORKER_ID` in its environment; its
//!   stdout is the result;
//! - the roster, one per room (conversation): every worker it spawned, with its state (running,
//!   done, failed, timed_out, killed), elapsed time, when it last wrote output, and last result, kept for the whole run
//!   (a finished worker's result can be read again by `vibe_wait` any number of times).
//!
//! Each worker has a time budget per run (`timeout_s` on spawn, default 30 minutes): over it,
//! the run and everything it started are ended and the worker is `timed_out`. `vibe_list` flags
//! a running worker as stalled after a silence (default 5 minutes).
//!
//! `vibe_spawn` returns at once; `vibe_send` appends to the brief and runs the worker again
//! (stopping a current run); `vibe_wait` returns the current state when its timeout passes
//! (not an error); `vibe_kill` kills the worker's process group; `vibe_list` shows them all.
//! All five are read tier, registered only while vibe mode is on.
//!
//! Never: gates a worker's own tools (that gate belongs to the workers' tools), or drops a
//! finished worker's result before someone reads it.

mod backend;
mod error;
mod report;
mod roster;
mod tools;

pub use backend::{
    BoxFuture, CommandBackend, DEFAULT_MAX_OUTPUT, Heartbeat, VibeBackend, WorkerCommand,
    WorkerJob, WorkerTier,
};
pub use error::{RunError, Unavailable, VibeError};
pub use report::bounded;
pub use roster::{Roster, WorkerState, WorkerView};
pub use tools::{KillArgs, ListArgs, SendArgs, SpawnArgs, WaitArgs};

use agent_tier::Registry;
use std::sync::Arc;
use std::time::Duration;

/// The environment variable read for the `fast` tier's program when the config has none.
pub const FAST_ENV: &str = "AGENT_TOOLS_VIBE_FAST";
/// The environment variable read for the `good` tier's program when the config has none.
pub const GOOD_ENV: &str = "AGENT_TOOLS_VIBE_GOOD";

/// How the vibe roster runs workers.
#[derive(Clone)]
pub struct VibeConfig {
    /// The `fast` tier's worker program. `None`: the `AGENT_TOOLS_VIBE_FAST` environment
    /// variable (a command line split on whitespace), if set.
    pub fast: Option<WorkerCommand>,
    /// The `good` tier's worker program. `None`: `AGENT_TOOLS_VIBE_GOOD`, if set.
    pub good: Option<WorkerCommand>,
    /// A backend supplied by the harness; when set it replaces the command backend.
    pub backend: Option<Arc<dyn VibeBackend>>,
    /// A worker's time budget per run when `vibe_spawn` gives no `timeout_s` (default 30
    /// minutes); over it the run is stopped and the worker is `timed_out`.
    pub default_budget: Duration,
    /// The longest budget `timeout_s` may ask for (default 1 hour).
    pub max_run: Duration,
    /// A running worker silent this long is listed as stalled (default 5 minutes).
    pub stall_after: Duration,
    /// How long `vibe_wait` waits when no `timeout_s` is given (default 300 s).
    pub default_wait: Duration,
    /// The longest `vibe_wait` may wait (default 3600 s).
    pub max_wait: Duration,
    /// How many characters of each last result `vibe_list` shows (default 200).
    pub list_result_chars: usize,
    /// How many bytes of a command worker's stdout are kept (default 1 MiB).
    pub max_output_bytes: usize,
    /// Whether vibe mode is on: the `vibe_*` tools are registered only then (default off).
    pub vibe_mode: bool,
}

impl Default for VibeConfig {
    fn default() -> Self {
        VibeConfig {
            fast: None,
            good: None,
            backend: None,
            default_budget: Duration::from_secs(1800),
            max_run: Duration::from_secs(3600),
            stall_after: Duration::from_secs(300),
            default_wait: Duration::from_secs(300),
            max_wait: Duration::from_secs(3600),
            list_result_chars: 200,
            max_output_bytes: DEFAULT_MAX_OUTPUT,
            vibe_mode: false,
        }
    }
}

impl std::fmt::Debug for VibeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VibeConfig")
            .field("fast", &self.fast)
            .field("good", &self.good)
            .field(
                "backend",
                &self.backend.as_ref().map(|b| b.name().to_string()),
            )
            .field("vibe_mode", &self.vibe_mode)
            .field("default_budget", &self.default_budget)
            .field("max_run", &self.max_run)
            .field("stall_after", &self.stall_after)
            .field("default_wait", &self.default_wait)
            .field("max_wait", &self.max_wait)
            .field("list_result_chars", &self.list_result_chars)
            .field("max_output_bytes", &self.max_output_bytes)
            .finish()
    }
}

fn from_env(name: &str) -> Option<WorkerCommand> {
    std::env::var(name)
        .ok()
        .and_then(|v| WorkerCommand::parse(&v))
}

/// Attach the vibe roster to this run and register the five `vibe_*` tools — only while vibe
/// mode is on ([`VibeConfig::vibe_mode`]). Workers run through `config.backend`, or else a
/// [`CommandBackend`] over `config.fast` / `config.good` (or their environment variables), in
/// the run's root and through its sandbox prefix.
pub fn attach(registry: &Registry, config: VibeConfig) {
    let run = registry.run();
    if !config.vibe_mode {
        return;
    }
    let backend: Arc<dyn VibeBackend> = match config.backend {
        Some(b) => b,
        None => Arc::new(
            CommandBackend::new(
                config.fast.or_else(|| from_env(FAST_ENV)),
                config.good.or_else(|| from_env(GOOD_ENV)),
                &run.root,
            )
            .with_prefix(run.sandbox_prefix.clone())
            .with_max_output(config.max_output_bytes),
        ),
    };
    let roster = Arc::new(tools::Rosters {
        backend,
        max_run: config.max_run,
        rooms: agent_tier::Rooms::attach(registry),
    });
    let limits = tools::Limits {
        default_wait: config.default_wait.min(config.max_wait),
        max_wait: config.max_wait,
        list_result_chars: config.list_result_chars.max(20),
        default_budget: config.default_budget.min(config.max_run),
        max_run: config.max_run,
        stall_after: config.stall_after,
    };
    registry.register(tools::Spawn(roster.clone(), limits));
    registry.register(tools::Send(roster.clone()));
    registry.register(tools::Wait(roster.clone(), limits));
    registry.register(tools::Kill(roster.clone()));
    registry.register(tools::List(roster, limits));
}

/// What `agent-tools doctor` shows for vibe mode: the worker program of each tier, as the
/// environment configures it (`AGENT_TOOLS_VIBE_FAST`, `AGENT_TOOLS_VIBE_GOOD`), and whether it
/// resolves (on `PATH`, or relative to `root`).
pub fn doctor(root: &std::path::Path) -> Vec<agent_tier::doctor::DoctorEntry> {
    [(WorkerTier::Fast, FAST_ENV), (WorkerTier::Good, GOOD_ENV)]
        .into_iter()
        .map(|(tier, env)| {
            let cmd = from_env(env);
            let binary = cmd.as_ref().and_then(|c| {
                let local = root.join(&c.program);
                if local.is_file() {
                    Some(local)
                } else {
                    agent_tier::process::resolve_binary(root, &[], &[c.program.as_str()])
                }
            });
            agent_tier::doctor::DoctorEntry {
                family: "vibe".into(),
                id: tier.as_str().into(),
                marker: None,
                markers: Vec::new(),
                binary,
                install: match cmd {
                    Some(c) => format!("install `{}` (from {env})", c.program),
                    None => format!("set {env} to the {tier} tier's worker command"),
                },
            }
        })
        .collect()
}
