//! The `debug` tool: its arguments, the per-conversation supervisor, and each operation's
//! rendering.

use crate::adapters::{self, AdapterId, Detected};
use crate::session::{Run, Session, State, human, lock};
use crate::{DapConfig, DapError};
use agent_tier::workspace::{confine, confine_existing, display_path};
use agent_tier::{BoxError, CallContext, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Frames returned by `stack`.
const MAX_FRAMES: usize = 30;
/// Children returned by `variables`.
const MAX_CHILDREN: usize = 50;
/// Characters of one value.
const MAX_VALUE: usize = 400;
/// Bytes of output returned by one `output` call.
const MAX_OUTPUT: usize = 8 * 1024;

/// The operation to perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Op {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session is running, and where it is stopped.
    Status,
    /// Set a file's breakpoints (`file`, `lines`); empty `lines` clears them; allowed before launch.
    Breakpoints,
    /// Start `program` (with `args`, optional `cwd`, `env`), stopping at your breakpoints.
    Launch,
    /// Attach to a debuggee already listening on 127.0.0.1:`port`.
    Attach,
    /// Run to the next stop (optional `thread_id`).
    Continue,
    /// Stop the debuggee where it is (optional `thread_id`).
    Pause,
    /// Step over one line (optional `thread_id`).
    StepOver,
    /// Step into the call on this line (optional `thread_id`).
    StepIn,
    /// Run until the current function returns (optional `thread_id`).
    StepOut,
    /// Thread ids and names.
    Threads,
    /// Stack frames of a thread (optional `thread_id`), at most 30.
    Stack,
    /// The scopes of a frame (`frame_id`), each with a reference.
    Scopes,
    /// The children of a `reference`, at most 50, each value at most 400 characters.
    Variables,
    /// Evaluate `expression` in a frame's own scope (`frame_id`, default the top frame).
    Evaluate,
    /// The debuggee's stdout/stderr that is new since the last call (or from `cursor`), capped.
    Output,
    /// End the session and kill the adapter and the debuggee.
    Terminate,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Adapters => "adapters",
            Op::Status => "status",
            Op::Breakpoints => "breakpoints",
            Op::Launch => "launch",
            Op::Attach => "attach",
            Op::Continue => "continue",
            Op::Pause => "pause",
            Op::StepOver => "step_over",
            Op::StepIn => "step_in",
            Op::StepOut => "step_out",
            Op::Threads => "threads",
            Op::Stack => "stack",
            Op::Scopes => "scopes",
            Op::Variables => "variables",
            Op::Evaluate => "evaluate",
            Op::Output => "output",
            Op::Terminate => "terminate",
        }
    }
}

/// Arguments of `debug`. Only the fields the chosen `op` names are used.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// The operation.
    #[serde(alias = "operation")]
    pub op: Op,
    /// breakpoints: the source file, relative to the workspace root.
    #[serde(default)]
    pub file: Option<String>,
    /// breakpoints: 1-based line numbers; an empty list clears the file's breakpoints.
    #[serde(default)]
    #[schemars(inner(range(min = 1)))]
    pub lines: Option<Vec<u32>>,
    /// launch: the program — a .py script, an executable, a Go package directory, a .dart file —
    /// relative to the workspace root.
    #[serde(default)]
    pub program: Option<String>,
    /// launch: the program's command-line arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// launch: the working directory, relative to the workspace root (default: the root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// launch: extra environment variables for the debuggee.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// launch / attach: which adapter to use (default: inferred from the program; for attach,
    /// the first usable of debugpy, delve, lldb).
    #[serde(default)]
    pub adapter: Option<AdapterId>,
    /// attach: the port on 127.0.0.1 the debuggee (or its debug server) listens on.
    #[serde(default)]
    pub port: Option<u16>,
    /// continue / pause / steps / stack: the thread (default: the thread that last stopped).
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// scopes / evaluate: a frame id from `stack`.
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// variables: a reference from `scopes`, `variables` or `evaluate`.
    #[serde(default)]
    pub reference: Option<i64>,
    /// evaluate: the expression.
    #[serde(default)]
    pub expression: Option<String>,
    /// output: read from this cursor (a previous result's `next_cursor`; 0 = from the start)
    /// instead of from where the last `output` call stopped.
    #[serde(default)]
    pub cursor: Option<u64>,
}

/// The `debug` tool and its per-conversation supervisor.
pub(crate) struct DebugTool {
    sup: Arc<Supervisor>,
}

struct Supervisor {
    root: PathBuf,
    conversation: String,
    prefix: Vec<String>,
    config: DapConfig,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    breakpoints: Mutex<BTreeMap<PathBuf, Vec<u32>>>,
    next_id: AtomicU64,
    /// Where delve builds a package's binary for the current session, outside the workspace.
    scratch: Mutex<Option<Scratch>>,
}

