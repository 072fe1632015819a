//! The host as subreaper, where the run has no cgroup: a process that cleared the run's tag
//! and left its parent is adopted by the host instead of init, ended at the run's end, and
//! reaped when it exits (no zombie is left).
//!
//! What this does not hold: an orphan adopted by the host cannot be told apart by child, so
//! ending one child (a kernel's `reset`, `debug terminate`) does not end it; and a host killed
//! outright hands its adoptees on to init, out of the reaper's sight. The run's cgroup holds
//! both (see the `cgroup` module).

use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::Duration;

/// The pids this process started itself (tokio's children and the reaper): never reaped here,
/// their owners wait for them. Held while a child is forked, so a child cannot exit unseen.
pub(crate) fn ours() -> parking_lot::MutexGuard<'static, HashSet<u32>> {
    static OURS: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    OURS.get_or_init(Default::default).lock()
}

/// Make this process a subreaper and start reaping what it adopts (once). Returns whether it
/// is one.
pub(crate) fn ensure() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        #[allow(unsafe_code)]
        // SAFETY: prctl with integer arguments.
        let set = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
        if !set {
            tracing::debug!(target: "agent_proc", error = %std::io::Error::last_os_error(), "cannot become a subreaper");
            return false;
        }
        let reaping = std::thread::Builder::new()
            .name("agent-proc-adopted".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_millis(500));
                    reap();
                }
            });
        if reaping.is_err() {
            // Without the thread adoptees would stay zombies: give adoption up.
            #[allow(unsafe_code)]
            // SAFETY: prctl with integer arguments.
            unsafe {
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            }
            return false;
        }
        tracing::debug!(target: "agent_proc", "the host adopts its descendants' orphans");
        true
    })
}

/// The children of this process that it did not start: `(pid, zombie)`.
fn adopted() -> Vec<(i32, bool)> {
    let me = std::process::id() as i32;
    let ours = ours();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| u32::try_from(*pid).is_ok_and(|p| !ours.contains(&p)))
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &text[text.rfind(')')? + 1..];
            let mut it = rest.split_whitespace();
            let state = it.next()?;
            let ppid: i32 = it.next()?.parse().ok()?;
            (ppid == me).then_some((pid, matches!(state, "Z" | "X")))
        })
        .collect()
}

/// Reap the adoptees that exited.
fn reap() {
    for (pid, zombie) in adopted() {
        if zombie {
            #[allow(unsafe_code)]
            // SAFETY: waitpid on a pid that is our child and not one any owner waits for.
            unsafe {
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
    }
}

/// The live adoptees, for the run's end.
pub(crate) fn live_adoptees() -> Vec<i32> {
    adopted()
        .into_iter()
        .filter(|(_, z)| !*z)
        .map(|(p, _)| p)
        .collect()
}
