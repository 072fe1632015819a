//! Finding and ending what a child left behind, by a walk of `/proc`.
//!
//! Every child carries `AGENT_TOOLS_RUN_<run>=<n>` in its environment, and every descendant
//! inherits it, even one that left the process group (`setsid`, `start_new_session=True`, node
//! `detached`, a double fork). A sweep takes one snapshot of `/proc` (parent pid, state and tag
//! of each process), selects the processes that carry the tag plus every descendant of a root
//! (by parent pid, which also catches a descendant that cleared its environment before it could
//! escape), and SIGKILLs them through a pidfd after checking that the pid still names the process
//! that was selected. It repeats until a snapshot selects nothing new (a process may fork while
//! it is being swept).

use std::collections::{HashMap, HashSet};
use std::fs;

/// Which processes a sweep ends.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every process of the run `run`.
    Run(&'a str),
    /// The processes of child `n` of run `run`.
    Child(&'a str, u64),
}

#[derive(Debug, Clone)]
struct Proc {
    ppid: i32,
    zombie: bool,
    tagged: bool,
}

/// The parent pid and whether `pid` is a zombie (or dead), from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(i32, bool)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: parse after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((ppid, matches!(state, "Z" | "X" | "x")))
}

/// Whether `pid`'s environment carries the tag of `scope`.
pub fn tagged(pid: i32, scope: Scope<'_>) -> bool {
    let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let (run, n) = match scope {
        Scope::Run(r) => (r, None),
        Scope::Child(r, n) => (r, Some(n)),
    };
    let name = crate::tag_name(run);
    env.split(|b| *b == 0).any(|entry| {
        let Some(value) = entry
            .strip_prefix(name.as_bytes())
            .and_then(|r| r.strip_prefix(b"="))
        else {
            return false;
        };
        n.is_none_or(|n| value == n.to_string().as_bytes())
    })
}

fn snapshot(scope: Scope<'_>) -> HashMap<i32, Proc> {
    let me = std::process::id() as i32;
    let mut out = HashMap::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Some((ppid, zombie)) = stat(pid) {
            let tagged = !zombie && tagged(pid, scope);
            out.insert(
                pid,
                Proc {
                    ppid,
                    zombie,
                    tagged,
                },
            );
        }
    }
    out
}

/// The processes of `scope` and the descendants of `roots` in one snapshot (zombies excluded).
pub fn select(scope: Scope<'_>, roots: &[i32]) -> Vec<i32> {
    select_in(&snapshot(scope), roots)
}

fn select_in(procs: &HashMap<i32, Proc>, roots: &[i32]) -> Vec<i32> {
    let mut chosen: HashSet<i32> = procs
        .iter()
        .filter(|(_, p)| p.tagged)
        .map(|(pid, _)| *pid)
        .collect();
    let mut parents: HashSet<i32> = chosen
        .iter()
        .copied()
        .chain(roots.iter().copied())
        .collect();
    loop {
        let more: Vec<i32> = procs
            .iter()
            .filter(|(pid, p)| parents.contains(&p.ppid) && !parents.contains(pid))
            .map(|(pid, _)| *pid)
            .collect();
        if more.is_empty() {
            break;
        }
        for pid in more {
            parents.insert(pid);
            chosen.insert(pid);
        }
    }
    let mut v: Vec<i32> = chosen
        .into_iter()
        .filter(|pid| procs.get(pid).is_some_and(|p| !p.zombie))
        .collect();
    v.sort_unstable();
    v
}

/// A pidfd for `pid` if, once the pidfd pins it, it still carries the tag of `scope` or still has
/// the parent `ppid`: never a pid that was reused meanwhile.
fn pin(pid: i32, scope: Scope<'_>, ppid: Option<i32>) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    #[allow(unsafe_code)]
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    #[allow(unsafe_code)]
    // SAFETY: `fd` was just returned by pidfd_open and is owned by nobody else.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let same = tagged(pid, scope) || (ppid.is_some() && stat(pid).map(|s| s.0) == ppid);
    same.then_some(fd)
}

/// SIGKILL the process a pidfd pins.
fn kill_pinned(fd: &std::os::fd::OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    #[allow(unsafe_code)]
    // SAFETY: `fd` is a live pidfd; a null siginfo is allowed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    r == 0
}

pub(crate) fn kill_checked(pid: i32, scope: Scope<'_>, ppid: Option<i32>) -> bool {
    pin(pid, scope, ppid).is_some_and(|fd| kill_pinned(&fd))
}

/// End every process of `scope` and every descendant of `roots` (their pids as the host sees
/// them). `groups` are process groups the host itself started and has not reaped the leaders
/// of: they are SIGKILLed after the first round, whose snapshot is taken (and checked) while
/// descendants are still attached to their parents. Returns how many processes were signalled
/// (the groups aside).
pub fn sweep(scope: Scope<'_>, roots: &[i32], groups: &[i32]) -> usize {
    let mut seen: HashSet<i32> = HashSet::new();
    let mut signalled = 0;
    for round in 0..20 {
        let procs = snapshot(scope);
        let fresh: Vec<i32> = select_in(&procs, roots)
            .into_iter()
            .filter(|p| !seen.contains(p))
            .collect();
        // Pin and check every process before signalling any, so that a parent killed first
        // cannot orphan a child out of the set.
        let pinned: Vec<_> = fresh
            .iter()
            .filter_map(|pid| pin(*pid, scope, procs.get(pid).map(|p| p.ppid)))
            .collect();
        signalled += pinned.iter().filter(|fd| kill_pinned(fd)).count();
        for g in groups.iter().filter(|g| round == 0 && **g > 1) {
            #[allow(unsafe_code)]
            // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
            unsafe {
                libc::killpg(*g, libc::SIGKILL);
            }
        }
        if fresh.is_empty() {
            break;
        }
        // A pid gone already or no longer ours is not a reason to look again either.
        seen.extend(fresh);
    }
    signalled
}

/// SIGKILL a pid a child reported (a debuggee's pid from a debug adapter) only if it carries the
/// tag of `scope`: a pid from another pid namespace, or one that was reused, is left alone.
pub fn kill_reported(pid: u32, scope: Scope<'_>) -> bool {
    let Some(p) = i32::try_from(pid).ok().filter(|p| *p > 1) else {
        return false;
    };
    // A process in the middle of `execve` shows an empty environment for an instant (its new
    // memory is mapped before its environment is): ask again, briefly, rather than leave our own
    // debuggee running. Any other answer is final.
    for _ in 0..5 {
        if kill_checked(p, scope, None) {
            return true;
        }
        let mid_exec = fs::read(format!("/proc/{p}/environ")).is_ok_and(|e| e.is_empty());
        if !mid_exec {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ppid: i32, tagged: bool) -> Proc {
        Proc {
            ppid,
            zombie: false,
            tagged,
        }
    }

    #[test]
    fn selects_tagged_and_descendants_only() {
        let mut procs = HashMap::new();
        procs.insert(10, p(1, false)); // the root, untagged (a launcher cleared env)
        procs.insert(11, p(10, false)); // its child
        procs.insert(12, p(11, false)); // grandchild
        procs.insert(20, p(1, true)); // an escaped, tagged process
        procs.insert(21, p(20, false)); // its child with a cleared environment
        procs.insert(30, p(1, false)); // someone else's
        procs.insert(
            31,
            Proc {
                ppid: 20,
                zombie: true,
                tagged: false,
            },
        );
        assert_eq!(select_in(&procs, &[10]), vec![11, 12, 20, 21]);
        assert_eq!(select_in(&procs, &[]), vec![20, 21]);
    }
}
