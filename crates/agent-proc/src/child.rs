//! A supervised child: how it is configured, spawned, waited for and ended.

use crate::sweep::{self, Scope};
use crate::{Launcher, Tail, cgroup, run_id, spawner, tag_name};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::watch;

type OnStderr = Box<dyn FnMut(&[u8]) + Send + 'static>;

tokio::task_local! {
    static PURPOSE: String;
}

/// Run `f` with `purpose` as the purpose of every child it spawns without one of its own
/// ([`Command::purpose`]): the label the log gives the child (`language server pyright for /w`).
pub async fn with_purpose<F: Future>(purpose: impl Into<String>, f: F) -> F::Output {
    PURPOSE.scope(purpose.into(), f).await
}

/// Whether the run is ending ([`shutdown`] was called): exits from then on are expected.
static RUN_ENDING: AtomicBool = AtomicBool::new(false);

/// Whether the run ever tried to start a child: until then no process carries the run's tag
/// (it is set on a child's own environment only) nor sits in its cgroup, so the end of the run
/// has nothing to sweep.
static EVER_STARTED: AtomicBool = AtomicBool::new(false);

/// A child to start: program, arguments, working directory, extra environment, which pipes.
/// stdout is piped and stdin is null unless asked otherwise; stderr always goes to a bounded
/// [`Tail`] (and, when given, to an [`on_stderr`](Command::on_stderr) callback).
pub struct Command {
    launcher: Launcher,
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    /// When set, only these variables of the host's environment reach the child (a name ending
    /// in `*` keeps every variable with that prefix); [`Command::env`] and the run's tag always do.
    kept_env: Option<Vec<String>>,
    /// Landlock confinement (and the seccomp network filter) applied in the child before it runs
    /// the program.
    confinement: Option<crate::Confinement>,
    stdin: bool,
    stdout: bool,
    tail_cap: usize,
    on_stderr: Option<OnStderr>,
    purpose: Option<String>,
    oneshot: bool,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Command({})", self.display())
    }
}

impl Command {
    /// `program` run through `launcher` (behind its prefix, if any).
    pub fn new(launcher: &Launcher, program: impl AsRef<OsStr>) -> Self {
        Command {
            launcher: launcher.clone(),
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            kept_env: None,
            confinement: None,
            stdin: false,
            stdout: true,
            tail_cap: 16 * 1024,
            on_stderr: None,
            purpose: None,
            oneshot: false,
        }
    }

    /// What the child is for, in words, for the log (default: the purpose set by
    /// [`with_purpose`] around the spawn, else the program's name).
    pub fn purpose(mut self, purpose: impl Into<String>) -> Self {
        self.purpose = Some(purpose.into());
        self
    }

