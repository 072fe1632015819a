//! The one long-lived thread that forks every child.
//!
//! `PR_SET_PDEATHSIG` is delivered when the *thread* that forked the child exits, not the
//! process. Tokio retires idle `spawn_blocking` threads after ten seconds and a current-thread
//! runtime may live on a helper thread, so a child forked from the caller's thread could be
//! SIGKILLed at random. Forking here instead ties the signal to the life of the process.

use parking_lot::Mutex;
use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;
use tokio::sync::oneshot;

struct Job {
    cmd: tokio::process::Command,
    handle: tokio::runtime::Handle,
    reply: oneshot::Sender<io::Result<tokio::process::Child>>,
}

fn queue() -> io::Result<mpsc::Sender<Job>> {
    static QUEUE: OnceLock<Mutex<Option<mpsc::Sender<Job>>>> = OnceLock::new();
    let slot = QUEUE.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("agent-proc-spawner".into())
            .spawn(move || {
                while let Ok(mut job) = rx.recv() {
                    // The run's reaper first, before the run has a child to leave behind (and
                    // before `ours` is held: starting it takes that lock).
                    crate::reaper::start_armed();
                    // The child registers with the caller's runtime (its reaper and pipes).
                    let entered = job.handle.enter();
                    // Registered before anything can reap it (see `adopt`).
                    let mut ours = crate::adopt::ours();
                    let res = job.cmd.spawn();
                    if let Some(pid) = res.as_ref().ok().and_then(|c| c.id()) {
                        ours.insert(pid);
                    }
                    drop(ours);
                    drop(entered);
                    let _ = job.reply.send(res);
                }
            });
        Mutex::new(started.ok().map(|_| tx))
    });
    slot.lock()
        .clone()
        .ok_or_else(|| io::Error::other("the agent-proc spawner thread could not be started"))
}

/// Fork `cmd` on the spawner thread, registered with the caller's runtime.
pub(crate) async fn spawn(cmd: tokio::process::Command) -> io::Result<tokio::process::Child> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|e| io::Error::other(format!("spawning needs a tokio runtime: {e}")))?;
    let (reply, rx) = oneshot::channel();
    queue()?
        .send(Job { cmd, handle, reply })
        .map_err(|_| io::Error::other("the agent-proc spawner thread is gone"))?;
    rx.await
        .map_err(|_| io::Error::other("the agent-proc spawner thread dropped the request"))?
}