/// A private temporary directory, removed with everything in it when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agent-dap-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(false)
            .create(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl DebugTool {
    pub fn new(
        root: PathBuf,
        conversation: String,
        prefix: Vec<String>,
        config: DapConfig,
    ) -> Self {
        DebugTool {
            sup: Arc::new(Supervisor {
                root,
                conversation,
                prefix,
                config,
                session: tokio::sync::Mutex::new(None),
                breakpoints: Mutex::new(BTreeMap::new()),
                next_id: AtomicU64::new(1),
                scratch: Mutex::new(None),
            }),
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

impl Tool for DebugTool {
    type Args = DebugArgs;

    fn name(&self) -> &str {
        "debug"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> String {
        format!(
            "Drive a debugger (Debug Adapter Protocol) over one session per conversation: set \
         breakpoints, launch or attach, continue/step/pause, read threads, stack, scopes, \
         variables, evaluate expressions, read the program's output, terminate. `op` picks the \
         operation; `adapters` says which debuggers (debugpy, lldb, delve, dart) are usable \
         here. Frame ids and references are valid until the program moves again. A session \
         ends after {}.",
            match self.sup.config.ttl.as_secs() {
                s if s >= 60 && s.is_multiple_of(60) => format!("{} minutes", s / 60),
                s => format!("{s} seconds"),
            }
        )
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn resource_key(&self) -> String {
        format!("debug:{}", self.sup.conversation)
    }

    async fn call(&self, args: DebugArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(self.sup.call(args).await?)
    }
}

fn need<T: Clone>(op: Op, arg: &'static str, v: &Option<T>, detail: &str) -> Result<T, DapError> {
    v.clone().ok_or_else(|| DapError::Argument {
        op: op.name(),
        arg,
        detail: detail.to_string(),
    })
}

fn truncate(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}… ({} more characters)", count - max)
}

fn describe_run(state: &State) -> String {
    if let Some(why) = &state.ended {
        return format!("ended ({why})");
    }
    if state.closed.is_some() {
        return "adapter gone".to_string();
    }
    match &state.run {
        Run::Starting => "starting".into(),
        Run::Running => "running".into(),
        Run::Stopped {
            thread_id, reason, ..
        } => match thread_id {
            Some(t) => format!("stopped ({reason}, thread {t})"),
            None => format!("stopped ({reason})"),
        },
        Run::Exited => match state.exit_code {
            Some(c) => format!("exited with code {c}"),
            None => "exited".into(),
        },
    }
}

impl Supervisor {
    async fn call(&self, args: DebugArgs) -> Result<ToolOutput, DapError> {
        match args.op {
            Op::Adapters => Ok(self.adapters()),
            Op::Status => self.status().await,
            Op::Breakpoints => self.breakpoints(&args).await,
            Op::Launch => self.launch(&args).await,
            Op::Attach => self.attach(&args).await,
            Op::Continue | Op::StepOver | Op::StepIn | Op::StepOut | Op::Pause => {
                self.resume(&args).await
            }
            Op::Threads => self.threads().await,
            Op::Stack => self.stack(&args).await,
            Op::Scopes => self.scopes(&args).await,
            Op::Variables => self.variables(&args).await,
            Op::Evaluate => self.evaluate(&args).await,
            Op::Output => self.output(&args).await,
            Op::Terminate => self.terminate().await,
        }
    }

    fn detect_all(&self, start: &Path) -> Vec<Detected> {
        AdapterId::ALL
            .iter()
            .map(|id| adapters::detect(*id, &self.root, start, &self.config.extra_bin_dirs))
            .collect()
    }

    fn adapters(&self) -> ToolOutput {
        let found = self.detect_all(&self.root);
        let mut text =
            String::from("debug adapters for this workspace (root marker AND binary):\n");
        let mut rows = Vec::new();
        for d in &found {
            let status = match d.why_not() {
                None => "usable".to_string(),
                Some(why) => format!("not usable: {why}"),
            };
            let binary = d
                .binary
                .as_ref()
                .map(|b| b.display().to_string())
                .unwrap_or_else(|| "missing".into());
            let marker = d
                .marker
                .as_ref()
                .map(|m| format!("{} found", self.shown(m)))
                .unwrap_or_else(|| "missing".into());
            let _ = writeln!(
                text,
                "- {}: {status}\n    marker ({}): {marker}\n    program: {binary}\n    install: {}",
                d.id.name(),
                d.id.markers().join(", "),
                d.id.install()
            );
            rows.push(json!({
                "id": d.id.name(),
                "usable": d.usable(),
                "marker": d.marker.as_ref().map(|m| self.shown(m)),
                "markers": d.id.markers(),
                "binary": d.binary.as_ref().map(|b| b.display().to_string()),
                "problem": d.why_not(),
                "install": d.id.install(),
            }));
        }
        text.push_str("markers are looked for from the program's directory up to the workspace root; `launch` checks again for its program");
        ToolOutput::text(text).with_structured(json!({"adapters": rows}))
    }

    fn shown(&self, p: &Path) -> String {
        let s = display_path(&self.root, p);
        if s.is_empty() { ".".to_string() } else { s }
    }

    async fn current(&self) -> Option<Arc<Session>> {
        self.session.lock().await.clone()
    }

    /// The session, which must be live.
    async fn live(&self) -> Result<Arc<Session>, DapError> {
        match self.current().await {
            None => Err(DapError::NoSession {
                ended: String::new(),
            }),
            Some(s) => {
                s.check_live()?;
                Ok(s)
            }
        }
    }

    fn describe(&self, s: &Session) -> String {
        format!(
            "session {} ({} on {}, {})",
            s.id,
            s.adapter.name(),
            s.target,
            describe_run(&s.state())
        )
    }

    async fn status(&self) -> Result<ToolOutput, DapError> {
        let pending: usize = lock(&self.breakpoints).values().map(Vec::len).sum();
        let Some(s) = self.current().await else {
            return Ok(ToolOutput::text(format!(
                "no debug session in this conversation; {pending} breakpoint(s) set for the next launch; call `launch` or `attach`"
            ))
            .with_structured(json!({"session": null, "breakpoints": pending})));
        };
        let state = s.state();
        let mut text = self.describe(&s);
        if state.ended.is_none() {
            let _ = write!(
                text,
                "\nage {} of a {} time to live; adapter: {}",
                human(Duration::from_secs(s.started.elapsed().as_secs())),
                human(s.ttl),
                s.command
            );
            if let Run::Stopped { thread_id, .. } = &state.run
                && let Ok(at) = self.location(&s, *thread_id).await
            {
                let _ = write!(text, "\nstopped at {at}");
            }
        }
        let unread = {
            let o = lock(&s.shared.output);
            o.end().saturating_sub(o.read_cursor)
        };
        let _ = write!(
            text,
            "\n{unread} byte(s) of program output not read yet (`output`)"
        );
        Ok(ToolOutput::text(text).with_structured(json!({
            "session": s.id,
            "adapter": s.adapter.name(),
            "state": describe_run(&state),
            "exit_code": state.exit_code,
            "unread_output": unread,
            "adapter_pid": s.adapter_pgid(),
            "debuggee_pid": state.debuggee_pid,
        })))
    }

    /// "name (file:line)" of the top frame of `thread` (or of the first thread).
    async fn location(&self, s: &Session, thread: Option<i64>) -> Result<String, DapError> {
        let thread = match thread {
            Some(t) => t,
            None => self.first_thread(s).await?,
        };
        let body = s
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": 1}),
            )
            .await?;
        let frame = body
            .get("stackFrames")
            .and_then(Value::as_array)
            .and_then(|f| f.first())
            .cloned()
            .unwrap_or(Value::Null);
        Ok(format!("{} in thread {thread}", self.frame_text(&frame)))
    }

    fn frame_text(&self, f: &Value) -> String {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let line = f.get("line").and_then(Value::as_i64).unwrap_or(0);
        let source = f
            .pointer("/source/path")
            .and_then(Value::as_str)
            .map(|p| self.shown(Path::new(p)))
            .or_else(|| {
                f.pointer("/source/name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        match source {
            Some(src) => format!("{name} ({src}:{line})"),
            None => format!("{name} (no source)"),
        }
    }

    async fn first_thread(&self, s: &Session) -> Result<i64, DapError> {
        let body = s.request("threads", json!({})).await?;
        body.get("threads")
            .and_then(Value::as_array)
            .and_then(|t| t.first())
            .and_then(|t| t.get("id"))
            .and_then(Value::as_i64)
            .ok_or_else(|| DapError::Unknown {
                what: "the debuggee has no threads; call `status`".into(),
            })
    }

    fn breakpoint_lines(&self, file: &Path, bps: &[Value]) -> (String, Vec<Value>) {
        let mut text = String::new();
        let mut rows = Vec::new();
        for bp in bps {
            let line = bp.get("line").and_then(Value::as_i64);
            let verified = bp.get("verified").and_then(Value::as_bool).unwrap_or(false);
            let message = bp.get("message").and_then(Value::as_str);
            let at = match line {
                Some(l) => format!("{}:{l}", self.shown(file)),
                None => self.shown(file),
            };
            let _ = write!(
                text,
                "\n- {at}: {}",
                if verified { "verified" } else { "not verified" }
            );
            if let Some(m) = message {
                let _ = write!(text, " ({m})");
            }
            rows.push(json!({"file": self.shown(file), "line": line, "verified": verified, "message": message}));
        }
        (text, rows)
    }

    async fn breakpoints(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        let file = need(
            op,
            "file",
            &args.file,
            "the source file, relative to the workspace root",
        )?;
        let lines = need(
            op,
            "lines",
            &args.lines,
            "a list of 1-based line numbers ([] clears the file)",
        )?;
        let path = confine_existing(&self.root, "file", &file)?;
        if let Some(bad) = lines.iter().find(|l| **l == 0) {
            return Err(DapError::Argument {
                op: op.name(),
                arg: "lines",
                detail: format!("line {bad} is invalid; lines are 1-based"),
            });
        }
        let mut lines = lines;
        lines.sort_unstable();
        lines.dedup();
        {
            let mut map = lock(&self.breakpoints);
            if lines.is_empty() {
                map.remove(&path);
            } else {
                map.insert(path.clone(), lines.clone());
            }
        }
        let shown = self.shown(&path);
        let session = match self.current().await {
            Some(s) if s.check_live().is_ok() => Some(s),
            _ => None,
        };
        let Some(s) = session else {
            let text = if lines.is_empty() {
                format!("cleared the breakpoints of {shown}; no session is running")
            } else {
                format!(
                    "{} breakpoint(s) in {shown} (lines {}) will be set when the session launches",
                    lines.len(),
                    lines
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Ok(ToolOutput::text(text)
                .with_structured(json!({"file": shown, "lines": lines, "pending": true})));
        };
        let body = s
            .request(
                "setBreakpoints",
                crate::session::set_breakpoints_args(&path, &lines),
            )
            .await?;
        if lines.is_empty() {
            return Ok(
                ToolOutput::text(format!("cleared the breakpoints of {shown}"))
                    .with_structured(json!({"file": shown, "lines": [], "pending": false})),
            );
        }
        let (list, rows) = self.breakpoint_lines(&path, &crate::session::breakpoint_list(&body));
        Ok(ToolOutput::text(format!("breakpoints in {shown}:{list}"))
            .with_structured(json!({"file": shown, "breakpoints": rows, "pending": false})))
    }

    async fn reject_live(&self) -> Result<(), DapError> {
        if let Some(s) = self.current().await
            && s.check_live().is_ok()
        {
            return Err(DapError::AlreadyLive {
                live: self.describe(&s),
            });
        }
        Ok(())
    }

    async fn launch(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        self.reject_live().await?;
        let program = need(
            op,
            "program",
            &args.program,
            "a .py script, an executable, a Go package directory or a .dart file, relative to the workspace root",
        )?;
        let program = confine_existing(&self.root, "program", &program)?;
        let adapter = match args.adapter {
            Some(a) => a,
            None => adapters::infer(&program).map_err(|why| DapError::Argument {
                op: op.name(),
                arg: "adapter",
                detail: format!(
                    "cannot tell which debugger runs `{}` ({why}); pass adapter: debugpy | lldb | delve | dart",
                    self.shown(&program)
                ),
            })?,
        };
        let detected = adapters::detect(adapter, &self.root, &program, &self.config.extra_bin_dirs);
        if let Some(why) = detected.why_not() {
            return Err(DapError::Unusable {
                adapter: adapter.name(),
                why,
            });
        }
        // Invariant: `why_not` is None only when both are present.
        let (Some(binary), Some(marker)) = (detected.binary.clone(), detected.marker.clone())
        else {
            return Err(DapError::Unusable {
                adapter: adapter.name(),
                why: "detection is inconsistent".into(),
            });
        };
        let cwd = match &args.cwd {
            Some(c) => confine_existing(&self.root, "cwd", c)?,
            None => confine(&self.root, "cwd", ".")?,
        };
        let prog_args = args.args.clone().unwrap_or_default();
        let env = args.env.clone().unwrap_or_default();
        let p = program.display().to_string();
        let cwd_s = cwd.display().to_string();
        let arguments = match adapter {
            AdapterId::Debugpy => json!({
                "name": "agent-dap", "type": "python", "request": "launch",
                "program": p, "args": prog_args, "cwd": cwd_s, "env": env,
                "python": [binary.display().to_string()],
                "console": "internalConsole", "redirectOutput": true, "subProcess": false,
                "justMyCode": true, "stopOnEntry": false,
            }),
            AdapterId::Lldb => {
                let mut a = json!({
                    "name": "agent-dap", "type": "lldb-dap", "request": "launch",
                    "program": p, "args": prog_args, "cwd": cwd_s,
                    "env": env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                    "stopOnEntry": false,
                });
                if is_rust_binary(&program, &marker)
                    && let Some(etc) = rust_formatters(&self.prefix, &marker).await
                {
                    a["initCommands"] = json!([
                        format!(
                            "command script import \"{}\"",
                            etc.join("lldb_lookup.py").display()
                        ),
                        format!(
                            "command source -s 1 \"{}\"",
                            etc.join("lldb_commands").display()
                        ),
                    ]);
                }
                a
            }
            AdapterId::Delve => {
                let mut a = json!({
                    "name": "agent-dap", "type": "go", "request": "launch",
                    "mode": if program.is_dir() { "debug" } else { "exec" },
                    "program": p, "args": prog_args, "cwd": cwd_s, "env": env,
                    "outputMode": "remote", "stopOnEntry": false,
                });
                // Delve builds a package as `__debug_bin…` in the package directory and leaves
                // it there when it is killed: build it in a private temporary directory instead
                // (on the host only; behind a sandbox prefix that directory may not exist).
                if program.is_dir()
                    && self.prefix.is_empty()
                    && let Ok(scratch) = Scratch::new()
                {
                    a["output"] = json!(scratch.0.join("__debug_bin").display().to_string());
                    *lock(&self.scratch) = Some(scratch);
                }
                a
            }
            AdapterId::Dart => json!({
                "name": "agent-dap", "type": "dart", "request": "launch",
                "program": p, "args": prog_args, "cwd": cwd_s, "env": env,
                "console": "debugConsole",
            }),
        };
        let target = self.shown(&program);
        self.start(
            adapter, &binary, &marker, target, "launch", arguments, false,
        )
        .await
    }

    async fn attach(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        self.reject_live().await?;
        let port = need(op, "port", &args.port, "the port on 127.0.0.1 to attach to")?;
        if port == 0 {
            return Err(DapError::Argument {
                op: op.name(),
                arg: "port",
                detail: "port 0 is not a port anything listens on; pass the debuggee's port, from 1 to 65535".into(),
            });
        }
        let found = self.detect_all(&self.root);
        let adapter = match args.adapter {
            Some(a) => a,
            None => [AdapterId::Debugpy, AdapterId::Delve, AdapterId::Lldb]
                .into_iter()
                .find(|id| found.iter().any(|d| d.id == *id && d.usable()))
                .ok_or_else(|| DapError::Argument {
                    op: op.name(),
                    arg: "adapter",
                    detail: "no adapter that can attach is usable here (see `adapters`); pass adapter: debugpy | lldb | delve".into(),
                })?,
        };
        let Some(detected) = found.into_iter().find(|d| d.id == adapter) else {
            return Err(DapError::Unusable {
                adapter: adapter.name(),
                why: "unknown adapter".into(),
            });
        };
        if let Some(why) = detected.why_not() {
            return Err(DapError::Unusable {
                adapter: adapter.name(),
                why,
            });
        }
        let (Some(binary), Some(marker)) = (detected.binary, detected.marker) else {
            return Err(DapError::Unusable {
                adapter: adapter.name(),
                why: "detection is inconsistent".into(),
            });
        };
        let arguments = match adapter {
            AdapterId::Debugpy => json!({
                "name": "agent-dap", "type": "python", "request": "attach",
                "justMyCode": true, "redirectOutput": true, "subProcess": false,
            }),
            AdapterId::Lldb => json!({
                "name": "agent-dap", "type": "lldb-dap", "request": "attach",
                "gdb-remote-port": port, "gdb-remote-hostname": "127.0.0.1",
            }),
            AdapterId::Delve => json!({
                "name": "agent-dap", "type": "go", "request": "attach", "mode": "remote",
            }),
            AdapterId::Dart => {
                return Err(DapError::Argument {
                    op: op.name(),
                    arg: "adapter",
                    detail:
                        "attaching is supported for debugpy, lldb and delve; dart is launch only"
                            .into(),
                });
            }
        };
        self.start(
            adapter,
            &binary,
            &marker,
            format!("127.0.0.1:{port}"),
            "attach",
            arguments,
            true,
        )
        .await
        .map(|mut out| {
            if adapter == AdapterId::Delve {
                out.text
                    .push_str("\n(delve: connected to the headless server on that port)");
            }
            out.text
                .push_str("\n(attached: `terminate` disconnects and leaves the program running)");
            out
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn start(
        &self,
        adapter: AdapterId,
        binary: &Path,
        marker: &Path,
        target: String,
        request: &str,
        arguments: Value,
        attach: bool,
    ) -> Result<ToolOutput, DapError> {
        let cfg = &self.config;
        let started = if attach && matches!(adapter, AdapterId::Delve | AdapterId::Debugpy) {
            // `python -m debugpy --listen` and a headless delve are DAP servers themselves:
            // connect to the port directly.
            let port = target
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let stream = adapters::connect(port, cfg.startup_timeout.min(Duration::from_secs(10)))
                .await
                .map_err(|detail| DapError::Spawn {
                    adapter: adapter.name(),
                    command: format!("connect {target}"),
                    detail,
                })?;
            let (r, w) = stream.into_split();
            adapters::Started {
                child: None,
                stderr: agent_proc::Tail::new(1024),
                owns_reported_pids: false,
                command: format!("tcp {target}"),
                reader: Box::new(r),
                writer: Box::new(w),
                program_stdout: None,
            }
        } else {
            adapters::start(adapter, binary, &self.prefix, marker, cfg.startup_timeout).await?
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let session = Session::new(
            id,
            adapter,
            target,
            started,
            cfg.ttl,
            cfg.request_timeout,
            attach,
        );
        *self.session.lock().await = Some(session.clone());
        let gen_before = session.state().stop_gen;
        let bps = lock(&self.breakpoints).clone();
        let results = match session
            .configure(request, arguments, &bps, cfg.startup_timeout)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                // The TTL (or the adapter dying) may have ended the session first: say so.
                let ended = session.state().ended;
                session.end(format!("{request} failed"), true).await;
                return Err(match ended {
                    Some(why) => DapError::NoSession {
                        ended: format!(" (session {id} ended during start-up: {why}; {e})"),
                    },
                    None => e,
                });
            }
        };
        // Configured and launched: running until an event says otherwise.
        session.shared.state.send_modify(|st| {
            if st.run == Run::Starting {
                st.run = Run::Running;
            }
        });
        let state = session.wait_stop(gen_before, cfg.run_wait).await;
        let mut text = format!(
            "session {id}: {} {} with {} ({})",
            if attach { "attached to" } else { "launched" },
            session.target,
            adapter.name(),
            session.command
        );
        let mut bp_rows = Vec::new();
        for (file, bps) in &results {
            let (list, rows) = self.breakpoint_lines(file, bps);
            text.push_str(&list);
            bp_rows.extend(rows);
        }
        let (summary, structured) = self.after_move(&session, &state, cfg.run_wait).await;
        text.push('\n');
        text.push_str(&summary);
        let mut structured = structured;
        structured["session"] = json!(id);
        structured["adapter_pid"] = json!(session.adapter_pgid());
        structured["debuggee_pid"] = json!(session.state().debuggee_pid);
        structured["breakpoints"] = json!(bp_rows);
        Ok(ToolOutput::text(text).with_structured(structured))
    }

    /// Render where the debuggee is after it moved: stopped (with the location), exited (with
    /// the new output), or still running.
    async fn after_move(&self, s: &Session, state: &State, waited: Duration) -> (String, Value) {
        let new_output = |s: &Session| {
            let o = lock(&s.shared.output);
            let (text, _, _) = o.read(o.read_cursor, MAX_OUTPUT);
            text
        };
        if state.closed.is_some() && !state.terminated && state.run != Run::Exited {
            let tail = s.stderr_tail();
            return (
                format!(
                    "the debug adapter exited unexpectedly; the session is over{}",
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its stderr ends with: {tail}")
                    }
                ),
                json!({"state": "adapter gone"}),
            );
        }
        match &state.run {
            Run::Stopped {
                thread_id,
                reason,
                description,
            } => {
                let at = self
                    .location(s, *thread_id)
                    .await
                    .unwrap_or_else(|e| format!("an unknown location ({e})"));
                let desc = description
                    .as_ref()
                    .filter(|d| !d.is_empty() && *d != reason)
                    .map(|d| format!(", {d}"))
                    .unwrap_or_default();
                (
                    format!("stopped ({reason}{desc}) at {at}"),
                    json!({"state": "stopped", "reason": reason, "thread_id": thread_id, "at": at}),
                )
            }
            Run::Exited => {
                // Output events can trail the exit by a moment.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let code = s.state().exit_code.or(state.exit_code);
                let out = new_output(s);
                let mut text = match code {
                    Some(c) => format!("the program exited with code {c}"),
                    None => "the program terminated".to_string(),
                };
                if !out.is_empty() {
                    let _ = write!(
                        text,
                        "; new output (also in `output`):\n{}",
                        truncate(&out, 2000)
                    );
                }
                (text, json!({"state": "exited", "exit_code": code}))
            }
            Run::Running | Run::Starting => (
                format!(
                    "still running after {}; call `status` to see where it stops, or `pause`",
                    human(waited)
                ),
                json!({"state": "running"}),
            ),
        }
    }

    fn stopped_thread(state: &State) -> Option<i64> {
        match &state.run {
            Run::Stopped { thread_id, .. } => *thread_id,
            _ => None,
        }
    }

    async fn check_thread(&self, s: &Session, thread: i64) -> Result<(), DapError> {
        let body = s.request("threads", json!({})).await?;
        let ids: Vec<i64> = body
            .get("threads")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(|t| t.get("id").and_then(Value::as_i64))
                    .collect()
            })
            .unwrap_or_default();
        if ids.contains(&thread) {
            Ok(())
        } else {
            Err(DapError::Unknown {
                what: format!(
                    "unknown thread_id {thread}; the debuggee's threads are: {}",
                    ids.iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        }
    }

    async fn resume(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        let s = self.live().await?;
        let state = s.state();
        let stopped = matches!(state.run, Run::Stopped { .. });
        if op == Op::Pause {
            if stopped {
                return Ok(ToolOutput::text(format!(
                    "already {}; nothing to pause",
                    describe_run(&state)
                )));
            }
        } else if !stopped {
            return Err(DapError::NotStopped {
                op: op.name(),
                state: describe_run(&state),
            });
        }
        let thread = match args.thread_id {
            Some(t) => {
                self.check_thread(&s, t).await?;
                t
            }
            None => match Self::stopped_thread(&state) {
                Some(t) => t,
                None => self.first_thread(&s).await?,
            },
        };
        let command = match op {
            Op::Continue => "continue",
            Op::Pause => "pause",
            Op::StepOver => "next",
            Op::StepIn => "stepIn",
            Op::StepOut => "stepOut",
            _ => unreachable_op(op)?,
        };
        let gen_before = state.stop_gen;
        if op != Op::Pause {
            s.shared.state.send_modify(|st| {
                if st.stop_gen == gen_before && matches!(st.run, Run::Stopped { .. }) {
                    st.run = Run::Running;
                }
            });
        }
        s.request(command, json!({"threadId": thread})).await?;
        let state = s.wait_stop(gen_before, self.config.run_wait).await;
        let (text, structured) = self.after_move(&s, &state, self.config.run_wait).await;
        Ok(ToolOutput::text(text).with_structured(structured))
    }

    async fn threads(&self) -> Result<ToolOutput, DapError> {
        let s = self.live().await?;
        let body = s.request("threads", json!({})).await?;
        let threads = body
            .get("threads")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut text = format!("{} thread(s):", threads.len());
        for t in &threads {
            let _ = write!(
                text,
                "\n- {}: {}",
                t.get("id").and_then(Value::as_i64).unwrap_or(0),
                t.get("name").and_then(Value::as_str).unwrap_or("")
            );
        }
        Ok(ToolOutput::text(text).with_structured(json!({"threads": threads})))
    }

    fn require_stopped(s: &Session, op: Op) -> Result<State, DapError> {
        let state = s.state();
        if matches!(state.run, Run::Stopped { .. }) {
            Ok(state)
        } else {
            Err(DapError::NotStopped {
                op: op.name(),
                state: describe_run(&state),
            })
        }
    }

    /// Fetch the frames of `thread`, remembering their ids.
    async fn frames(
        &self,
        s: &Session,
        thread: i64,
    ) -> Result<(Vec<Value>, Option<i64>), DapError> {
        let body = s
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": MAX_FRAMES}),
            )
            .await?;
        let mut frames = body
            .get("stackFrames")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        frames.truncate(MAX_FRAMES);
        let total = body.get("totalFrames").and_then(Value::as_i64);
        let mut known = s.known();
        for f in &frames {
            if let Some(id) = f.get("id").and_then(Value::as_i64) {
                known.frames.insert(id, self.frame_text(f));
            }
        }
        Ok((frames, total))
    }

    async fn stack(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let s = self.live().await?;
        let state = Self::require_stopped(&s, args.op)?;
        let thread = match args.thread_id {
            Some(t) => {
                self.check_thread(&s, t).await?;
                t
            }
            None => match Self::stopped_thread(&state) {
                Some(t) => t,
                None => self.first_thread(&s).await?,
            },
        };
        let (frames, total) = self.frames(&s, thread).await?;
        let mut text = format!("thread {thread}, {} frame(s):", frames.len());
        let mut rows = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let id = f.get("id").and_then(Value::as_i64).unwrap_or(0);
            let _ = write!(text, "\n#{i} frame_id {id}: {}", self.frame_text(f));
            rows.push(json!({"frame_id": id, "at": self.frame_text(f)}));
        }
        if let Some(t) = total
            && t > frames.len() as i64
        {
            let _ = write!(
                text,
                "\n… {} more frame(s) not shown",
                t - frames.len() as i64
            );
        }
        Ok(ToolOutput::text(text).with_structured(json!({"thread_id": thread, "frames": rows})))
    }

    /// Check that `frame` came from a `stack` since the last stop, fetching the stopped thread's
    /// frames once if none were asked for.
    async fn check_frame(&self, s: &Session, frame: i64) -> Result<(), DapError> {
        if s.known().frames.contains_key(&frame) {
            return Ok(());
        }
        let state = s.state();
        let thread = match Self::stopped_thread(&state) {
            Some(t) => t,
            None => self.first_thread(s).await?,
        };
        self.frames(s, thread).await?;
        let known = s.known();
        if known.frames.contains_key(&frame) {
            return Ok(());
        }
        let list = known
            .frames
            .iter()
            .take(10)
            .map(|(id, at)| format!("{id} = {at}"))
            .collect::<Vec<_>>()
            .join("; ");
        Err(DapError::Unknown {
            what: format!(
                "unknown frame_id {frame}; frame ids change whenever the program moves. Current frames of thread {thread}: {list}"
            ),
        })
    }

    async fn top_frame(&self, s: &Session) -> Result<i64, DapError> {
        let state = s.state();
        let thread = match Self::stopped_thread(&state) {
            Some(t) => t,
            None => self.first_thread(s).await?,
        };
        let (frames, _) = self.frames(s, thread).await?;
        frames
            .first()
            .and_then(|f| f.get("id"))
            .and_then(Value::as_i64)
            .ok_or_else(|| DapError::Unknown {
                what: format!("thread {thread} has no frames; call `stack` with another thread_id"),
            })
    }

    async fn scopes(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        let frame = need(op, "frame_id", &args.frame_id, "a frame id from `stack`")?;
        let s = self.live().await?;
        Self::require_stopped(&s, op)?;
        self.check_frame(&s, frame).await?;
        let body = s.request("scopes", json!({"frameId": frame})).await?;
        let scopes = body
            .get("scopes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut text = format!("scopes of frame {frame}:");
        let mut rows = Vec::new();
        let mut known = s.known();
        for sc in &scopes {
            let name = sc.get("name").and_then(Value::as_str).unwrap_or("?");
            let r = sc
                .get("variablesReference")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if r > 0 {
                known.refs.insert(r);
            }
            let count = sc
                .get("namedVariables")
                .and_then(Value::as_i64)
                .map(|n| format!(", {n} variable(s)"))
                .unwrap_or_default();
            let expensive = if sc.get("expensive").and_then(Value::as_bool) == Some(true) {
                ", expensive"
            } else {
                ""
            };
            let _ = write!(text, "\n- {name}: reference {r}{count}{expensive}");
            rows.push(json!({"name": name, "reference": r}));
        }
        Ok(ToolOutput::text(text).with_structured(json!({"frame_id": frame, "scopes": rows})))
    }

    fn variable_row(&self, s: &Session, v: &Value) -> (String, Value) {
        let name = v.get("name").and_then(Value::as_str).unwrap_or("?");
        let value = v.get("value").and_then(Value::as_str).unwrap_or("");
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty());
        let r = v
            .get("variablesReference")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if r > 0 {
            s.known().refs.insert(r);
        }
        let value = truncate(value, MAX_VALUE);
        let mut line = match ty {
            Some(t) => format!("{name}: {t} = {value}"),
            None => format!("{name} = {value}"),
        };
        if r > 0 {
            let _ = write!(line, " [reference {r}]");
        }
        (
            line,
            json!({"name": name, "type": ty, "value": value, "reference": r}),
        )
    }

    async fn variables(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        let reference = need(
            op,
            "reference",
            &args.reference,
            "a reference from `scopes`, `variables` or `evaluate`",
        )?;
        let s = self.live().await?;
        Self::require_stopped(&s, op)?;
        {
            let known = s.known();
            if !known.refs.contains(&reference) {
                let list = known
                    .refs
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(DapError::Unknown {
                    what: format!(
                        "unknown reference {reference}; references are valid until the program moves and come from `scopes`, `variables` or `evaluate`. Known now: {}",
                        if list.is_empty() {
                            "none (call `scopes` first)".to_string()
                        } else {
                            list
                        }
                    ),
                });
            }
        }
        let body = s
            .request("variables", json!({"variablesReference": reference}))
            .await?;
        let vars = body
            .get("variables")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut text = format!("{} variable(s) in reference {reference}:", vars.len());
        let mut rows = Vec::new();
        for v in vars.iter().take(MAX_CHILDREN) {
            let (line, row) = self.variable_row(&s, v);
            let _ = write!(text, "\n- {line}");
            rows.push(row);
        }
        if vars.len() > MAX_CHILDREN {
            let _ = write!(text, "\n… {} more not shown", vars.len() - MAX_CHILDREN);
        }
        Ok(ToolOutput::text(text).with_structured(json!({
            "reference": reference, "variables": rows, "not_shown": vars.len().saturating_sub(MAX_CHILDREN),
        })))
    }

    async fn evaluate(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let op = args.op;
        let expression = need(
            op,
            "expression",
            &args.expression,
            "the expression to evaluate",
        )?;
        let s = self.live().await?;
        Self::require_stopped(&s, op)?;
        let frame = match args.frame_id {
            Some(f) => {
                self.check_frame(&s, f).await?;
                f
            }
            None => self.top_frame(&s).await?,
        };
        let context = if s.adapter == AdapterId::Debugpy {
            "repl"
        } else {
            "watch"
        };
        let body = s
            .request(
                "evaluate",
                json!({"expression": expression, "frameId": frame, "context": context}),
            )
            .await?;
        let result = body.get("result").and_then(Value::as_str).unwrap_or("");
        let row = json!({
            "name": expression,
            "value": result,
            "type": body.get("type"),
            "variablesReference": body.get("variablesReference"),
        });
        let (line, structured) = self.variable_row(&s, &row);
        Ok(ToolOutput::text(format!("in frame {frame}: {line}")).with_structured(structured))
    }

    async fn output(&self, args: &DebugArgs) -> Result<ToolOutput, DapError> {
        let Some(s) = self.current().await else {
            return Err(DapError::NoSession {
                ended: String::new(),
            });
        };
        let mut o = lock(&s.shared.output);
        if let Some(c) = args.cursor
            && usize::try_from(c).map_or(true, |c| c > o.end())
        {
            let end = o.end();
            return Err(DapError::Argument {
                op: args.op.name(),
                arg: "cursor",
                detail: format!(
                    "cursor {c} is past the end of the output ({end} bytes so far); pass a cursor from 0 to {end}: 0 or a previous result's `next_cursor`"
                ),
            });
        }
        let cursor = args
            .cursor
            .map(|c| usize::try_from(c).unwrap_or(usize::MAX))
            .unwrap_or(o.read_cursor);
        let (text, from, next) = o.read(cursor, MAX_OUTPUT);
        o.read_cursor = next;
        let remaining = o.end() - next;
        let mut out = if text.is_empty() {
            "no new output".to_string()
        } else {
            text.clone()
        };
        if from > cursor {
            out = format!("({} earlier bytes were dropped)\n{out}", from - cursor);
        }
        if remaining > 0 {
            let _ = write!(out, "\n… {remaining} more byte(s): call `output` again");
        }
        Ok(ToolOutput::text(out).with_structured(json!({
            "output": text, "cursor": from, "next_cursor": next, "remaining": remaining,
        })))
    }

    async fn terminate(&self) -> Result<ToolOutput, DapError> {
        let Some(s) = self.current().await else {
            return Ok(ToolOutput::text(
                "no debug session is running; nothing to terminate",
            ));
        };
        let was_live = s.is_live();
        s.end("terminated on request".to_string(), true).await;
        let text = if was_live && s.attached {
            format!(
                "session {} on {} terminated; the adapter was stopped and the debuggee was detached, left running",
                s.id, s.target
            )
        } else if was_live {
            format!(
                "session {} on {} terminated; the adapter and the debuggee were killed",
                s.id, s.target
            )
        } else {
            format!(
                "session {} had already ended ({}); its processes are gone",
                s.id,
                s.state().ended.unwrap_or_default()
            )
        };
        Ok(
            ToolOutput::text(text)
                .with_structured(json!({"session": s.id, "terminated": was_live})),
        )
    }
}

fn unreachable_op(op: Op) -> Result<&'static str, DapError> {
    Err(DapError::Argument {
        op: op.name(),
        arg: "op",
        detail: "internal error: not a movement".into(),
    })
}

/// Whether an executable was built by rustc (std's source paths are in its debug info), or sits
/// in a Cargo project.
fn is_rust_binary(program: &Path, marker: &Path) -> bool {
    let stamp = b"/rustc/";
    let in_binary = std::fs::read(program)
        .map(|b| b.windows(stamp.len()).any(|w| w == stamp))
        .unwrap_or(false);
    in_binary || marker.join("Cargo.toml").exists()
}

/// The toolchain's `lib/rustlib/etc`, holding lldb's Rust formatters.
async fn rust_formatters(prefix: &[String], dir: &Path) -> Option<PathBuf> {
    let out = agent_proc::Command::new(&agent_proc::Launcher::prefixed(prefix), "rustc")
        .args(["--print", "sysroot"])
        .current_dir(dir)
        .output(Duration::from_secs(20))
        .await
        .ok()?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let etc = Path::new(&sysroot).join("lib/rustlib/etc");
    etc.join("lldb_lookup.py").exists().then_some(etc)
}
