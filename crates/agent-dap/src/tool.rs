//! The `debug` tool: its registration data (name, tier, the description the model reads) and
//! its call — parse the flat arguments once, run the command on the conversation's supervisor.

use crate::DapConfig;
use crate::args::{DebugArgs, DebugCommand};
use crate::ops;
use crate::ops::limits::{MAX_CHILDREN, MAX_FRAMES, MAX_VALUE, STOP_FRAMES};
use crate::supervisor::Supervisor;
use agent_tier::{BoxError, CallContext, Tier, Tool, ToolOutput};
use std::path::PathBuf;
use std::time::Duration;

/// The `debug` tool and its per-conversation supervisor.
pub(crate) struct DebugTool {
    sup: Supervisor,
}

impl DebugTool {
    pub fn new(
        root: PathBuf,
        conversation: String,
        prefix: Vec<String>,
        config: DapConfig,
    ) -> Self {
        DebugTool {
            sup: Supervisor::new(root, conversation, prefix, config),
        }
    }
}

impl Drop for DebugTool {
    fn drop(&mut self) {
        // The registry is going away: kill whatever the session still runs. Dropping the
        // session's guards kills the process groups even without a runtime.
        if let Ok(mut s) = self.sup.session.try_lock() {
            s.take();
        }
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
        let cfg = &self.sup.config;
        format!(
            "Debugger (DAP), one session per conversation ({} max). `op`: adapters \
             (usable here); breakpoints (REPLACES the file's or function set; allowed before launch); \
             launch `program` or attach to 127.0.0.1:`port`; continue, pause, step_* \
             wait up to {} for a stop (else running: see status) and return \
             it: reason (exception message; exit code, output tail), file:line with source, \
             {STOP_FRAMES} frames, top frame's locals. Deeper: threads; stack ({MAX_FRAMES} \
             frames); scopes; variables ({MAX_CHILDREN} children, \
             values cut at {MAX_VALUE} chars); evaluate (default: top frame). Ids last until \
             the program moves. output: new stdout/stderr. terminate ends adapter and debuggee \
             (an attached one runs on).",
            spoken(cfg.ttl),
            spoken(cfg.run_wait),
        )
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn resource_key(&self) -> String {
        format!("debug:{}", self.sup.conversation)
    }

    async fn call(&self, args: DebugArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        self.sup.locator.get_or_init(|| cx.registry().locator());
        let command = DebugCommand::parse(args)?;
        Ok(ops::run(&self.sup, command).await?)
    }
}
