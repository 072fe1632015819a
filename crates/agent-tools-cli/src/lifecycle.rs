//! The host's life and end: the reaper it arms, the signals that end it, and ending every
//! process of the run before it exits.
//!
//! On SIGTERM, SIGINT or SIGHUP the command in progress is abandoned, the families' polite exits
//! run (debug sessions disconnect, language servers shut down), then every child of the run is
//! sent SIGTERM (adapters, servers, kernels, workers), given a grace to exit, SIGKILLed, and
//! whatever escaped from them (a new session, a double fork) is swept by the run's tag; then the
//! host exits with 128 + the signal. A normal end does the same sweep. A
//! SIGKILLed host runs none of this: its direct children die of their parent-death signal and
//! the reaper sweeps the rest.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The hidden subcommand the host re-executes itself with to become the run's reaper.
pub const REAPER_ARG: &str = "__agent-tools-reaper";

/// How long children get between SIGTERM and SIGKILL when the host ends.
const GRACE: Duration = Duration::from_secs(2);

/// When this process was started as the reaper (`agent-tools __agent-tools-reaper RUN`), run it.
pub fn as_reaper(args: &[String]) -> Option<ExitCode> {
    (args.first().map(String::as_str) == Some(REAPER_ARG)).then(|| {
        ExitCode::from(agent_proc::reaper::main(
            args.get(1).map(String::as_str).unwrap_or(""),
        ))
    })
}

/// Arm the run's reaper (this binary, re-executed), which starts just before the run's first
/// child (`agent_proc::reaper::arm`). Without it a SIGKILLed host would leave behind what its
/// children started in new sessions; a run that starts no child has nothing to leave.
///
/// Also withholds the HTTP bearer token's variable from every child, the reaper first: the token
/// lives in the host only.
pub fn arm_reaper() {
    agent_proc::withhold_env(crate::http::TOKEN_ENV);
    // `/proc/self/exe`, not the binary's path: the reaper may start long after the host did, and
    // by then the file at that path may be another version (an upgrade) or gone; the running
    // image is always this one.
    agent_proc::reaper::arm(PathBuf::from("/proc/self/exe"), &[REAPER_ARG]);
}

/// The first of SIGTERM, SIGINT, SIGHUP to arrive (never, if they cannot be watched).
async fn ending_signal() -> i32 {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    async fn next(kind: SignalKind) -> i32 {
        let mut s: Option<Signal> = signal(kind).ok();
        match s.as_mut() {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
        kind.as_raw_value()
    }
    tokio::select! {
        sig = next(SignalKind::terminate()) => sig,
        sig = next(SignalKind::interrupt()) => sig,
        sig = next(SignalKind::hangup()) => sig,
    }
}

/// Run the command until it ends or an ending signal arrives; then end every process of the run.
pub async fn run(command: impl Future<Output = ExitCode>) -> ExitCode {
    let code = tokio::select! {
        code = command => code,
        sig = ending_signal() => {
            tracing::info!(signal = sig, "ending on a signal");
            ExitCode::from(u8::try_from(128 + sig).unwrap_or(1))
        }
    };
    tracing::debug!("ending every process of the run");
    agent_proc::shutdown(GRACE).await;
    code
}
