//! The run's cgroup: a hold on every process of the run that no process can shed by clearing
//! its environment or by leaving its parent.
//!
//! Where the machine offers a writable cgroup v2 (the unified hierarchy, pure or beside v1), the
//! run gets a group `agent-tools-<host pid>-<run>` below the host's own, and each child a group
//! `c<n>` inside it, which the child joins between fork and exec. Everything the child starts is born
//! in the same group, whatever it does to its environment, session or parents. Ending a child
//! writes `cgroup.kill` (Linux ≥ 5.14; before it, each listed pid is SIGKILLed, round after
//! round) of its group; ending the run, or the reaper after a killed host, writes the run
//! group's. The groups are removed once empty.
//!
//! What this does not hold: a process running as a user allowed to write another group's
//! `cgroup.procs` (the host's own user, when the host runs as root) can move itself out; the
//! run's tag and the descendants sweep still apply to it. `AGENT_TOOLS_CGROUP=off` turns the
//! groups off (the tag and descendants sweep remain).

use parking_lot::Mutex;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable that turns the run's cgroup off (`off`).
pub const CGROUP_ENV: &str = "AGENT_TOOLS_CGROUP";

/// The name of the group of run `run`, whose host is `host`: the host's pid tells a later
/// run whether the group is stale.
fn run_name(host: u32, run: &str) -> String {
    format!("agent-tools-{host}-{run}")
}

/// Undo mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup v2 group this process belongs to, as a directory: the unified hierarchy's mount
/// point joined with this process's path in it. `None` where there is no cgroup v2.
pub(crate) fn own_group() -> Option<PathBuf> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let mut f = left.split_whitespace();
        let root = f.nth(3)?;
        let point = f.next()?;
        // A mount of a subtree shows paths relative to its root; only the whole hierarchy (or the
        // namespace's root of it) maps `path` directly.
        (root == "/").then(|| unescape(point))
    })?;
    let dir = Path::new(&mount).join(path.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

/// The group of run `run` of host `host` (whether it exists or not), below this process's own
/// group (the reaper's is the host's).
pub(crate) fn run_dir(host: u32, run: &str) -> Option<PathBuf> {
    Some(own_group()?.join(run_name(host, run)))
}

/// This run's group, made on first use: `None` where cgroup v2 is missing, not writable by this
/// process, or turned off ([`CGROUP_ENV`]).
pub fn run_cgroup() -> Option<&'static Path> {
    static RUN: OnceLock<Option<PathBuf>> = OnceLock::new();
    RUN.get_or_init(|| {
        if std::env::var(CGROUP_ENV).is_ok_and(|v| v == "off") {
            return None;
        }
        let own = own_group()?;
        // Moving a process between two groups needs write access to their common ancestor's
        // `cgroup.procs`: here, the host's own group.
        if !writable(&own.join("cgroup.procs")) {
            tracing::debug!(target: "agent_proc", group = %own.display(), "the host's cgroup is not writable: no run cgroup");
            return None;
        }
        remove_stale(&own);
        let dir = own.join(run_name(std::process::id(), crate::run_id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                tracing::debug!(target: "agent_proc", group = %dir.display(), "the run's cgroup");
                Some(dir)
            }
            Err(e) => {
                tracing::debug!(target: "agent_proc", group = %dir.display(), error = %e, "cannot make the run's cgroup");
                None
            }
        }
    })
    .as_deref()
}

/// How a run on this machine holds the processes that shed its tag and leave their parents, in
/// one line (for `doctor`). Makes nothing.
pub fn orphan_hold() -> String {
    if std::env::var(CGROUP_ENV).is_ok_and(|v| v == "off") {
        return format!(
            "children: {CGROUP_ENV}=off, so a run's orphans are held only by the host as subreaper (ended at a graceful end, not after a SIGKILL of the host)"
        );
    }
    match own_group() {
        Some(g) if writable(&g.join("cgroup.procs")) => format!(
            "children: each run gets a cgroup below {} (cgroup v2{}): what a child starts ends with it, unless it moves itself into another cgroup (which only a process allowed to write there can)",
            g.display(),
            if kill_file_expected(&g) {
                ", cgroup.kill"
            } else {
                "; no cgroup.kill before Linux 5.14: pids killed one by one"
            }
        ),
        Some(g) => format!(
            "children: the host's cgroup {} is not writable, so a run's orphans are held only by the host as subreaper (ended at a graceful end, not after a SIGKILL of the host)",
            g.display()
        ),
        None => "children: no cgroup v2 on this machine, so a run's orphans are held only by the host as subreaper (ended at a graceful end, not after a SIGKILL of the host)".to_string(),
    }
}

