//! # agent-dap — the `debug` tool
//!
//! Owns the run's debug-session supervisor: at most one session per conversation, driven over
//! the Debug Adapter Protocol against real adapters (debugpy, lldb-dap, delve, dart).
//!
//! - [`attach`] registers `debug` (exec tier, not parallel-safe) when the run has a conversation
//!   id; without one it registers nothing.
//! - The model fills one flat object ([`DebugArgs`], `operation` naming the operation); it is
//!   parsed once into a [`DebugCommand`] holding exactly that operation's arguments, and `ops`
//!   runs it (a module per operation, but one for the moves and one for the five reads of a
//!   stopped debuggee).
//! - `launch` starts a program, a Python module (`python -m`, debugpy's `module`) or one test
//!   (`ops::launch_test`): a `.py` file's test under `python -m pytest -s FILE::NAME`, a Go
//!   package's in delve's test mode (`-test.run ^NAME$`), a Rust package's in the test binary
//!   `cargo test --no-run` builds (found by `--list`), run as `NAME --exact --nocapture` under
//!   lldb-dap; the result says what was built.
//! - Which adapter can start is decided at call time, by the intersection of a root marker and a
//!   binary (`adapters` says what is missing and how to install it); [`doctor`] reports the
//!   same. Each adapter is one file implementing one trait: detection, how it is started, its
//!   `launch` and `attach` arguments.
//! - The DAP client sits on `agent-rpc`'s connection (capped `Content-Length` framing, one reader
//!   task per adapter, responses matched by `request_seq`, end of stream failing every request):
//!   events applied in order, reverse requests answered (`runInTerminal` declined,
//!   `startDebugging` refused), a timeout on every request.
//! - Every request it sends and every event it reads is declared once in `protocol`, with lenient
//!   serde types for what real adapters send; a body of another shape is
//!   [`DapError::Malformed`], naming the command and the field, never a made-up default.
//! - Each operation's result is a value of its own type (`report`) implementing
//!   [`agent_tier::Report`]: the text a model reads and the structured content a client reads are
//!   rendered from it in one place.
//! - A stop is one answer: `launch`, `attach`, `continue`, `pause` and the steps wait (bounded)
//!   for the debuggee to stop or exit and return the stop snapshot — the reason (an exception's
//!   type and message, an exit's code and output tail), `file:line` with the source around it,
//!   the top frames and the top frame's locals. Uncaught exceptions stop by default.
//! - Breakpoints are kept per file (lines) and as one set of function names
//!   (`setFunctionBreakpoints`, where the adapter advertises it; else placed on the first line
//!   of the function's body at the one definition the run's language servers report — through
//!   the registry's `SymbolLocator`, never by calling another tool — and refused with the
//!   candidates when there are several), set again in every session; each call replaces its set.
//! - A debugpy debuggee runs with `TCP_NODELAY` on its sockets (a `sitecustomize` in a private
//!   scratch directory on its `PYTHONPATH`): a step takes milliseconds, not Nagle's ~88 ms.
//! - A session ends on `terminate`, when the debuggee terminates, when the adapter dies, or when
//!   its hard TTL expires; ending kills the adapter's and the debuggee's process groups.
//!
//! Never: speaks any protocol but DAP, keeps a session past its TTL, replaces a live session
//! silently, or leaves an adapter or debuggee process behind.

mod adapters;
mod args;
mod breakpoints;
mod error;
mod limits;
mod mask;
mod ops;
mod protocol;
mod report;
mod session;
mod state;
mod supervisor;
mod tool;
mod transport;

pub use adapters::AdapterId;
pub use args::{BreakpointOptions, DebugArgs, DebugCommand, Exceptions, LaunchTarget, Motion, Op};
pub use error::DapError;

use agent_tier::Registry;
use agent_tier::doctor::DoctorEntry;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the debug-session supervisor behaves. Plain data; [`Default`] is what the host uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DapConfig {
    /// Hard time to live of a session, from its launch: the adapter and the debuggee are killed
    /// when it expires. Default 30 minutes.
    pub ttl: Duration,
    /// How long `launch`, `continue`, `pause` and the steps wait for the debuggee to stop or
    /// exit before they return with state `running`. Default 10 seconds.
    pub run_wait: Duration,
    /// Timeout of each request to a live adapter. Default 15 seconds.
    pub request_timeout: Duration,
    /// Timeout of the start-up sequence (spawning, `initialize`, `launch`/`attach`,
    /// configuration), per step. Default 60 seconds.
    pub startup_timeout: Duration,
    /// Directories searched for adapter programs before `$PATH` (a sandbox's tool directory, or
    /// a test's scripted adapter). Default empty.
    pub extra_bin_dirs: Vec<PathBuf>,
    /// The conversation the run belongs to: `debug` is registered only with one (a debug
    /// session belongs to one conversation). Default none.
    pub conversation_id: Option<String>,
}

impl Default for DapConfig {
    fn default() -> Self {
        DapConfig {
            ttl: Duration::from_secs(30 * 60),
            run_wait: Duration::from_secs(10),
            request_timeout: Duration::from_secs(15),
            startup_timeout: Duration::from_secs(60),
            extra_bin_dirs: Vec::new(),
            conversation_id: None,
        }
    }
}

/// Attach the debug-session supervisor to this run and register `debug`.
///
/// The tool is registered only when the config names a conversation
/// ([`DapConfig::conversation_id`]): a session belongs to one conversation. Without one this
/// registers nothing and returns.
pub fn attach(registry: &Registry, config: DapConfig) {
    let run = registry.run();
    if config.conversation_id.is_none() {
        return;
    }
    registry.register(tool::DebugTool::new(
        registry,
        run.root.clone(),
        run.sandbox_prefix.clone(),
        config,
    ));
}

/// What adapters this family could start for the checkout at `root` (markers looked for at the
/// root itself).
pub fn doctor(root: &Path) -> Vec<DoctorEntry> {
    AdapterId::ALL
        .iter()
        .map(|id| adapters::detect(*id, root, root, &[]).doctor())
        .collect()
}
