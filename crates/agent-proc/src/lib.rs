//! # agent-proc — the one process layer of agent-tools
//!
//! This crate is the only code in the workspace that starts a child process. It owns:
//!
//! - [`Command`] → [`Child`]: a supervised child leads its own session and process group (no
//!   controlling terminal: it cannot read the person's terminal or push keystrokes into it),
//!   never sees a variable the host [withholds](withhold_env) (the HTTP token), gets only an
//!   allow-listed environment when asked ([`Command::env_only`]), carries the run's
//!   tag in its environment (`AGENT_TOOLS_RUN_<run>=<n>`, inherited by every descendant, even one
//!   that starts a new session), and gets `PR_SET_PDEATHSIG(SIGKILL)`, so a host killed outright
//!   takes its direct children with it. Its stderr is pumped into a bounded [`Tail`] whose end can
//!   be awaited; waits are bounded; [`Child::terminate`] is SIGTERM → grace → SIGKILL; ending a
//!   child ends everything that carries its tag or descends from it ([`sweep`]), and everything
//!   in its cgroup where the machine offers a writable cgroup v2 ([`run_cgroup`]: a group per
//!   run, one per child inside it, `cgroup.kill`); elsewhere the host is a subreaper that adopts,
//!   ends at the run's end and reaps what left its parents ([`orphan_hold`] says which).
//! - Every spawn happens on one long-lived thread of this crate: `PR_SET_PDEATHSIG` fires when the
//!   *thread* that forked the child exits, so a child spawned from a short-lived thread (a
//!   `spawn_blocking` worker that tokio retires after 10 s idle) would be killed at random.
//! - [`Confinement`]: Landlock for a child where bubblewrap cannot run (read everything, write
//!   and run programs only where it says, no capability, no TCP, no signal outside), with a
//!   seccomp filter beside it: no socket but a Unix or netlink one, no io_uring.
//! - [`Launcher`]: on the host, or behind a sandbox prefix (`docker exec -i box`); it decides on
//!   which side of the boundary a program name is resolved, and whether a pid a child reports
//!   is one of ours ([`Launcher::owns_reported_pids`]).
//! - [`describe_exit`]: the one wording of an exit status.
//! - The run as a whole: [`shutdown`] runs the polite exits registered with [`on_shutdown`], then
//!   ends every live child of the run (SIGTERM, grace, SIGKILL, then the run's sweep), and
//!   [`reaper`] is the small process that sweeps the run after a host that died without running
//!   any code of ours.
//!
//! - The log: `tracing` events (target `agent_proc`) when a child starts (`info`: purpose, pid,
//!   command line), exits on its own with a failure (`warn`: the crash, its status and how many
//!   stderr bytes its tail holds), is terminated or killed (`info`), and what a sweep signalled
//!   (`debug`). The host's subscriber prints them; this crate installs none.
//!
//! It never speaks a protocol (the caller does the polite exit: LSP `shutdown`, DAP
//! `disconnect`), never signals a pid it did not start or that does not carry the run's tag, and
//! never spawns from the caller's thread.

mod adopt;
mod cgroup;
mod child;
mod confine;
mod exit;
mod launcher;
pub mod reaper;
mod seccomp;
mod spawner;
pub mod sweep;
mod tail;

pub use cgroup::{CGROUP_ENV, orphan_hold, run_cgroup};
pub use child::{Child, Command, Farewell, Output, RunError, on_shutdown, shutdown, with_purpose};
pub use confine::{Confinement, landlock_abi};
pub use exit::describe_exit;
pub use launcher::Launcher;
pub use tail::Tail;

use std::sync::OnceLock;

/// The prefix of the environment variable that tags every process of a run.
pub const TAG_PREFIX: &str = "AGENT_TOOLS_RUN_";

/// This process's run id: random, made once, the suffix of the tag variable's name.
pub fn run_id() -> &'static str {
    static RUN: OnceLock<String> = OnceLock::new();
    RUN.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::hash::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        format!("{:016x}", h.finish())
    })
}

/// Never pass the environment variable `name` to a child (the host's secrets: its HTTP bearer
/// token). Every child started from then on, the reaper included, lacks it.
pub fn withhold_env(name: &str) {
    let mut w = WITHHELD.lock();
    if !w.iter().any(|n| n == name) {
        w.push(name.to_string());
    }
}

static WITHHELD: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());

/// The names [`withhold_env`] was given.
pub(crate) fn withheld() -> Vec<String> {
    WITHHELD.lock().clone()
}

/// The name of the tag variable of the run `run`.
pub fn tag_name(run: &str) -> String {
    format!("{TAG_PREFIX}{run}")
}
