//! What runs a worker: the [`VibeBackend`] trait the harness supplies, and the shipped
//! [`CommandBackend`] (a configured program per tier).

use crate::error::{RunError, Unavailable};
use agent_proc::Launcher;
use agent_tier::Surface;
use agent_tier::process::resolve_binary;
use agent_tier::schemars::{self, JsonSchema};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A boxed, sendable future (the object-safe async of [`VibeBackend`]).
pub use agent_tier::BoxFuture;

/// Which kind of worker: `fast` for well-specified mechanical work, `good` for design,
/// judgement, or reviewing a fast worker's output. (The variants carry no doc comments:
/// `vibe_spawn`'s `tier` field says it, once, in the schema.)
// missing_docs is allowed for that reason: the schema's description is written once, elsewhere.
#[allow(missing_docs)]
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
#[strum(serialize_all = "snake_case")]
pub enum WorkerTier {
    #[default]
    Fast,
    Good,
}

impl WorkerTier {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for WorkerTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run of a worker: its whole brief so far (the first brief plus every message sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerJob {
    /// The worker's id (`w1`, `w2`, …).
    pub worker_id: String,
    /// The label given at spawn.
    pub label: String,
    /// The tier.
    pub tier: WorkerTier,
    /// The brief, with every message sent so far appended.
    pub brief: String,
    /// Which run of this worker this is (1 for the first).
    pub run: u32,
    /// The surface of the call that spawned the worker (narrowed by any later `vibe_send`): a
    /// backend must not give the worker more than this. [`CommandBackend`] puts it in the
    /// worker's environment as `AGENT_TOOLS_SURFACE`.
    pub surface: Surface,
    /// Beat it whenever the worker shows it is alive (writes output): `vibe_list` shows when it
    /// last did and flags a long silence as stalled. [`CommandBackend`] beats on stdout and
    /// stderr.
    pub heartbeat: Heartbeat,
}

/// When a worker run last showed it is alive, and the last line it wrote. Clones share the
/// beat; two heartbeats are equal when they are the same one.
#[derive(Clone, Default)]
pub struct Heartbeat(Arc<Mutex<Beat>>);

#[derive(Default)]
struct Beat {
    at: Option<std::time::Instant>,
    line: Option<String>,
}

/// The most of a worker's last output line kept for [`Heartbeat::last_line`], in characters.
const LAST_LINE: usize = 200;

impl Heartbeat {
    /// The worker is alive now.
    pub fn beat(&self) {
        self.0.lock().at = Some(std::time::Instant::now());
    }

    /// The worker wrote `bytes` (stdout or stderr): it is alive now, and its last non-blank
    /// line (the end of one, cut to its last 200 characters) is kept.
    pub fn output(&self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty());
        let mut b = self.0.lock();
        b.at = Some(std::time::Instant::now());
        if let Some(line) = line {
            b.line = Some(agent_tier::display::clip_tail_chars(line, LAST_LINE).into_owned());
        }
    }

    /// When it last beat; `None`: never.
    pub fn last(&self) -> Option<std::time::Instant> {
        self.0.lock().at
    }

    /// The last non-blank line of output given to [`Heartbeat::output`]; `None`: none yet.
    pub fn last_line(&self) -> Option<String> {
        self.0.lock().line.clone()
    }
}

impl fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Heartbeat").field(&self.last()).finish()
    }
}

impl PartialEq for Heartbeat {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Heartbeat {}

/// Runs workers. Supplied by the harness; [`CommandBackend`] is the shipped one.
pub trait VibeBackend: Send + Sync + 'static {
    /// A short name for messages.
    fn name(&self) -> &str;

    /// Whether a worker of `tier` can be started at all; checked at spawn so that a missing
    /// program fails the spawn at once. The error says what to configure.
    fn check(&self, tier: WorkerTier) -> Result<(), Unavailable> {
        let _ = tier;
        Ok(())
    }

    /// Run the job to its end: `Ok(result)` when the worker succeeded, `Err(what happened)` when
    /// it failed (a harness backend's own text: [`RunError::Other`], or `.into()` a string).
    /// Dropping the future must stop the worker and everything it started.
    fn run(&self, job: WorkerJob) -> BoxFuture<'static, Result<String, RunError>>;
}

/// A worker program: the program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkerCommand {
    /// The program (a name on `PATH` or a path).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl WorkerCommand {
    /// A program with arguments.
    pub fn new(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        WorkerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// Split a command line on whitespace (no quoting): `my-agent --model fast`. `None` when
    /// the line is blank.
    pub fn parse(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace();
        let program = words.next()?;
        Some(WorkerCommand::new(program, words))
    }

    fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Starts a configured program per tier, with the brief on stdin and `VIBE_LABEL`, `VIBE_TIER`
/// and `VIBE_WORKER_ID` in its environment, in the run's root; its stdout is the worker's
/// result. A non-zero exit is a failure whose message carries the exit status and the tails of
/// stdout and stderr. Every worker is its own process group, killed when its run ends or is
/// stopped.
#[derive(Debug, Clone)]
pub struct CommandBackend {
    fast: Option<WorkerCommand>,
    good: Option<WorkerCommand>,
    cwd: PathBuf,
    prefix: Vec<String>,
    max_output: usize,
}

/// How much of a worker's stdout is kept by default.
pub const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

impl CommandBackend {
    /// Programs for the tiers (either may be missing), started in `cwd`.
    pub fn new(fast: Option<WorkerCommand>, good: Option<WorkerCommand>, cwd: &Path) -> Self {
        CommandBackend {
            fast,
            good,
            cwd: cwd.to_path_buf(),
            prefix: Vec::new(),
            max_output: DEFAULT_MAX_OUTPUT,
        }
    }

    /// Start workers through a sandbox launcher (`docker exec -i box`).
    pub fn with_prefix(mut self, prefix: Vec<String>) -> Self {
        self.prefix = prefix;
        self
    }

    /// Keep at most this many bytes of a worker's stdout.
    pub fn with_max_output(mut self, bytes: usize) -> Self {
        self.max_output = bytes.max(1);
        self
    }

    fn program(&self, tier: WorkerTier) -> Option<&WorkerCommand> {
        match tier {
            WorkerTier::Fast => self.fast.as_ref(),
            WorkerTier::Good => self.good.as_ref(),
        }
    }

    fn configured(&self) -> String {
        let tiers: Vec<&str> = [WorkerTier::Fast, WorkerTier::Good]
            .into_iter()
            .filter(|t| self.program(*t).is_some())
            .map(WorkerTier::as_str)
            .collect();
        if tiers.is_empty() {
            "none".into()
        } else {
            tiers.join(", ")
        }
    }
}

fn env_name(tier: WorkerTier) -> &'static str {
    match tier {
        WorkerTier::Fast => "AGENT_TOOLS_VIBE_FAST",
        WorkerTier::Good => "AGENT_TOOLS_VIBE_GOOD",
    }
}

