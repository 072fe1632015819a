//! One conversation's worker roster: every worker it spawned, its state and its last result.
//! Records are kept for the whole run.

use crate::backend::{Heartbeat, VibeBackend, WorkerJob, WorkerTier};
use crate::error::VibeError;
use agent_tier::Surface;
use agent_tier::schemars::{self, JsonSchema};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Where a worker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "snake_case")]
pub enum WorkerState {
    /// Its current run has not ended.
    Running,
    /// Its last run succeeded.
    Done,
    /// Its last run failed (non-zero exit, crash, could not start).
    Failed,
    /// Its last run went over its time budget (`timeout_s`) and was stopped.
    #[serde(rename = "timed_out")]
    TimedOut,
    /// It was stopped with `vibe_kill`.
    Killed,
}

impl WorkerState {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What is known of one worker at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerView {
    /// The worker's id.
    pub worker_id: String,
    /// The label given at spawn.
    pub label: String,
    /// The tier.
    pub tier: WorkerTier,
    /// The state.
    pub state: WorkerState,
    /// How long the current (or last) run has taken, in seconds.
    pub elapsed_seconds: f64,
    /// How many runs it has had (1 + the messages sent).
    pub runs: u32,
    /// The time budget of each run, in seconds.
    pub budget_seconds: f64,
    /// How long ago the current (or last) run last wrote output, in seconds; `None`: it has
    /// written none.
    pub last_output_seconds_ago: Option<f64>,
    /// The last run's result (its stdout, or what went wrong); `None` while the first run is
    /// still going.
    pub result: Option<String>,
    /// Whether that result has not been returned by `vibe_wait` (or `vibe_send`) yet.
    pub unread: bool,
}

struct Worker {
    id: String,
    label: String,
    tier: WorkerTier,
    brief: String,
    /// The gate the worker runs behind: the spawning call's surface, narrowed by every send.
    surface: Surface,
    runs: u32,
    /// Each run's time budget.
    budget: Duration,
    /// When the current (or last) run last wrote output.
    heartbeat: Heartbeat,
    generation: u64,
    state: WorkerState,
    started: Instant,
    ended: Option<Instant>,
    result: Option<String>,
    unread: bool,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Worker {
    fn view(&self) -> WorkerView {
        let end = self.ended.unwrap_or_else(Instant::now);
        WorkerView {
            worker_id: self.id.clone(),
            label: self.label.clone(),
            tier: self.tier,
            state: self.state,
            elapsed_seconds: end.saturating_duration_since(self.started).as_secs_f64(),
            runs: self.runs,
            budget_seconds: self.budget.as_secs_f64(),
            last_output_seconds_ago: self
                .heartbeat
                .last()
                .map(|t| end.saturating_duration_since(t).as_secs_f64()),
            result: self.result.clone(),
            unread: self.unread,
        }
    }
}

struct State {
    next: u64,
    workers: BTreeMap<u64, Worker>,
}

/// The run's workers.
pub struct Roster {
    backend: Arc<dyn VibeBackend>,
    max_run: Duration,
    state: Mutex<State>,
    /// Serialises spawn / send / kill, which stop and start runs.
    ops: tokio::sync::Mutex<()>,
    changed: watch::Sender<u64>,
    me: Weak<Roster>,
}

impl Drop for Roster {
    fn drop(&mut self) {
        // The run is over: stop every worker still going (their groups are killed on drop).
        let state = self.state.get_mut();
        for w in state.workers.values_mut() {
            if let Some(t) = w.task.take() {
                t.abort();
            }
        }
    }
}

fn seq_of(id: &str) -> Option<u64> {
    id.strip_prefix('w')?.parse().ok()
}

impl Roster {
    /// A roster that runs workers through `backend`; no run may be given a budget longer than
    /// `max_run`.
    pub fn new(backend: Arc<dyn VibeBackend>, max_run: Duration) -> Arc<Self> {
        Arc::new_cyclic(|me| Roster {
            backend,
            max_run,
            state: Mutex::new(State {
                next: 1,
                workers: BTreeMap::new(),
            }),
            ops: tokio::sync::Mutex::new(()),
            changed: watch::channel(0).0,
            me: me.clone(),
        })
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    fn unknown(state: &State, id: &str) -> VibeError {
        let ids: Vec<&str> = state.workers.values().map(|w| w.id.as_str()).collect();
        let known = match ids.len() {
            0 => "none (none was spawned in this conversation; vibe_spawn starts one)".to_string(),
            n if n > 20 => format!("{}, … and {} more", ids[n - 20..].join(", "), n - 20),
            _ => ids.join(", "),
        };
        VibeError::UnknownWorker {
            id: id.to_string(),
            known,
        }
    }

    fn with_worker<T>(&self, id: &str, f: impl FnOnce(&mut Worker) -> T) -> Result<T, VibeError> {
        let mut state = self.state.lock();
        let found = seq_of(id).filter(|s| state.workers.contains_key(s));
        match found {
            Some(seq) => match state.workers.get_mut(&seq) {
                Some(w) => Ok(f(w)),
                None => Err(Self::unknown(&state, id)),
            },
            None => Err(Self::unknown(&state, id)),
        }
    }

    /// Start a new run of `w` (which must not have one going).
    fn start(&self, w: &mut Worker) {
        w.generation += 1;
        w.runs += 1;
        w.state = WorkerState::Running;
        w.started = Instant::now();
        w.ended = None;
        w.heartbeat = Heartbeat::default();
        let job = WorkerJob {
            worker_id: w.id.clone(),
            label: w.label.clone(),
            tier: w.tier,
            brief: w.brief.clone(),
            run: w.runs,
            surface: w.surface,
            heartbeat: w.heartbeat.clone(),
        };
        let run = self.backend.run(job);
        let max_run = w.budget.min(self.max_run);
        let me = self.me.clone();
        let (id, generation) = (w.id.clone(), w.generation);
        w.task = Some(tokio::spawn(async move {
            let result = match tokio::time::timeout(max_run, run).await {
                Ok(Ok(out)) => (WorkerState::Done, out),
                Ok(Err(e)) => (WorkerState::Failed, e.to_string()),
                Err(_) => (
                    WorkerState::TimedOut,
                    format!(
                        "timed out: the worker ran longer than its budget of {}s and was stopped with everything it started",
                        max_run.as_secs()
                    ),
                ),
            };
            if let Some(roster) = me.upgrade() {
                roster.finish(&id, generation, result);
            }
        }));
    }

    fn finish(&self, id: &str, generation: u64, (state, result): (WorkerState, String)) {
        let _ = self.with_worker(id, |w| {
            if w.generation != generation {
                return; // a stale run that was replaced or stopped
            }
            w.state = state;
            w.result = Some(result);
            w.unread = true;
            w.ended = Some(Instant::now());
            w.task = None;
        });
        self.bump();
    }

    /// Spawn a worker whose every run has `budget` (at most the roster's `max_run`); returns at
    /// once with its view.
    pub async fn spawn(
        &self,
        brief: String,
        label: String,
        tier: WorkerTier,
        surface: Surface,
        budget: Duration,
    ) -> Result<WorkerView, VibeError> {
        self.backend.check(tier)?;
        let _op = self.ops.lock().await;
        let view = {
            let mut state = self.state.lock();
            let seq = state.next;
            state.next += 1;
            let mut w = Worker {
                id: format!("w{seq}"),
                label,
                tier,
                brief,
                surface,
                runs: 0,
                budget: budget.min(self.max_run),
                heartbeat: Heartbeat::default(),
                generation: 0,
                state: WorkerState::Running,
                started: Instant::now(),
                ended: None,
                result: None,
                unread: false,
                task: None,
            };
            self.start(&mut w);
            let view = w.view();
            state.workers.insert(seq, w);
            view
        };
        self.bump();
        Ok(view)
    }

    /// Stop the current run, if any, and wait until it is gone (its process group killed).
    async fn stop_current(&self, id: &str) -> Result<bool, VibeError> {
        let task = self.with_worker(id, |w| {
            w.generation += 1; // whatever the old run reports now is stale
            w.task.take()
        })?;
        match task {
            Some(t) => {
                t.abort();
                let _ = t.await;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Append `message` to the worker's brief and run it again, stopping the current run.
    /// Returns the new view and the previous run's result if nobody had read it yet.
    pub async fn send(
        &self,
        id: &str,
        message: &str,
        surface: Surface,
    ) -> Result<(WorkerView, bool, Option<String>), VibeError> {
        let _op = self.ops.lock().await;
        let stopped = self.stop_current(id).await?;
        let (view, unread) = self.with_worker(id, |w| {
            // Only a finished run leaves an unread result (a run in progress has none).
            let unread = if w.unread {
                w.unread = false;
                w.result.clone()
            } else {
                None
            };
            w.brief.push_str("\n\n");
            w.brief.push_str(message);
            w.surface = w.surface.narrowest(surface);
            self.start(w);
            (w.view(), unread)
        })?;
        self.bump();
        Ok((view, stopped, unread))
    }

    /// Stop the worker (its process group is killed). Returns its view and whether it was
    /// running.
    pub async fn kill(&self, id: &str) -> Result<(WorkerView, bool), VibeError> {
        let _op = self.ops.lock().await;
        let stopped = self.stop_current(id).await?;
        let view = self.with_worker(id, |w| {
            if stopped {
                w.state = WorkerState::Killed;
                w.ended = Some(Instant::now());
            }
            w.view()
        })?;
        if stopped {
            self.bump();
        }
        Ok((view, stopped))
    }

    /// Wait until the worker's run ends or `timeout` passes; returns its view and whether it
    /// ended. A returned result counts as read.
    pub async fn wait(&self, id: &str, timeout: Duration) -> Result<(WorkerView, bool), VibeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut rx = self.changed.subscribe();
        loop {
            let ended = self.with_worker(id, |w| {
                if w.state == WorkerState::Running {
                    None
                } else {
                    let view = w.view();
                    w.unread = false;
                    Some(view)
                }
            })?;
            if let Some(view) = ended {
                return Ok((view, true));
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return Ok((self.with_worker(id, |w| w.view())?, false));
            }
        }
    }

    /// The worker's view and the last line its current (or last) run wrote, without marking
    /// anything read (for a waiting call's progress).
    pub fn peek(&self, id: &str) -> Result<(WorkerView, Option<String>), VibeError> {
        self.with_worker(id, |w| (w.view(), w.heartbeat.last_line()))
    }

    /// Every worker of this run, oldest first.
    pub fn list(&self) -> Vec<WorkerView> {
        self.state
            .lock()
            .workers
            .values()
            .map(Worker::view)
            .collect()
    }
}
