//! One kernel process: spawning it through the launcher, the wire, and running one cell.
//!
//! The wire is JSON lines on the child's own stdin and stdout. Every frame the driver sends is
//! prefixed with `\x1e<nonce>:` (a nonce this host makes up per kernel), and the driver keeps the
//! cell away from the real stdout (Python moves it to a private descriptor; JavaScript replaces
//! every stream object), so cell output can never be mistaken for a frame: bytes that are not a
//! frame are shown as output. This needs no extra descriptor, so it works unchanged through a
//! sandbox launcher such as `docker exec -i`.

use crate::KernelConfig;
use crate::error::KernelError;
use crate::frames::{Event, FrameParser};
use crate::inflow::{self, Inbox};
use crate::protocol::{CellStatus, DriverFrame, HostFrame};
use crate::render::{Collector, Status};
use agent_proc::{Child, Launcher};
use agent_tier::{CallContext, Origin, ToolOutput};
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;
use tokio::time::Instant;

mod progress;
use progress::CellProgress;

pub(crate) use crate::driver::Lang;

/// Which program runs a language's kernel for the checkout at `root`.
///
/// Python: the configured interpreter, else `.venv/bin/python`, else `venv/bin/python`, else
/// `python3` (resolved on the host's `$PATH` when there is no sandbox launcher; passed bare to the
/// launcher otherwise, so the sandbox's own `$PATH` decides). JavaScript: the configured `node`,
/// else `node` the same way.
pub(crate) fn program_for(
    lang: Lang,
    root: &Path,
    config: &KernelConfig,
    sandboxed: bool,
) -> Result<OsString, KernelError> {
    let (configured, local, bare, fix) = match lang {
        Lang::Python => (
            &config.python,
            &[".venv/bin/python", "venv/bin/python"][..],
            "python3",
            "create the project's virtualenv (`python3 -m venv .venv`) or install python3",
        ),
        Lang::Javascript => (
            &config.node,
            &[][..],
            "node",
            "install Node.js so that `node` is on $PATH (for example `apt-get install nodejs`)",
        ),
    };
    if let Some(p) = configured {
        return Ok(p.clone().into_os_string());
    }
    for rel in local {
        let p = root.join(rel);
        if p.is_file() {
            return Ok(p.into_os_string());
        }
    }
    if sandboxed {
        return Ok(bare.into());
    }
    match Launcher::host().which(bare) {
        Some(p) => Ok(p),
        None => Err(KernelError::NoRuntime {
            language: lang.as_str(),
            looked: if local.is_empty() {
                format!("`{bare}` on $PATH")
            } else {
                format!("{}, then `{bare}` on $PATH", local.join(", "))
            },
            fix,
        }),
    }
}

/// `now + d`, saturating about thirty years out: a configured "forever" budget or grace must not
/// overflow the clock (a panic inside the tool).
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 86_400))
}

fn nonce() -> String {
    let mut h = std::hash::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    let a = h.finish();
    let b = std::hash::RandomState::new().build_hasher().finish();
    format!("{a:016x}{b:016x}")
}

/// A live kernel process.
pub(crate) struct Kernel {
    pub(crate) lang: Lang,
    pub(crate) pid: u32,
    pub(crate) version: String,
    /// The process (its group, its tag, its stderr tail); dropping it ends everything it started.
    child: Child,
    stdin: tokio::process::ChildStdin,
    events: Inbox,
    next_id: u64,
}