    /// Add one argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    /// Add arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Set an environment variable.
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        self
    }

    /// Pass the child only the host variables named in `kept` (a name ending in `*` keeps every
    /// variable with that prefix), besides those set with [`Command::env`] and the run's tag: the
    /// environment of a contained program is an allow-list, never the host's whole environment.
    pub fn env_only(mut self, kept: &[&str]) -> Self {
        self.kept_env = Some(kept.iter().map(|k| k.to_string()).collect());
        self
    }

    /// Confine the child with Landlock ([`crate::Confinement`]): it and everything it starts
    /// read the file system, write only and run programs only where the confinement says, hold
    /// no capability and open no socket but a local one (seccomp, where the kernel has it).
    /// Spawning fails when the kernel has no Landlock.
    pub fn confine(mut self, confinement: crate::Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }

    /// Pipe stdin (take it with [`Child::take_stdin`]).
    pub fn stdin_piped(mut self) -> Self {
        self.stdin = true;
        self
    }

    /// Send stdout to /dev/null instead of a pipe.
    pub fn stdout_null(mut self) -> Self {
        self.stdout = false;
        self
    }

    /// Keep the last `cap` bytes of stderr (default 16 KiB).
    pub fn stderr_tail(mut self, cap: usize) -> Self {
        self.tail_cap = cap;
        self
    }

    /// Also hand every chunk of stderr to `f` (on the pump task).
    pub fn on_stderr(mut self, f: impl FnMut(&[u8]) + Send + 'static) -> Self {
        self.on_stderr = Some(Box::new(f));
        self
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        let (p, mut a) = self.launcher.argv(&self.program);
        a.extend(self.args.iter().cloned());
        std::iter::once(p)
            .chain(a)
            .map(|s| s.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Start the child (on the spawner thread; see the crate docs).
    pub async fn spawn(mut self) -> io::Result<Child> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        EVER_STARTED.store(true, Ordering::SeqCst);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let command = self.display();
        let purpose = self
            .purpose
            .take()
            .or_else(|| PURPOSE.try_with(Clone::clone).ok())
            .unwrap_or_else(|| {
                std::path::Path::new(&self.program)
                    .file_name()
                    .unwrap_or(&self.program)
                    .to_string_lossy()
                    .into_owned()
            });
        let (program, mut args) = self.launcher.argv(&self.program);
        args.append(&mut self.args);
        let mut cmd = tokio::process::Command::new(program);
        if let Some(kept) = &self.kept_env {
            cmd.env_clear().envs(std::env::vars_os().filter(|(k, _)| {
                let k = k.to_string_lossy();
                kept.iter().any(|want| match want.strip_suffix('*') {
                    Some(prefix) => k.starts_with(prefix),
                    None => *want == k,
                })
            }));
        }
        cmd.args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env(tag_name(run_id()), n.to_string())
            .stdin(if self.stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(if self.stdout {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in crate::withheld() {
            cmd.env_remove(name);
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        new_session_dying_with_parent(&mut cmd);
        let placement = cgroup::Placement::for_child(n);
        if placement.is_none() {
            // No cgroup: what leaves its parents is at least adopted by the host.
            crate::adopt::ensure();
        }
        if let Some(fd) = placement.as_ref().map(cgroup::Placement::procs_fd) {
            #[allow(unsafe_code)]
            // SAFETY: runs between fork and exec; `join_in_child` makes one `write` on a
            // descriptor the child inherited, allocating nothing and taking no lock.
            unsafe {
                cmd.pre_exec(move || {
                    cgroup::join_in_child(fd);
                    Ok(())
                });
            }
        }
        if let Some(c) = &self.confinement {
            let (ruleset, net) = c.prepare()?;
            let slot = std::sync::Mutex::new(Some(ruleset));
            #[allow(unsafe_code)]
            // SAFETY: runs between fork and exec; the slot is locked by this child only (the
            // parent never locks it), the network filter is only read (it is freed in the
            // parent, with the closure), and `apply_in_child` makes only async-signal-safe calls.
            unsafe {
                cmd.pre_exec(move || {
                    let taken = slot.lock().ok().and_then(|mut s| s.take());
                    match taken {
                        Some(ruleset) => crate::confine::apply_in_child(ruleset, net.as_ref()),
                        None => Err(io::Error::other("the Landlock ruleset was already used")),
                    }
                });
            }
        }
        let spawned = spawner::spawn(cmd).await;
        // The child holds its own copy of the descriptor until exec; ours is done.
        let group = placement.map(|p| p.dir.clone());
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(target: "agent_proc", %purpose, %command, error = %e, "could not start a child");
                if let Some(g) = group {
                    cgroup::release(g);
                }
                return Err(e);
            }
        };
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the child exited before its pid was read"))?;
        if self.oneshot {
            tracing::debug!(target: "agent_proc", %purpose, pid, %command, "started a child (run to completion)");
        } else {
            tracing::info!(target: "agent_proc", %purpose, pid, %command, "started a child");
        }
        let tail = Tail::new(self.tail_cap);
        let (done_tx, stderr_done) = watch::channel(false);
        if let Some(mut err) = child.stderr.take() {
            let tail = tail.clone();
            let mut on = self.on_stderr.take();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(k) = err.read(&mut buf).await {
                    if k == 0 {
                        break;
                    }
                    tail.push(&buf[..k]);
                    if let Some(f) = on.as_mut() {
                        f(&buf[..k]);
                    }
                }
                let _ = done_tx.send(true);
            });
        }
        let reaped = Arc::new(AtomicBool::new(false));
        live().insert(n, (pid, reaped.clone()));
        Ok(Child {
            pid,
            n,
            purpose,
            oneshot: self.oneshot,
            ending: AtomicBool::new(false),
            stdin: Mutex::new(child.stdin.take()),
            stdout: Mutex::new(child.stdout.take()),
            inner: tokio::sync::Mutex::new(child),
            status: OnceLock::new(),
            reaped,
            group,
            tail,
            stderr_done,
        })
    }

    /// Run to completion within `timeout` (killed, with everything it started, when it takes
    /// longer); stdout is collected up to 32 MiB.
    pub async fn output(mut self, timeout: Duration) -> Result<Output, RunError> {
        self.oneshot = true;
        let child = self.spawn().await.map_err(RunError::Spawn)?;
        let out = child.take_stdout();
        let reader = tokio::spawn(async move {
            let mut v = Vec::new();
            if let Some(out) = out {
                let _ = out.take(32 << 20).read_to_end(&mut v).await;
            }
            v
        });
        let status = tokio::time::timeout(timeout, child.wait_exit()).await;
        // Whatever it left running (holding the pipes open) ends with it; what it wrote stays
        // readable.
        child.kill();
        match status {
            Ok(Ok(status)) => {
                let stdout = tokio::time::timeout(Duration::from_secs(2), reader)
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_default();
                child.stderr_closed(Duration::from_secs(1)).await;
                Ok(Output {
                    status,
                    stdout,
                    stderr: child.stderr().text(),
                })
            }
            Ok(Err(e)) => Err(RunError::Wait(e)),
            Err(_) => {
                reader.abort();
                tracing::warn!(
                    target: "agent_proc",
                    purpose = %child.purpose,
                    pid = child.pid,
                    timeout_ms = timeout.as_millis() as u64,
                    "a child ran past its timeout and was killed"
                );
                Err(RunError::TimedOut(timeout, child.stderr().text()))
            }
        }
    }
}

