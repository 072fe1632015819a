//! The five `vibe_*` tools.

use crate::backend::{VibeBackend, WorkerTier};
use crate::error::VibeError;
use crate::report::{Killed, Listed, Roll, Sent, Spawned, Waited, WorkerRow, bounded};
use crate::roster::{Roster, WorkerState, WorkerView};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Hints, Rooms, Tier, Tool, ToolOutput};
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// Settings the tools share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub default_wait: Duration,
    pub max_wait: Duration,
    pub list_result_chars: usize,
    pub default_budget: Duration,
    pub max_run: Duration,
    pub stall_after: Duration,
}

/// What a waiting `vibe_wait` reports: the worker's header and its last output line.
fn waiting_line(v: &WorkerView, line: Option<&str>) -> String {
    let mut text = WorkerRow::of(v, None).header();
    match (v.last_output_seconds_ago, line) {
        (Some(ago), Some(line)) => {
            let _ = write!(
                text,
                "; last output {} ago: {line}",
                agent_tier::display::duration(std::time::Duration::from_secs_f64(ago))
            );
        }
        (Some(ago), None) => {
            let _ = write!(
                text,
                "; last output {} ago",
                agent_tier::display::duration(std::time::Duration::from_secs_f64(ago))
            );
        }
        _ => text.push_str("; no output yet"),
    }
    text
}

/// Arguments of `vibe_spawn`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    /// Everything the worker needs, self-contained.
    pub brief: String,
    /// Short label, shown by vibe_list.
    pub label: String,
    /// `fast` (default): mechanical work; `good`: design, judgement, review.
    #[serde(default)]
    pub tier: WorkerTier,
    /// Seconds a run may take (default 1800), then it is stopped.
    #[serde(default)]
    pub timeout_s: Option<u64>,
}

/// Arguments of `vibe_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// Id from vibe_spawn (`w1`).
    pub worker_id: String,
    /// What to add to the brief.
    pub message: String,
}

/// Arguments of `vibe_wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Id from vibe_spawn (`w1`).
    pub worker_id: String,
    /// Most seconds to wait (default 300, at most 3600). Alias: `timeout_seconds`.
    #[serde(default, alias = "timeout_seconds")]
    pub timeout_s: Option<f64>,
}

/// `timeout_s` as a duration: a finite number of seconds from 0 to `max`; anything else
/// (negative, NaN, infinite, `1e308`) is an argument error naming the argument and the valid
/// range, checked before any conversion that could panic.
fn wait_timeout(
    given: Option<f64>,
    default: Duration,
    max: Duration,
) -> Result<Duration, VibeError> {
    match given {
        None => Ok(default),
        Some(s) if s.is_finite() && (0.0..=max.as_secs_f64()).contains(&s) => {
            Ok(Duration::try_from_secs_f64(s).map_or(max, |d| d.min(max)))
        }
        Some(s) => {
            let shown = if s.is_finite() && s.abs() >= 1e6 {
                format!("{s:e}")
            } else {
                format!("{s}")
            };
            Err(VibeError::InvalidArguments(format!(
                "`timeout_s` is {shown}; pass a number of seconds from 0 to {}",
                max.as_secs()
            )))
        }
    }
}

/// Arguments of `vibe_kill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// Id from vibe_spawn (`w1`).
    pub worker_id: String,
}

/// Arguments of `vibe_list` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

/// Each room's roster: a conversation sees, waits for and kills its own workers only; they are
/// stopped when its room ends.
pub(crate) struct Rosters {
    pub backend: Arc<dyn VibeBackend>,
    pub max_run: Duration,
    pub rooms: Arc<Rooms<Roster>>,
}

impl Rosters {
    /// The roster of the call's room, made on its first use.
    fn of(&self, cx: &CallContext) -> Arc<Roster> {
        self.rooms.get_or_init_arc(&cx.room(), || {
            Roster::new(self.backend.clone(), self.max_run)
        })
    }
}

pub(crate) struct Spawn(pub Arc<Rosters>, pub Limits);
pub(crate) struct Send(pub Arc<Rosters>);
pub(crate) struct Wait(pub Arc<Rosters>, pub Limits);
pub(crate) struct Kill(pub Arc<Rosters>);
pub(crate) struct List(pub Arc<Rosters>, pub Limits);