impl Kernel {
    /// Spawn the kernel and wait for its driver to say it is ready.
    pub(crate) async fn start(
        lang: Lang,
        root: &Path,
        prefix: &[String],
        config: &KernelConfig,
    ) -> Result<Kernel, KernelError> {
        let program = program_for(lang, root, config, !prefix.is_empty())?;
        let (launched, args) = crate::driver::boot_command(lang, &program, !prefix.is_empty());
        let (tx, mut events) = inflow::channel(inflow::QUEUE_CAP);
        let err_tx = tx.clone();
        let child = agent_proc::Command::new(&Launcher::prefixed(prefix), &launched)
            .args(&args)
            .current_dir(root)
            .stdin_piped()
            .stderr_tail(8192)
            .on_stderr(move |bytes| {
                err_tx.send(
                    Event::Stderr(String::from_utf8_lossy(bytes).into_owned()),
                    bytes.len(),
                );
            })
            .spawn()
            .await
            .map_err(|source| KernelError::Spawn {
                language: lang.as_str(),
                program: program.clone().into(),
                launcher: if prefix.is_empty() {
                    "(none: on the host)".to_string()
                } else {
                    prefix.join(" ")
                },
                source,
            })?;
        let pid = child.pid();
        let tail = child.stderr();
        let startup_error = |detail: String, tail: &agent_proc::Tail| KernelError::Startup {
            language: lang.as_str(),
            detail,
            tail: tail.text(),
        };
        let (Some(mut stdin), Some(mut stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(startup_error("its pipes were not set up".into(), &tail));
        };
        let nonce = nonce();
        let mut parser = FrameParser::new(&nonce);
        let out_tx = tx;
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 65536];
            let mut evs = Vec::new();
            loop {
                match stdout.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        // when the queue is full, output frames are not even parsed
                        let shed = parser.push(&chunk[..n], &mut evs, out_tx.full());
                        out_tx.shed(shed);
                        for (e, bytes) in evs.drain(..) {
                            out_tx.send(e, bytes);
                        }
                    }
                }
            }
            out_tx.send(Event::Closed, 0);
        });
        let hello = HostFrame::Hello { nonce: &nonce }.to_line();
        if let Err(e) = stdin.write_all(hello.as_bytes()).await {
            return Err(startup_error(
                format!("could not write to its stdin ({e})"),
                &tail,
            ));
        }
        let _ = stdin.flush().await;
        let deadline = after(config.startup_timeout);
        loop {
            let ev = tokio::time::timeout_at(deadline, events.recv()).await;
            match ev {
                Err(_) => {
                    return Err(startup_error(
                        format!(
                            "its driver did not report ready within {}",
                            agent_tier::display::duration(config.startup_timeout)
                        ),
                        &tail,
                    ));
                }
                Ok(None) | Ok(Some(Event::Closed)) => {
                    let status = child.wait(Duration::from_secs(5)).await;
                    child.stderr_closed(Duration::from_secs(2)).await;
                    let detail = match status {
                        Some(s) => format!("it exited at once ({})", describe_exit(s)),
                        None => "it closed its stdout at once".to_string(),
                    };
                    return Err(startup_error(detail, &tail));
                }
                // a driver that cannot say it is ready is not waited for
                Ok(Some(Event::Malformed(e))) => {
                    return Err(startup_error(e.to_string(), &tail));
                }
                Ok(Some(Event::Frame(DriverFrame::Ready { version }))) => {
                    return Ok(Kernel {
                        lang,
                        pid,
                        version,
                        child,
                        stdin,
                        events,
                        next_id: 0,
                    });
                }
                Ok(Some(_)) => {}
            }
        }
    }

    /// Take what arrived between cells (output of background threads or timers) into `out`,
    /// refusing any `tool()` call made after its cell had finished; `false` when the kernel has
    /// died meanwhile.
    pub(crate) async fn drain_idle(&mut self, out: &mut Collector) -> bool {
        let mut noted = false;
        let mut note = |out: &mut Collector| {
            if !noted {
                noted = true;
                out.stream(
                    "stderr",
                    "[output that arrived after the previous cell finished:]\n",
                );
            }
        };
        while let Some(ev) = self.events.try_recv() {
            match ev {
                Event::Closed => return false,
                Event::Raw(s) => {
                    note(out);
                    out.stream("stdout", &s);
                }
                Event::Stderr(s) => {
                    note(out);
                    out.stream("stderr", &s);
                }
                Event::Frame(DriverFrame::Stream { name, text }) => {
                    note(out);
                    out.stream(name.as_str(), &text);
                }
                Event::Malformed(e) => {
                    note(out);
                    out.stream("stderr", &format!("[{e}]\n"));
                }
                Event::Frame(DriverFrame::Bridge { id, .. }) => {
                    let msg = HostFrame::BridgeResult {
                        id,
                        is_error: true,
                        text: "tool() was called after its cell had finished (from a background thread or an unawaited promise); call tools while the cell runs",
                        structured: None,
                        images: 0,
                    };
                    if !self.send(&msg).await {
                        return false;
                    }
                }
                // A `tool()` call too big to read that arrived between cells; its caller has
                // returned (or is a late thread), so there is nobody to tell but the thread.
                Event::OversizedBridge { .. }
                | Event::Frame(
                    DriverFrame::Ready { .. } | DriverFrame::Display { .. } | DriverFrame::Done(_),
                ) => {}
            }
        }
        out.dropped_between_cells(self.events.take_dropped());
        true
    }

    async fn send(&mut self, frame: &HostFrame<'_>) -> bool {
        let line = frame.to_line();
        self.stdin.write_all(line.as_bytes()).await.is_ok() && self.stdin.flush().await.is_ok()
    }

    /// Kill the whole process group and everything the kernel started (even in a new session),
    /// and reap the child.
    pub(crate) async fn kill(self) {
        self.child.kill();
        let _ = self.child.wait(Duration::from_secs(5)).await;
    }

    /// Why the process ended (its exit status) and the tail of its stderr, after stdout closed.
    pub(crate) async fn death(&mut self) -> (String, String) {
        let status = match self.child.wait(Duration::from_secs(5)).await {
            Some(s) => describe_exit(s),
            None => {
                self.child.kill();
                match self.child.wait(Duration::from_secs(5)).await {
                    Some(s) => format!(
                        "closed its output and was then killed: {}",
                        describe_exit(s)
                    ),
                    None => "closed its output and could not be reaped".to_string(),
                }
            }
        };
        self.child.stderr_closed(Duration::from_secs(2)).await;
        self.child.kill();
        (status, self.child.stderr().text())
    }

    /// Run one cell. `Ok` means the kernel is still alive afterwards; `Err` carries the result
    /// of a cell after which the kernel is gone (killed or died), with the reason.
    pub(crate) async fn run(
        &mut self,
        code: &str,
        cx: &CallContext,
        config: &KernelConfig,
        out: &mut Collector,
    ) -> Alive {
        self.next_id += 1;
        let id = self.next_id;
        if !self
            .send(&HostFrame::Exec {
                id,
                code,
                cap: out.cap(),
            })
            .await
        {
            return self.died(out).await;
        }
        let mut bridges: JoinSet<(u64, ToolOutput)> = JoinSet::new();
        let mut deadline = after(config.inactivity_budget);
        let mut kill_at: Option<Instant> = None;
        // A question to a person pending anywhere in the run pauses the budget too.
        let mut asking = cx.registry().asking_watch();
        // The output so far, as the call's progress (when anybody listens).
        let mut progress = CellProgress::new(cx, self.lang.as_str());
        loop {
            let person_pending = *asking.borrow() > 0;
            let budget_armed = bridges.is_empty() && kill_at.is_none() && !person_pending;
            let far = Instant::now() + Duration::from_secs(86_400);
            tokio::select! {
                ev = self.events.recv() => match ev {
                    None | Some(Event::Closed) => return self.died(out).await,
                    Some(Event::Raw(s)) => {
                        out.stream("stdout", &s);
                        progress.push(&s);
                        progress.flush(cx);
                        deadline = after(config.inactivity_budget);
                    }
                    Some(Event::Stderr(s)) => {
                        out.stream("stderr", &s);
                        progress.push(&s);
                        progress.flush(cx);
                        deadline = after(config.inactivity_budget);
                    }
                    // A malformed frame is shown (it is a bug in a driver), never acted on.
                    Some(Event::Malformed(e)) => {
                        out.stream("stderr", &format!("[{e}]\n"));
                        deadline = after(config.inactivity_budget);
                    }
                    // A `tool()` call too big to read: its caller gets an error now, not a wait
                    // until the inactivity budget.
                    Some(Event::OversizedBridge { id: bid, bytes }) => {
                        let text = format!(
                            "the call was {bytes} bytes; a tool() call (name and arguments as JSON) is limited to {} bytes",
                            crate::frames::MAX_FRAME
                        );
                        let msg = HostFrame::BridgeResult {
                            id: bid,
                            is_error: true,
                            text: &text,
                            structured: None,
                            images: 0,
                        };
                        if !self.send(&msg).await {
                            return self.died(out).await;
                        }
                        deadline = after(config.inactivity_budget);
                    }
                    Some(Event::Frame(frame)) => match frame {
                        DriverFrame::Stream { name, text } => {
                            out.stream(name.as_str(), &text);
                            progress.push(&text);
                            progress.flush(cx);
                            deadline = after(config.inactivity_budget);
                        }
                        DriverFrame::Display { data } => {
                            out.display(&data);
                            deadline = after(config.inactivity_budget);
                        }
                        DriverFrame::Bridge { id: bid, name, args } => {
                            out.bridge_call(&name);
                            let cx = cx.clone();
                            bridges.spawn(async move {
                                // A re-entrant call (`eval` from a cell, which holds the kernel)
                                // is refused by the registry through the call context.
                                let res = cx
                                    .nested_call(Origin::Bridge { via: "eval".into() }, &name, args)
                                    .await;
                                (bid, res)
                            });
                        }
                        DriverFrame::Done(done) if done.id == id => {
                            out.status = match (kill_at.is_some(), done.status) {
                                (true, _) | (_, CellStatus::Interrupted) => Status::Interrupted,
                                (_, CellStatus::Ok) => Status::Ok,
                                (_, CellStatus::Error) => Status::Error,
                            };
                            if let Some(result) = &done.result {
                                out.result(result);
                            }
                            if let Some(error) = &done.error {
                                out.error(error);
                            }
                            out.displays_dropped(done.displays_dropped);
                            out.defined(done.defined, done.defined_total);
                            out.dropped_during_cell(self.events.take_dropped());
                            return Alive::Yes;
                        }
                        // an earlier cell's end, or a second `ready`: nothing to do
                        DriverFrame::Done(_) | DriverFrame::Ready { .. } => {}
                    },
                },
                Some(joined) = bridges.join_next(), if !bridges.is_empty() => {
                    if let Ok((bid, res)) = joined {
                        let msg = HostFrame::BridgeResult {
                            id: bid,
                            is_error: res.is_error,
                            text: &res.text,
                            structured: res.structured.as_ref(),
                            images: res.images.len(),
                        };
                        if !self.send(&msg).await {
                            return self.died(out).await;
                        }
                    }
                    if bridges.is_empty() {
                        deadline = after(config.inactivity_budget);
                    }
                }
                _ = tokio::time::sleep_until(progress.due().unwrap_or(far)), if progress.due().is_some() => {
                    progress.flush(cx);
                }
                Ok(()) = asking.changed() => {
                    // The budget starts afresh once the last question is answered.
                    deadline = after(config.inactivity_budget);
                }
                _ = tokio::time::sleep_until(deadline), if budget_armed => {
                    self.child.signal_group(libc::SIGINT);
                    kill_at = Some(after(config.interrupt_grace));
                }
                _ = tokio::time::sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() => {
                    self.child.kill();
                    let _ = self.child.wait(Duration::from_secs(5)).await;
                    out.status = Status::Killed;
                    return Alive::No(format!(
                        "was killed after the cell went {} without output and ignored the interrupt",
                        agent_tier::display::duration(config.inactivity_budget)
                    ));
                }
            }
        }
    }

    async fn died(&mut self, out: &mut Collector) -> Alive {
        let (status, tail) = self.death().await;
        out.status = Status::Died {
            exit: status.clone(),
            stderr_tail: tail,
        };
        Alive::No(format!("died ({status})"))
    }
}

/// Whether the kernel survived a cell; `No` says why it is gone.
pub(crate) enum Alive {
    Yes,
    No(String),
}

pub(crate) use agent_proc::describe_exit;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_prefers_the_project_venv() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let config = KernelConfig::default();
        let exe = |rel: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            p.into_os_string()
        };
        let pick = || program_for(Lang::Python, dir.path(), &config, false).ok();
        let venv = exe("venv/bin/python");
        assert_eq!(pick(), Some(venv));
        let dot = exe(".venv/bin/python");
        assert_eq!(pick(), Some(dot));
        // inside a sandbox, without a project venv, the sandbox's own PATH decides
        let empty = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            program_for(Lang::Python, empty.path(), &config, true).ok(),
            Some("python3".into())
        );
        let configured = KernelConfig {
            python: Some("/opt/py/bin/python".into()),
            ..Default::default()
        };
        assert_eq!(
            program_for(Lang::Python, dir.path(), &configured, false).ok(),
            Some("/opt/py/bin/python".into())
        );
    }
}