/// What a finished [`Command::output`] produced.
#[derive(Debug)]
pub struct Output {
    /// How it exited.
    pub status: ExitStatus,
    /// What it wrote to stdout (at most the first 32 MiB).
    pub stdout: Vec<u8>,
    /// The tail of stderr.
    pub stderr: String,
}

/// Why [`Command::output`] produced nothing.
#[derive(Debug)]
pub enum RunError {
    /// It could not be started.
    Spawn(io::Error),
    /// Waiting for it to exit failed.
    Wait(io::Error),
    /// It ran longer than the timeout and was killed; the tail of its stderr.
    TimedOut(Duration, String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spawn(e) => write!(f, "could not start it: {e}"),
            RunError::Wait(e) => write!(f, "could not wait for it: {e}"),
            RunError::TimedOut(t, _) => write!(f, "it did not finish within {} s", t.as_secs()),
        }
    }
}

impl std::error::Error for RunError {}

/// In the child: a new session (so it leads its own process group, which every end signals,
/// and has no controlling terminal: nothing it starts can read the person's terminal or push
/// keystrokes into it with `TIOCSTI`), `PR_SET_PDEATHSIG(SIGKILL)`, and a check that the parent
/// did not die before it was set (then the child would already belong to init).
fn new_session_dying_with_parent(cmd: &mut tokio::process::Command) {
    let parent = std::process::id() as libc::pid_t;
    #[allow(unsafe_code)]
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe functions
    // (setsid, prctl, getppid); it allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Live children of this process: child number → (pid, reaped).
type Live = HashMap<u64, (u32, Arc<AtomicBool>)>;

fn live() -> parking_lot::MutexGuard<'static, Live> {
    static LIVE: OnceLock<Mutex<Live>> = OnceLock::new();
    LIVE.get_or_init(Default::default).lock()
}

fn killpg(pid: u32, sig: i32) {
    if let Ok(p) = libc::pid_t::try_from(pid)
        && p > 1
    {
        #[allow(unsafe_code)]
        // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
        unsafe {
            libc::killpg(p, sig);
        }
    }
}

/// A running child. Dropping it ends it and everything it started ([`Child::kill`]).
pub struct Child {
    pid: u32,
    n: u64,
    /// What it is for (the log's label).
    purpose: String,
    /// Run to completion ([`Command::output`]): however it exits is its answer, not a crash.
    oneshot: bool,
    /// We asked it to end ([`Child::terminate`], [`Child::kill`]): its exit is expected.
    ending: AtomicBool,
    inner: tokio::sync::Mutex<tokio::process::Child>,
    status: OnceLock<ExitStatus>,
    reaped: Arc<AtomicBool>,
    /// Its cgroup, where the run has one (see the crate's `cgroup` module).
    group: Option<PathBuf>,
    stdin: Mutex<Option<ChildStdin>>,
    stdout: Mutex<Option<ChildStdout>>,
    tail: Tail,
    stderr_done: watch::Receiver<bool>,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Child(pid {})", self.pid)
    }
}

impl Child {
    /// Its pid (and process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its stdin, once (when piped).
    pub fn take_stdin(&self) -> Option<ChildStdin> {
        self.stdin.lock().take()
    }

    /// Its stdout, once (when piped).
    pub fn take_stdout(&self) -> Option<ChildStdout> {
        self.stdout.lock().take()
    }

    /// The tail of its stderr.
    pub fn stderr(&self) -> Tail {
        self.tail.clone()
    }

    /// Wait (at most `timeout`) until stderr has closed, so that its tail holds the last words.
    pub async fn stderr_closed(&self, timeout: Duration) -> bool {
        let mut rx = self.stderr_done.clone();
        tokio::time::timeout(timeout, rx.wait_for(|d| *d))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Send `sig` to its process group (e.g. SIGINT to interrupt), unless it was reaped.
    pub fn signal_group(&self, sig: i32) {
        if !self.reaped.load(Ordering::SeqCst) {
            killpg(self.pid, sig);
        }
    }

    /// Its exit status, if it was reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status.get().copied()
    }

