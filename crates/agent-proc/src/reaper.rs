//! The reaper: a small process that ends the run's processes after the host is gone, however
//! it went (SIGKILL included, when no code of the host runs).
//!
//! The host binary starts it once ([`start`], re-executing itself with a hidden subcommand that
//! calls [`main`]). It holds the read end of a pipe whose write end only the host holds (every
//! descriptor the host opens is close-on-exec, so no other child inherits it): end-of-file means
//! the host has exited. It then sweeps every process that carries the run's tag and exits. It
//! leads its own process group, ignores the terminal's SIGINT and SIGHUP, and has no parent-death
//! signal (it must outlive the host); it carries `AGENT_TOOLS_REAPER=<run>` and not the run's tag.
//! Direct children need it least: their parent-death signal already ended them.

use crate::sweep::{self, Scope};
use parking_lot::Mutex;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::OnceLock;

/// The environment variable the reaper carries (its value is the run id).
pub const REAPER_ENV: &str = "AGENT_TOOLS_REAPER";

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
    let mut child = cmd.spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the reaper has no stdin pipe"))?;
    // The `Child` is dropped without a wait: the reaper outlives every wait the host could do.
    *held = Some((child.id(), stdin));
    Ok(child.id())
}

/// The reaper's body: wait for end-of-file on stdin (the host is gone), then end every process
/// of the run `run`. Returns the exit code.
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
    let mut stdin = std::io::stdin().lock();
    let mut buf = [0u8; 64];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // A process may still be forking while the first sweep runs: sweep until one finds nothing.
    for _ in 0..5 {
        if sweep::sweep(Scope::Run(run), &[], &[]) == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    0
}
