//! The reaper: a small process that ends the run's processes after the host is gone, however
//! it went (SIGKILL included, when no code of the host runs).
//!
//! The host binary arms it once ([`arm`]: how to re-execute itself with a hidden subcommand that
//! calls [`main`]), and the spawner starts it just before the run's first child: a run that
//! starts no child (a `call` of `grep`) has nothing to reap and never pays for a process. [`start`]
//! starts it at once. It watches the host's pid through a pidfd (readable when the host has
//! exited; no other process can hold it open), and holds the read end of a pipe whose write end
//! the host holds (every descriptor the host opens is close-on-exec, so no other child inherits
//! it): end-of-file means the host has exited too, where pidfds are missing. It then kills the
//! run's cgroup where there is one, sweeps every process that carries the run's tag, and exits.
//! It leads its own process group, ignores the terminal's SIGINT and SIGHUP, and has no
//! parent-death signal (it must outlive the host); it carries `AGENT_TOOLS_REAPER=<run>` and
//! not the run's tag.
//! Direct children need it least: their parent-death signal already ended them.

use crate::sweep::{self, Scope};
use parking_lot::Mutex;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Stdio};
use std::sync::OnceLock;

/// The environment variable the reaper carries (its value is the run id).
pub const REAPER_ENV: &str = "AGENT_TOOLS_REAPER";

/// The environment variable that tells the reaper the host's pid.
const HOST_ENV: &str = "AGENT_TOOLS_REAPER_HOST";

/// How to start the reaper, once [`arm`]ed: the program and its arguments.
static ARMED: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();

/// Arrange for the reaper (`exe args… <run id>`, as [`start`] runs it) to start just before the
/// run's first child is forked. Arming twice keeps the first.
pub fn arm(exe: PathBuf, args: &[&str]) {
    let _ = ARMED.set((exe, args.iter().map(|a| a.to_string()).collect()));
}

/// Start the armed reaper unless it runs (the spawner calls this before every fork; only the
/// first call does anything, and a failure is logged once, not retried).
pub(crate) fn start_armed() {
    static TRIED: std::sync::Once = std::sync::Once::new();
    let Some((exe, args)) = ARMED.get() else {
        return;
    };
    TRIED.call_once(|| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match start(exe, &args) {
            Ok(pid) => tracing::debug!(pid, "reaper started"),
            Err(e) => tracing::warn!(
                error = %e,
                "cannot start the reaper; processes that leave their group may outlive a killed host"
            ),
        }
    });
}

/// Start the reaper for this process's run: `exe args… <run id>`, where `exe args…` calls
/// [`main`] with the run id. Returns its pid. Starting it twice is a no-op.
pub fn start(exe: &Path, args: &[&str]) -> std::io::Result<u32> {
    static HELD: OnceLock<Mutex<Option<(u32, ChildStdin)>>> = OnceLock::new();
    let held = HELD.get_or_init(Default::default);
    let mut held = held.lock();
    if let Some((pid, _)) = held.as_ref() {
        return Ok(*pid);
    }
    let run = crate::run_id();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args)
        .arg(run)
        .env(REAPER_ENV, run)
        .env(HOST_ENV, std::process::id().to_string())
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in crate::withheld() {
        cmd.env_remove(name);
    }
    #[allow(unsafe_code)]
    // SAFETY: setsid is async-signal-safe; the closure allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut ours = crate::adopt::ours();
    let mut child = cmd.spawn()?;
    ours.insert(child.id());
    drop(ours);
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the reaper has no stdin pipe"))?;
    // The `Child` is dropped without a wait: the reaper outlives every wait the host could do.
    *held = Some((child.id(), stdin));
    Ok(child.id())
}

/// Return once the host is gone: its pid's pidfd became readable (it exited), or end-of-file on
/// stdin (the pipe's write end closed). A child of the host that reopened that pipe through
/// `/proc/<host>/fd/N` holds a write end too and would keep end-of-file from ever coming; the
/// pidfd cannot be held open by anyone else. Where `pidfd_open` is missing (Linux < 5.3), the
/// pipe alone.
fn wait_for_host(host: libc::pid_t) {
    if host <= 1 {
        // Reparented already: the host is gone.
        return;
    }
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    #[allow(unsafe_code)]
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, host, 0) } as i32;
    // The host may have gone between getppid and pidfd_open (the pid then names another
    // process, or none): the parent is asked again.
    #[allow(unsafe_code)]
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != host {
        return;
    }
    let mut buf = [0u8; 64];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let n: libc::nfds_t = if pidfd >= 0 { 2 } else { 1 };
        // SAFETY: `fds` holds `n` valid pollfd entries for the duration of the call.
        #[allow(unsafe_code)]
        let r = unsafe { libc::poll(fds.as_mut_ptr(), n, -1) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if pidfd >= 0 && fds[1].revents != 0 {
            return;
        }
        let ev = fds[0].revents;
        if ev & libc::POLLIN != 0 {
            match std::io::stdin().lock().read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        } else if ev & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return;
        }
    }
}

/// The reaper's body: wait until the host is gone (its pid exits, or the pipe closes), then
/// end every process of the run `run`. Returns the exit code.
pub fn main(run: &str) -> u8 {
    if run.is_empty() || !run.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return 2;
    }
    for sig in [libc::SIGINT, libc::SIGHUP, libc::SIGPIPE] {
        #[allow(unsafe_code)]
        // SAFETY: setting a signal to SIG_IGN installs no handler code.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    // The host says its pid (it may be gone before this line runs); else the parent is it.
    #[allow(unsafe_code)]
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    let host = std::env::var(HOST_ENV)
        .ok()
        .and_then(|h| h.parse::<libc::pid_t>().ok())
        .unwrap_or(parent);
    wait_for_host(host);
    // Everything born in the run's cgroup first (whatever it did to its environment and
    // parents), then everything that carries the run's tag.
    let group = u32::try_from(host)
        .ok()
        .filter(|h| *h > 1)
        .and_then(|h| crate::cgroup::run_dir(h, run));
    if let Some(g) = &group {
        crate::cgroup::kill(g);
    }
    // A process may still be forking while the first sweep runs: sweep until one finds nothing.
    for _ in 0..5 {
        if sweep::sweep(Scope::Run(run), &[], &[]) == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if let Some(g) = &group {
        crate::cgroup::end(g, std::time::Duration::from_secs(2));
    }
    0
}