impl Tool for Spawn {
    type Args = SpawnArgs;
    fn name(&self) -> &str {
        "vibe_spawn"
    }
    fn hints(&self) -> Hints {
        // Starts a process that may do anything its program does.
        Hints {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: true,
        }
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn description(&self) -> String {
        "Delegate a self-contained task to a background worker (not work you must steer step by step); workers edit this same checkout. Returns its id at once; collect the result with vibe_wait.".into()
    }
    async fn call(&self, args: SpawnArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        if args.brief.trim().is_empty() {
            return Err(VibeError::InvalidArguments(
                "`brief` is empty; pass what the worker should do".into(),
            )
            .into());
        }
        if args.label.trim().is_empty() {
            return Err(VibeError::InvalidArguments(
                "`label` is empty; pass a short label such as `fix-tests`".into(),
            )
            .into());
        }
        let budget = match args.timeout_s {
            None => self.1.default_budget,
            Some(s) if s >= 1 && s <= self.1.max_run.as_secs() => Duration::from_secs(s),
            Some(s) => {
                return Err(VibeError::InvalidArguments(format!(
                    "`timeout_s` is {s}; pass a number of seconds from 1 to {}",
                    self.1.max_run.as_secs()
                ))
                .into());
            }
        };
        let tier = args.tier;
        let v = self
            .0
            .of(&cx)
            .spawn(
                args.brief,
                args.label.trim().to_string(),
                tier,
                cx.surface,
                budget,
            )
            .await?;
        Ok(ToolOutput::report(&Spawned {
            worker: WorkerRow::of(&v, None),
        }))
    }
}

impl Tool for Send {
    type Args = SendArgs;
    fn name(&self) -> &str {
        "vibe_send"
    }
    fn hints(&self) -> Hints {
        // Stops the worker's current run and starts another.
        Hints {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn description(&self) -> String {
        "Append a message to a worker's brief and rerun it (a current run is stopped). Returns at once; collect with vibe_wait.".into()
    }
    async fn call(&self, args: SendArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        if args.message.trim().is_empty() {
            return Err(VibeError::InvalidArguments(
                "`message` is empty; pass what to add to the worker's brief".into(),
            )
            .into());
        }
        let (v, was_running, unread) = self
            .0
            .of(&cx)
            .send(&args.worker_id, &args.message, cx.surface)
            .await?;
        Ok(ToolOutput::report(&Sent {
            worker: WorkerRow::of(&v, None),
            previous_result: unread,
            was_running,
        }))
    }
}

impl Tool for Wait {
    type Args = WaitArgs;
    fn name(&self) -> &str {
        "vibe_wait"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn description(&self) -> String {
        format!(
            "Wait for a worker's result. After `timeout_s` (default {}s) its current state comes back instead, not an error; it keeps running.",
            self.1.default_wait.as_secs()
        )
    }
    async fn call(&self, args: WaitArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let timeout = wait_timeout(args.timeout_s, self.1.default_wait, self.1.max_wait)?;
        let roster = self.0.of(&cx);
        let wait = roster.wait(&args.worker_id, timeout);
        let (v, ended) = if cx.progress_wanted() {
            // While waiting, the worker's state and last output line, once a second.
            tokio::pin!(wait);
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    r = &mut wait => break r?,
                    _ = tick.tick() => {
                        if let Ok((v, line)) = roster.peek(&args.worker_id) {
                            cx.progress(waiting_line(&v, line.as_deref()));
                        }
                    }
                }
            }
        } else {
            wait.await?
        };
        let result = if ended { v.result.as_deref() } else { None };
        Ok(ToolOutput::report(&Waited {
            worker: WorkerRow::of(&v, result),
            ended,
            waited: timeout,
        }))
    }
}

impl Tool for Kill {
    type Args = KillArgs;
    fn name(&self) -> &str {
        "vibe_kill"
    }
    fn hints(&self) -> Hints {
        // Stops a process.
        Hints {
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        }
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn description(&self) -> String {
        "Stop a worker and everything it started. Its record and last result stay; vibe_send reruns it.".into()
    }
    async fn call(&self, args: KillArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let (v, was_running) = self.0.of(&cx).kill(&args.worker_id).await?;
        Ok(ToolOutput::report(&Killed {
            worker: WorkerRow::of(&v, None),
            was_running,
        }))
    }
}

impl Tool for List {
    type Args = ListArgs;
    fn name(&self) -> &str {
        "vibe_list"
    }
    fn hints(&self) -> Hints {
        Hints::query()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn description(&self) -> String {
        format!(
            "This conversation's workers: id, label, tier, state (running, done, failed, timed_out, killed), elapsed time, last output (stalled after {} silent), start of the last result (vibe_wait gives it whole).",
            agent_tier::display::duration(std::time::Duration::from_secs_f64(
                self.1.stall_after.as_secs_f64()
            ))
        )
    }
    async fn call(&self, _args: ListArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let stall_after = self.1.stall_after.as_secs_f64();
        let workers = self
            .0
            .of(&cx)
            .list()
            .iter()
            .map(|v| {
                let preview = v
                    .result
                    .as_deref()
                    .map(|r| bounded(r, self.1.list_result_chars));
                let silence = v.last_output_seconds_ago.unwrap_or(v.elapsed_seconds);
                Listed {
                    worker: WorkerRow::of(v, preview.as_deref()),
                    unread: v.unread,
                    last_output_seconds_ago: v.last_output_seconds_ago,
                    stalled: v.state == WorkerState::Running && silence >= stall_after,
                }
            })
            .collect();
        Ok(ToolOutput::report(&Roll {
            workers,
            stall_after: self.1.stall_after,
        }))
    }
}
