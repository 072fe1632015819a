//! The results of the five `vibe_*` tools as values, and the text a model reads of each,
//! rendered from the value in one place ([`Report::text`]).

use crate::backend::WorkerTier;
use crate::roster::{WorkerState, WorkerView};
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// The first `chars` characters of `text` on one line, with `…` when cut.
pub fn bounded(text: &str, chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= chars {
        flat
    } else {
        let cut: String = flat.chars().take(chars).collect();
        format!("{cut}…")
    }
}

/// One worker as a result shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WorkerRow {
    /// Its id (`w1`).
    pub(crate) worker_id: String,
    /// The label given at spawn.
    pub(crate) label: String,
    /// Its tier.
    pub(crate) tier: WorkerTier,
    /// Where it is.
    pub(crate) state: WorkerState,
    /// How long the current (or last) run has taken, in seconds.
    pub(crate) elapsed_seconds: f64,
    /// How many runs it has had.
    pub(crate) runs: u32,
    /// The last run's result as this call returns it (whole from `vibe_wait`, its start from
    /// `vibe_list`); null when the call returns none.
    pub(crate) result: Option<String>,
}

impl WorkerRow {
    /// The worker `v`, with `result` as the call returns it.
    pub(crate) fn of(v: &WorkerView, result: Option<&str>) -> Self {
        WorkerRow {
            worker_id: v.worker_id.clone(),
            label: v.label.clone(),
            tier: v.tier,
            state: v.state,
            elapsed_seconds: v.elapsed_seconds,
            runs: v.runs,
            result: result.map(str::to_string),
        }
    }

    /// `w1 (fix-tests, fast tier): running after 3.2s, run 1`.
    pub(crate) fn header(&self) -> String {
        format!(
            "{} ({}, {} tier): {} after {}, run {}",
            self.worker_id,
            self.label,
            self.tier,
            self.state.as_str(),
            agent_tier::display::duration(std::time::Duration::from_secs_f64(self.elapsed_seconds)),
            self.runs
        )
    }
}

/// The result of `vibe_spawn`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Spawned {
    /// The worker, running.
    #[serde(flatten)]
    pub(crate) worker: WorkerRow,
}

impl Report for Spawned {
    fn text(&self) -> String {
        let w = &self.worker;
        format!(
            "spawned {} ({}, {} tier); it is running. Collect its result with vibe_wait {{\"worker_id\": \"{}\"}}.",
            w.worker_id, w.label, w.tier, w.worker_id
        )
    }
}

/// The result of `vibe_send`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Sent {
    /// The worker, running again.
    #[serde(flatten)]
    pub(crate) worker: WorkerRow,
    /// The previous run's result, when nobody had read it.
    pub(crate) previous_result: Option<String>,
    /// A run was going and was stopped.
    #[serde(skip)]
    pub(crate) was_running: bool,
}

impl Report for Sent {
    fn text(&self) -> String {
        let mut text = format!(
            "{} ({}) runs again with the message appended to its brief{}; collect its result with vibe_wait.",
            self.worker.worker_id,
            self.worker.label,
            if self.was_running {
                " (its previous run was stopped)"
            } else {
                ""
            }
        );
        if let Some(prev) = &self.previous_result {
            let _ = write!(text, "\nIts previous result, not read before:\n{prev}");
        }
        text
    }
}

/// The result of `vibe_wait`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Waited {
    /// The worker; its whole result when its run ended.
    #[serde(flatten)]
    pub(crate) worker: WorkerRow,
    /// Its run ended (else the wait timed out and it is still running).
    #[serde(skip)]
    pub(crate) ended: bool,
    /// How long the call waited at most.
    #[serde(skip)]
    pub(crate) waited: Duration,
}

impl Report for Waited {
    fn text(&self) -> String {
        let mut text = self.worker.header();
        if !self.ended {
            let _ = write!(
                text,
                "\nstill running after waiting {}; wait again, send it a message, or kill it.",
                agent_tier::display::duration(std::time::Duration::from_secs_f64(
                    self.waited.as_secs_f64()
                ))
            );
            return text;
        }
        match &self.worker.result {
            Some(r) if !r.trim().is_empty() => {
                let _ = write!(text, "\nresult:\n{r}");
            }
            Some(_) => text.push_str("\nresult: (empty output)"),
            None => text.push_str("\nresult: (none: it was stopped before its first run ended)"),
        }
        text
    }
}

/// The result of `vibe_kill`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Killed {
    /// The worker.
    #[serde(flatten)]
    pub(crate) worker: WorkerRow,
    /// A run was going and was stopped.
    #[serde(skip)]
    pub(crate) was_running: bool,
}

impl Report for Killed {
    fn text(&self) -> String {
        if self.was_running {
            format!("{}: stopped.", self.worker.header())
        } else {
            format!(
                "{}: it was not running, so nothing was stopped.",
                self.worker.header()
            )
        }
    }
}

/// One worker in `vibe_list`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Listed {
    /// The worker; the start of its last result.
    #[serde(flatten)]
    pub(crate) worker: WorkerRow,
    /// Its last result has not been returned by `vibe_wait` (or `vibe_send`) yet.
    pub(crate) unread: bool,
    /// How long ago its current (or last) run last wrote output, in seconds; null: none yet.
    pub(crate) last_output_seconds_ago: Option<f64>,
    /// It is running and has been silent for the stall time or longer.
    pub(crate) stalled: bool,
}

/// The result of `vibe_list`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Roll {
    /// This conversation's workers, oldest first.
    pub(crate) workers: Vec<Listed>,
    /// The silence after which a running worker is stalled.
    #[serde(skip)]
    pub(crate) stall_after: Duration,
}

impl Report for Roll {
    fn text(&self) -> String {
        if self.workers.is_empty() {
            return "no workers in this conversation yet; start one with vibe_spawn".into();
        }
        let stall_after = agent_tier::display::duration(std::time::Duration::from_secs_f64(
            self.stall_after.as_secs_f64(),
        ));
        let mut text = String::new();
        let (mut running, mut unread, mut stalled) = (0, 0, 0);
        for l in &self.workers {
            text.push_str(&l.worker.header());
            if l.worker.state == WorkerState::Running {
                running += 1;
                match l.last_output_seconds_ago {
                    Some(s) => {
                        let _ = write!(
                            text,
                            ", last output {} ago",
                            agent_tier::display::duration(std::time::Duration::from_secs_f64(s))
                        );
                    }
                    None => text.push_str(", no output yet"),
                }
                if l.stalled {
                    stalled += 1;
                    let _ = write!(
                        text,
                        "; STALLED (silent over {stall_after}): wait, send it a message, or kill it"
                    );
                }
            }
            if let Some(preview) = &l.worker.result {
                let mark = if l.unread {
                    unread += 1;
                    " (unread)"
                } else {
                    ""
                };
                let _ = write!(text, "\n    last result{mark}: {preview}");
            }
            text.push('\n');
        }
        let stalled = if stalled > 0 {
            format!(" ({stalled} stalled)")
        } else {
            String::new()
        };
        let _ = write!(
            text,
            "{} workers, {running} running{stalled}, {unread} with an unread result",
            self.workers.len()
        );
        text
    }
}
