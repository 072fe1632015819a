//! The `debug` tool: its registration data (name, tier, the description the model reads) and
//! its call — parse the flat arguments once, run the command on the conversation's supervisor.

use crate::DapConfig;
use crate::args::{DebugArgs, DebugCommand};
use crate::limits::{MAX_CHILDREN, MAX_FRAMES, MAX_VALUE, STOP_FRAMES};
use crate::ops;
use crate::supervisor::Supervisor;
use agent_tier::locate::SymbolLocator;
use agent_tier::{
    BoxError, CallContext, Registry, ResourceKey, RoomId, Rooms, Tier, Tool, ToolOutput,
};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The `debug` tool and a supervisor per room: each conversation has its own debug session
/// and breakpoints, ended with its room.
pub(crate) struct DebugTool {
    root: PathBuf,
    prefix: Vec<String>,
    config: DapConfig,
    rooms: Arc<Rooms<Supervisor>>,
    /// The run's symbol locator (another family's service), wired once when the registry is
    /// sealed.
    locator: Arc<OnceLock<Option<Arc<dyn SymbolLocator>>>>,
}

impl DebugTool {
    pub fn new(registry: &Registry, root: PathBuf, prefix: Vec<String>, config: DapConfig) -> Self {
        let locator = Arc::new(OnceLock::new());
        registry.on_seal({
            let locator = locator.clone();
            move |r| {
                let _ = locator.set(r.locator());
            }
        });
        DebugTool {
            root,
            prefix,
            config,
            rooms: Rooms::attach(registry),
            locator,
        }
    }

    /// The supervisor of the call's room, made on its first use.
    fn supervisor(&self, room: &RoomId) -> Arc<Supervisor> {
        self.rooms.get_or_init(room, || {
            Supervisor::new(
                self.root.clone(),
                self.prefix.clone(),
                self.config.clone(),
                self.locator.get().cloned().flatten(),
            )
        })
    }
}

/// "30 minutes", "10 seconds".
fn spoken(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 60 && s.is_multiple_of(60) => format!("{} minutes", s / 60),
        s => format!("{s} seconds"),
    }
}

impl Tool for DebugTool {
    type Args = DebugArgs;

    fn name(&self) -> &str {
        "debug"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> String {
        let cfg = &self.config;
        format!(
            "Debugger (DAP), one session per conversation ({} max). `operation`: adapters; \
             breakpoints (REPLACES the file's or function set; allowed before launch); \
             launch `program`, Python `module` or a `test` (pytest, go test, cargo test), or attach \
             to 127.0.0.1:`port`; continue, pause, step_* \
             wait up to {} for a stop (else running: see status) and return \
             it: reason (exception message; exit code, output tail), file:line with source, \
             {STOP_FRAMES} frames, top frame's locals. Deeper: threads; stack ({MAX_FRAMES} \
             frames); scopes; variables ({MAX_CHILDREN} children, \
             values cut at {MAX_VALUE} chars); evaluate (default: top frame). Ids last until \
             the program moves. output: new stdout/stderr. terminate ends adapter and \
             debuggee; restart runs the last launch again. Values that look like secrets are \
             masked (`reveal`: true shows them).",
            spoken(cfg.ttl),
            spoken(cfg.run_wait),
        )
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn resource_key(&self) -> ResourceKey {
        ResourceKey::named("debug")
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: DebugArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let sup = self.supervisor(&cx.room());
        let reveal = args.reveal;
        if let Some(env) = &args.env {
            crate::mask::remember_env(env);
        }
        let command = DebugCommand::parse(args)?;
        Ok(crate::mask::scoped(reveal, ops::run(&sup, command)).await?)
    }
}