impl VibeBackend for CommandBackend {
    fn name(&self) -> &str {
        "command"
    }

    fn check(&self, tier: WorkerTier) -> Result<(), Unavailable> {
        let Some(cmd) = self.program(tier) else {
            return Err(Unavailable::NotConfigured {
                tier: tier.as_str(),
                configured: self.configured(),
                env: env_name(tier),
            });
        };
        if self.prefix.is_empty()
            && resolve_binary(&self.cwd, &[], &[cmd.program.as_str()]).is_none()
            && !self.cwd.join(&cmd.program).is_file()
        {
            return Err(Unavailable::NotFound {
                tier: tier.as_str(),
                program: cmd.program.clone(),
                folder: self.cwd.display().to_string(),
            });
        }
        Ok(())
    }

    fn run(&self, job: WorkerJob) -> BoxFuture<'static, Result<String, RunError>> {
        let cmd = self.program(job.tier).cloned();
        let cwd = self.cwd.clone();
        let prefix = self.prefix.clone();
        let max_output = self.max_output;
        Box::pin(async move {
            let Some(cmd) = cmd else {
                return Err(RunError::NotConfigured {
                    tier: job.tier.as_str(),
                });
            };
            run_command(&cmd, &cwd, &prefix, max_output, &job).await
        })
    }
}

/// A bounded capture of a child's stdout, shared with its reader task.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: usize,
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn run_command(
    cmd: &WorkerCommand,
    cwd: &Path,
    prefix: &[String],
    max_output: usize,
    job: &WorkerJob,
) -> Result<String, RunError> {
    let mut c = agent_proc::Command::new(&Launcher::prefixed(prefix), &cmd.program)
        .args(&cmd.args)
        .stdin_piped()
        .stderr_tail(4096)
        .on_stderr({
            let heartbeat = job.heartbeat.clone();
            move |bytes| heartbeat.output(bytes)
        })
        .env("VIBE_LABEL", &job.label)
        .env("VIBE_TIER", job.tier.as_str())
        .env("VIBE_WORKER_ID", &job.worker_id)
        .env(Surface::ENV, job.surface.as_str());
    if !cwd.as_os_str().is_empty() {
        c = c.current_dir(cwd);
    }
    // Dropping the child (this run ends, or its future is dropped because the worker was
    // stopped) ends its group and everything that carries its tag, even in a new session:
    // nothing the worker started outlives it.
    let child = c.spawn().await.map_err(|source| RunError::Start {
        command: cmd.display(),
        source,
    })?;
    let stderr = child.stderr();
    let captured = Arc::new(Mutex::new(Captured::default()));
    let reader = child.take_stdout().map(|mut out| {
        let captured = captured.clone();
        let heartbeat = job.heartbeat.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = out.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                heartbeat.output(&chunk[..n]);
                let mut c = captured.lock();
                let room = max_output.saturating_sub(c.bytes.len());
                let keep = n.min(room);
                c.bytes.extend_from_slice(&chunk[..keep]);
                c.dropped += n - keep;
            }
        })
    });
    // Aborted if this run ends early (an error, or its future dropped).
    let reader = reader.map(tokio_util::task::AbortOnDropHandle::new);
    if let Some(mut stdin) = child.take_stdin() {
        let brief = job.brief.clone();
        // A worker that never reads its stdin must not stall the run: write in the background.
        tokio::spawn(async move {
            let _ = stdin.write_all(brief.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let status = child.wait_exit().await.map_err(RunError::Wait)?;
    // Let the reader drain what the worker wrote (bounded: a leftover grandchild may hold the
    // pipe open), then kill the group, which closes it.
    if let Some(r) = reader {
        // Past the bound the handle is dropped with the timeout, which aborts the reader.
        let _ = tokio::time::timeout(Duration::from_secs(5), r).await;
    }
    child.kill();
    let (stdout, dropped) = {
        let c = captured.lock();
        (lossy(&c.bytes), c.dropped)
    };
    let mut stdout = stdout;
    if dropped > 0 {
        stdout.push_str(&format!(
            "\n[... {dropped} more bytes of output were not kept]"
        ));
    }
    if status.success() {
        return Ok(stdout);
    }
    // The end of what it wrote on a stream, if anything.
    let last_lines = |text: &str| {
        (!text.trim().is_empty())
            .then(|| agent_tier::display::clip_tail_chars(text.trim_end(), 2000).into_owned())
    };
    Err(RunError::Exited {
        command: cmd.display(),
        how: agent_proc::describe_exit(status),
        stderr: last_lines(&stderr.text()),
        stdout: last_lines(&stdout),
    })
}