    /// Wait for it to exit, however long that takes.
    pub async fn wait_exit(&self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status() {
            return Ok(s);
        }
        let mut inner = self.inner.lock().await;
        if let Some(s) = self.status() {
            return Ok(s);
        }
        let s = inner.wait().await?;
        crate::adopt::ours().remove(&self.pid);
        let _ = self.status.set(s);
        self.reaped.store(true, Ordering::SeqCst);
        if !self.expected_exit(s) {
            // A crash's last words are on their way through the stderr pipe.
            self.stderr_closed(Duration::from_millis(250)).await;
        }
        self.log_exit(s);
        Ok(s)
    }

    /// Whether an exit with `s` was to be expected: asked for, the run ending, a
    /// run-to-completion command, or a success.
    fn expected_exit(&self, s: ExitStatus) -> bool {
        self.oneshot
            || s.success()
            || self.ending.load(Ordering::SeqCst)
            || RUN_ENDING.load(Ordering::SeqCst)
    }

    /// One line per reaped child: a warning when it ended on its own with a failure (a crash),
    /// with the size of the stderr tail that says why; otherwise at `info` (`debug` for a
    /// run-to-completion command).
    fn log_exit(&self, s: ExitStatus) {
        let status = crate::describe_exit(s);
        let (purpose, pid) = (&self.purpose, self.pid);
        if self.oneshot {
            tracing::debug!(target: "agent_proc", %purpose, pid, %status, "a child finished");
        } else if self.expected_exit(s) {
            tracing::info!(target: "agent_proc", %purpose, pid, %status, "a child exited");
        } else {
            let stderr_tail_bytes = self.tail.len();
            tracing::warn!(
                target: "agent_proc",
                %purpose,
                pid,
                %status,
                stderr_tail_bytes,
                "a child exited unexpectedly ({purpose}: {status})"
            );
        }
    }

    /// Wait at most `timeout` for it to exit.
    pub async fn wait(&self, timeout: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(timeout, self.wait_exit())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// SIGKILL its group, everything that carries its tag or descends from it, and everything in
    /// its cgroup (where the run has one). Safe to call
    /// again; never signals a pid that is not this child's.
    pub fn kill(&self) {
        let reaped = self.reaped.load(Ordering::SeqCst);
        let was_ending = self.ending.swap(true, Ordering::SeqCst);
        if !reaped && !was_ending {
            tracing::info!(target: "agent_proc", purpose = %self.purpose, pid = self.pid, "killing a child and what it started");
        }
        let root = libc::pid_t::try_from(self.pid).ok().filter(|_| !reaped);
        let signalled = sweep::sweep(
            Scope::Child(run_id(), self.n),
            root.as_slice(),
            root.as_slice(),
        );
        if signalled > 0 {
            tracing::debug!(target: "agent_proc", purpose = %self.purpose, pid = self.pid, signalled, "swept what the child left behind");
        }
        // What shed the tag and left its parents is still in the child's group.
        if let Some(g) = &self.group {
            cgroup::kill(g);
        }
    }

    /// SIGKILL a pid this child reported about itself (a debuggee's pid from a debug adapter),
    /// only if that pid carries this child's tag: a pid from another pid namespace (behind a
    /// sandbox prefix), or one reused meanwhile, is left alone. Returns whether it was signalled.
    pub fn kill_reported(&self, pid: u32) -> bool {
        sweep::kill_reported(pid, Scope::Child(run_id(), self.n))
    }

    /// End it with grace: SIGTERM to its group, up to `grace` to exit, then [`Child::kill`] and
    /// a bounded reap. The caller sends its protocol's polite exit first. Returns how it ended.
    pub async fn terminate(&self, grace: Duration) -> String {
        let running = !self.ending.swap(true, Ordering::SeqCst) && self.status().is_none();
        if running {
            tracing::info!(target: "agent_proc", purpose = %self.purpose, pid = self.pid, grace_ms = grace.as_millis() as u64, "terminating a child");
        }
        self.signal_group(libc::SIGTERM);
        let ended = self.wait(grace).await;
        self.kill();
        let how = match ended.or(self.wait(Duration::from_secs(5)).await) {
            Some(s) => crate::describe_exit(s),
            None => "could not be reaped".to_string(),
        };
        if running {
            tracing::info!(target: "agent_proc", purpose = %self.purpose, pid = self.pid, status = %how, "a child was terminated");
        }
        how
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
        live().remove(&self.n);
        crate::adopt::ours().remove(&self.pid);
        if let Some(g) = self.group.take() {
            cgroup::release(g);
        }
    }
}

mod shutdown;
pub use shutdown::{Farewell, on_shutdown, shutdown};