/// Whether a group made below `own` has `cgroup.kill`: `own` shows it (the root group never
/// does), or the kernel is 5.14 or later.
fn kill_file_expected(own: &Path) -> bool {
    if own.join("cgroup.kill").exists() {
        return true;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut it = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (major, minor) >= (5, 14)
}

fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    #[allow(unsafe_code)]
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe {
        libc::access(c.as_ptr(), libc::W_OK) == 0
    }
}

/// Remove the empty groups of earlier runs whose host is gone and whose reaper could not (it was
/// killed too). A live host's group is never touched (it may be empty between two children); a
/// group that still holds a process is left as it is (`rmdir` refuses it).
fn remove_stale(own: &Path) {
    let Ok(dir) = std::fs::read_dir(own) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(host) = name
            .to_str()
            .and_then(|n| n.strip_prefix("agent-tools-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let host_alive = Path::new(&format!("/proc/{host}")).exists();
        if !host_alive && !populated(&entry.path()) {
            let _ = remove_tree(&entry.path());
        }
    }
}

/// A child's group, made before it is started: the child joins it between fork and exec by
/// writing `0` into the `cgroup.procs` this holds open.
pub(crate) struct Placement {
    pub(crate) dir: PathBuf,
    procs: OwnedFd,
}

impl Placement {
    /// The group of child `n` of this run, or `None` without a run group.
    pub(crate) fn for_child(n: u64) -> Option<Placement> {
        let run = run_cgroup()?;
        retry_pending();
        let dir = run.join(format!("c{n}"));
        // The run's group is made again if something removed it meanwhile.
        if let Err(e) = std::fs::create_dir_all(&dir) {
            tracing::debug!(target: "agent_proc", group = %dir.display(), error = %e, "cannot make a child's cgroup");
            return None;
        }
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
            .ok()?;
        Some(Placement {
            dir,
            procs: procs.into(),
        })
    }

    /// The descriptor the child writes `0` into (close-on-exec: the program never sees it).
    pub(crate) fn procs_fd(&self) -> i32 {
        self.procs.as_raw_fd()
    }
}

/// In the child, between fork and exec: join the group behind `fd`. Async-signal-safe (one
/// `write`). A failure leaves the child outside the group, with the tag and the descendants
/// sweep still on it.
pub(crate) fn join_in_child(fd: i32) {
    #[allow(unsafe_code)]
    // SAFETY: `fd` is open in the child (inherited across fork); the buffer is a static byte.
    unsafe {
        libc::write(fd, b"0".as_ptr().cast(), 1);
    }
}

/// Whether the group `dir` (or one below it) still holds a live process.
pub(crate) fn populated(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events"))
        .map(|t| t.lines().any(|l| l == "populated 1"))
        .unwrap_or(false)
}

/// SIGKILL every process in the group `dir` and the groups below it. Returns whether the group
/// existed.
pub(crate) fn kill(dir: &Path) -> bool {
    if !dir.is_dir() {
        return false;
    }
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return true;
    }
    // Before Linux 5.14: the listed pids, until a round finds none (a process may fork while
    // the round runs). A pid listed in a group is in it: it cannot be a reused pid of another.
    for _ in 0..20 {
        let pids = pids_below(dir);
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            #[allow(unsafe_code)]
            // SAFETY: kill takes plain integers.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

fn pids_below(dir: &Path) -> Vec<i32> {
    let mut pids: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                pids.extend(pids_below(&e.path()));
            }
        }
    }
    pids
}

/// Remove the group `dir` and the groups below it (deepest first). Fails on a group that still
/// holds a process.
pub(crate) fn remove_tree(dir: &Path) -> io::Result<()> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path())?;
            }
        }
    }
    match std::fs::remove_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Kill the group `dir`, wait (at most `limit`) until it is empty, and remove it. Returns
/// whether it is gone.
pub(crate) fn end(dir: &Path, limit: Duration) -> bool {
    if !kill(dir) {
        return true;
    }
    let deadline = Instant::now() + limit;
    while populated(dir) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    remove_tree(dir).is_ok()
}

/// Child groups whose processes had not exited yet when the child was dropped: removed at the
/// next start of a child, or with the run's group.
fn pending() -> parking_lot::MutexGuard<'static, Vec<PathBuf>> {
    static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    PENDING.lock()
}

/// Remove a child's group now if it is empty, else later.
pub(crate) fn release(dir: PathBuf) {
    if remove_tree(&dir).is_err() {
        pending().push(dir);
    }
}

fn retry_pending() {
    pending().retain(|d| remove_tree(d).is_err());
}

/// At the run's end: kill the run's group and remove it (at most `limit` of waiting).
pub(crate) fn end_run(limit: Duration) {
    if let Some(dir) = run_cgroup() {
        end(dir, limit);
        pending().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/sys/fs/cgroup"), "/sys/fs/cgroup");
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/tail\\04"), "/tail\\04");
    }
}
