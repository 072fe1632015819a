//! The end of the run: polite exits registered by the families ([`on_shutdown`]), then every
//! live child's group signalled, then the run's sweep.

use super::{EVER_STARTED, RUN_ENDING, killpg, live};
use crate::run_id;
use crate::sweep::{self, Scope};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

type Hook = Arc<dyn Fn() -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

fn farewells() -> parking_lot::MutexGuard<'static, HashMap<u64, Hook>> {
    static HOOKS: OnceLock<Mutex<HashMap<u64, Hook>>> = OnceLock::new();
    HOOKS.get_or_init(Default::default).lock()
}

/// A polite exit registered with [`on_shutdown`]; dropping it unregisters it.
#[derive(Debug)]
pub struct Farewell(u64);

impl Drop for Farewell {
    fn drop(&mut self) {
        farewells().remove(&self.0);
    }
}

/// Register a polite exit to run when the run ends ([`shutdown`]), before any signal: a language
/// server's `shutdown`/`exit`, a debug session's `disconnect` (which lets a program we only
/// attached to run on). This crate only runs it; the caller speaks the protocol.
pub fn on_shutdown<F, Fut>(f: F) -> Farewell
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let hook: Hook = Arc::new(move || Box::pin(f()));
    farewells().insert(id, hook);
    Farewell(id)
}

/// End every child of this run: first the registered polite exits ([`on_shutdown`], together,
/// at most `grace`), then SIGTERM to each live child's group, up to `grace` for them to exit,
/// then SIGKILL, then the run's sweep (everything that carries the run's tag, wherever it went)
/// and the run's cgroup (everything born in it, whatever it did to its environment).
/// Returns how many processes the sweep signalled.
pub async fn shutdown(grace: Duration) -> usize {
    RUN_ENDING.store(true, Ordering::SeqCst);
    tracing::info!(target: "agent_proc", children = live().len(), "ending the run's children");
    let hooks: Vec<Hook> = farewells().values().cloned().collect();
    let mut polite = tokio::task::JoinSet::new();
    for hook in hooks {
        polite.spawn(hook());
    }
    let _ =
        tokio::time::timeout(grace, async { while polite.join_next().await.is_some() {} }).await;
    polite.abort_all();
    if !EVER_STARTED.load(Ordering::SeqCst) {
        // No child was ever started: nothing carries the run's tag and its cgroup was never
        // made, so there is nothing to signal or sweep (a `call` of a tool that starts no
        // process ends without reading every process's `/proc` entry).
        return 0;
    }
    let children: Vec<(u32, Arc<AtomicBool>)> = live().values().cloned().collect();
    for (pid, reaped) in &children {
        if !reaped.load(Ordering::SeqCst) {
            killpg(*pid, libc::SIGTERM);
        }
    }
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline
        && children
            .iter()
            .any(|(pid, reaped)| !reaped.load(Ordering::SeqCst) && running(*pid))
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let roots: Vec<libc::pid_t> = children
        .iter()
        .filter(|(_, reaped)| !reaped.load(Ordering::SeqCst))
        .filter_map(|(pid, _)| libc::pid_t::try_from(*pid).ok())
        .collect();
    // Orphans the host adopted (where it is a subreaper) count as roots: what they started is
    // swept with the rest, then they are killed; what that orphans is adopted in turn.
    let adoptees = crate::adopt::live_adoptees();
    let all: Vec<libc::pid_t> = roots.iter().chain(&adoptees).copied().collect();
    let mut signalled = sweep::sweep(Scope::Run(run_id()), &all, &roots);
    let me = std::process::id() as libc::pid_t;
    let mut adoptees = adoptees;
    for _ in 0..5 {
        if adoptees.is_empty() {
            break;
        }
        signalled += sweep::sweep(Scope::Run(run_id()), &adoptees, &[]);
        signalled += adoptees
            .iter()
            .filter(|p| sweep::kill_checked(**p, Scope::Run(run_id()), Some(me)))
            .count();
        tokio::time::sleep(Duration::from_millis(20)).await;
        adoptees = crate::adopt::live_adoptees();
    }
    tracing::debug!(target: "agent_proc", signalled, "the run's sweep");
    // What shed the tag and left its parents is still in the run's cgroup.
    let _ = tokio::task::spawn_blocking(|| crate::cgroup::end_run(Duration::from_secs(1))).await;
    signalled
}

/// Whether `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            let rest = t[t.rfind(')')? + 1..].trim_start().to_string();
            rest.chars().next()
        })
        .is_some_and(|state| state != 'Z' && state != 'X')
}
