//! One debug session: the adapter process, its DAP client, the start-up sequence, ending it,
//! and the TTL. What the events say about the debuggee is kept in `state`.

use crate::DapError;
use crate::adapters::{AdapterId, Started};
use crate::args::Exceptions;
use crate::breakpoints::{
    Placed, Placement, Wanted, place, placed_in, placed_results, set_breakpoints_args,
    set_function_breakpoints_args,
};
use crate::protocol::{
    Breakpoint, Capabilities, Configuration, ConfigurationDone, Disconnect, DisconnectArguments,
    Initialize, InitializeArguments, NoArguments, SetBreakpoints, SetExceptionBreakpoints,
    SetExceptionBreakpointsArguments, SetFunctionBreakpoints,
};
use crate::state::{Known, OutputBuf, Shared, State};
use crate::transport::Client;
use agent_proc::{Child, Tail};
use agent_rpc::Request;
use parking_lot::{Mutex, MutexGuard};
use serde::de::IgnoredAny;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// A live (or ended) debug session.
pub(crate) struct Session {
    pub id: u64,
    pub adapter: AdapterId,
    /// What is being debugged (the program, or `127.0.0.1:PORT`).
    pub target: String,
    /// The adapter's command line.
    pub command: String,
    pub client: Arc<Client>,
    pub shared: Arc<Shared>,
    capabilities: Mutex<Capabilities>,
    pub known: Mutex<Known>,
    pub started: Instant,
    pub ttl: Duration,
    pub request_timeout: Duration,
    /// Attached to a debuggee we did not start: it is left running when the session ends.
    pub attached: bool,
    adapter_pid: Option<u32>,
    stderr: Tail,
    /// The adapter; ending it ends everything it started (the debuggee included).
    child: Option<Child>,
    owns_reported_pids: bool,
    watcher: Mutex<Option<tokio::task::AbortHandle>>,
    /// `disconnect` when the run ends (the host exiting on a signal): a program we attached to
    /// runs on, one we launched is terminated.
    farewell: Mutex<Option<agent_proc::Farewell>>,
}

impl Session {
    /// Wrap a started adapter: the reader task runs from here on; a watcher task ends the session
    /// when the debuggee terminates, the adapter goes away, or the TTL expires.
    pub fn new(
        id: u64,
        adapter: AdapterId,
        target: String,
        started: Started,
        ttl: Duration,
        request_timeout: Duration,
        attached: bool,
    ) -> Arc<Session> {
        let shared = Arc::new(Shared {
            state: watch::Sender::new(State::default()),
            output: Mutex::new(OutputBuf::default()),
        });
        let client = Client::start(started.reader, started.writer, shared.clone());
        if let Some(mut out) = started.program_stdout {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = out.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    shared
                        .output
                        .lock()
                        .push(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
        }
        let session = Arc::new(Session {
            id,
            adapter,
            target,
            command: started.command,
            client,
            shared,
            capabilities: Mutex::new(Capabilities::default()),
            known: Mutex::new(Known::default()),
            started: Instant::now(),
            ttl,
            request_timeout,
            attached,
            adapter_pid: started.child.as_ref().map(Child::pid),
            stderr: started.stderr,
            child: started.child,
            owns_reported_pids: started.owns_reported_pids,
            watcher: Mutex::new(None),
            farewell: Mutex::new(None),
        });
        let polite = Arc::downgrade(&session);
        *session.farewell.lock() = Some(agent_proc::on_shutdown(move || {
            let polite = polite.clone();
            async move {
                if let Some(s) = polite.upgrade() {
                    s.end("the host is exiting".into(), true).await;
                }
            }
        }));
        let weak = Arc::downgrade(&session);
        let mut rx = session.shared.state.subscribe();
        let watcher = tokio::spawn(async move {
            let why = tokio::select! {
                _ = tokio::time::sleep(ttl) => format!("its time to live of {} expired", agent_tier::display::duration(ttl)),
                r = rx.wait_for(|s| s.terminated || s.closed.is_some()) => match r {
                    Ok(s) if s.closed.is_some() && !s.terminated => "the debug adapter exited unexpectedly".to_string(),
                    _ => "the debuggee terminated".to_string(),
                },
            };
            if let Some(s) = weak.upgrade() {
                s.end(why, false).await;
            }
        });
        *session.watcher.lock() = Some(watcher.abort_handle());
        session
    }

    /// A snapshot of the state.
    pub fn state(&self) -> State {
        self.shared.state.borrow().clone()
    }

    pub fn is_live(&self) -> bool {
        self.shared.state.borrow().ended.is_none()
    }

    /// The adapter's stderr, last lines.
    pub fn stderr_tail(&self) -> String {
        let t = self.stderr.text();
        let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
        let start = lines.len().saturating_sub(8);
        lines[start..].join("\n")
    }

    /// Fail unless the session is live.
    pub fn check_live(&self) -> Result<(), DapError> {
        let s = self.state();
        match s.ended {
            None if s.closed.is_some() => Err(DapError::AdapterGone {
                detail: self.gone_detail(),
            }),
            None => Ok(()),
            Some(why) => Err(DapError::NoSession {
                ended: format!(" (session {} on {} ended: {why})", self.id, self.target),
            }),
        }
    }

    fn gone_detail(&self) -> String {
        let tail = self.stderr_tail();
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with: {tail}")
        }
    }

    /// Send the request `R`, with the session's timeout, and read its body; map a closed
    /// connection to a clear error.
    pub async fn call<R: Request>(&self, params: &R::Params) -> Result<R::Result, DapError> {
        self.check_live()?;
        match self.client.call::<R>(params, self.request_timeout).await {
            Err(DapError::AdapterGone { .. }) => Err(DapError::AdapterGone {
                detail: self.gone_detail(),
            }),
            other => other,
        }
    }

    /// Wait (at most `wait`) until `stop_gen` passes `after` or the session ends. While it
    /// waits, the call's progress says so about once a second (a client with a request timeout
    /// keeps the call alive; a person sees the debuggee is running).
    pub async fn wait_stop(&self, after: u64, wait: Duration) -> State {
        let mut rx = self.shared.state.subscribe();
        let started = tokio::time::Instant::now();
        let deadline = started + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            let moved =
                rx.wait_for(|s| s.stop_gen > after || s.ended.is_some() || s.closed.is_some());
            if tokio::time::timeout(left.min(Duration::from_secs(1)), moved)
                .await
                .is_ok()
            {
                break;
            }
            if agent_tier::progress_wanted() {
                agent_tier::progress(format!(
                    "the debuggee is running; waiting for it to stop ({} s of {} s)",
                    started.elapsed().as_secs(),
                    wait.as_secs()
                ));
            }
        }
        self.state()
    }

    /// The ids known since the last stop (cleared when the debuggee has moved).
    pub fn known(&self) -> MutexGuard<'_, Known> {
        let gen_now = self.shared.state.borrow().stop_gen;
        let mut k = self.known.lock();
        if k.stop_gen != gen_now {
            *k = Known {
                stop_gen: gen_now,
                ..Known::default()
            };
        }
        k
    }

    /// End the session: ask the adapter to disconnect (briefly), then kill the adapter's and
    /// the debuggee's process groups and reap the adapter. Idempotent.
    pub async fn end(&self, why: String, from_caller: bool) {
        let first = self.shared.state.send_if_modified(|s| {
            if s.ended.is_none() {
                s.ended = Some(why.clone());
                true
            } else {
                false
            }
        });
        if !first {
            return;
        }
        let watcher = self.watcher.lock().take();
        if from_caller && let Some(w) = watcher {
            // The watcher calls `end` itself with `from_caller == false`; never abort it then.
            w.abort();
        }
        let state = self.state();
        if state.closed.is_none() {
            // Detaching from a program we attached to must finish before the adapter is
            // killed, or the debug server may take the program down with the connection:
            // give it longer (still bounded).
            let wait = if self.attached {
                self.request_timeout
                    .clamp(Duration::from_secs(3), Duration::from_secs(10))
            } else {
                Duration::from_secs(3)
            };
            let _ = self
                .client
                .call::<Disconnect>(
                    &DisconnectArguments {
                        terminate_debuggee: !self.attached,
                    },
                    wait,
                )
                .await;
        }
        self.kill_debuggee(state.debuggee_pid);
        if let Some(child) = &self.child {
            // The adapter, and everything that descends from it or carries its tag: a debuggee
            // in its own group or session (delve, lldb) included: SIGTERM, a grace, SIGKILL.
            child.terminate(Duration::from_millis(500)).await;
        }
    }

    /// The debuggee the adapter reported, unless we attached to it: only a pid in our own pid
    /// namespace that carries the adapter's tag (never a pid under a sandbox prefix).
    fn kill_debuggee(&self, pid: Option<u32>) {
        if let (Some(pid), Some(child), false, true) =
            (pid, &self.child, self.attached, self.owns_reported_pids)
        {
            child.kill_reported(pid);
        }
    }

    /// The adapter's process group id, if it has one.
    pub fn adapter_pgid(&self) -> Option<u32> {
        self.adapter_pid
    }

    /// What the adapter offers (nothing until `initialize` is answered).
    pub fn capabilities(&self) -> MutexGuard<'_, Capabilities> {
        self.capabilities.lock()
    }

    /// Run the DAP start-up sequence: `initialize` → `launch`/`attach` (`R`, not awaited) →
    /// `initialized` → breakpoints, function breakpoints, exception filters →
    /// `configurationDone` → the launch/attach response.
    pub async fn configure<R>(
        &self,
        arguments: Configuration,
        wanted: &Wanted<'_>,
        exceptions: Exceptions,
        startup_timeout: Duration,
    ) -> Result<Configured, DapError>
    where
        R: Request<Params = Configuration, Result = IgnoredAny> + 'static,
    {
        let caps = self
            .client
            .call::<Initialize>(
                &InitializeArguments::new(self.adapter.name()),
                startup_timeout,
            )
            .await
            .map_err(|e| self.startup_error(e))?
            .unwrap_or_default();
        *self.capabilities.lock() = caps.clone();

        let pending = self
            .client
            .send::<R>(&arguments)
            .await
            .map_err(|e| self.startup_error(e))?;
        let mut launch_task = tokio::spawn(pending.wait(startup_timeout));
        let mut answered = false;
        let internal = |e: tokio::task::JoinError| DapError::Refused {
            command: R::METHOD,
            message: format!("internal error: {e}"),
        };
        // Wait for `initialized`, taking the launch response on the way if it comes first
        // (lldb-dap and delve answer launch early; debugpy only after configurationDone; a
        // failure can come at any time).
        let mut rx = self.shared.state.subscribe();
        let phase1 = tokio::time::timeout(startup_timeout, async {
            loop {
                tokio::select! {
                    r = rx.wait_for(|s| s.initialized || s.closed.is_some()) => {
                        drop(r);
                        return Ok(());
                    }
                    r = &mut launch_task, if !answered => {
                        r.map_err(internal)??;
                        answered = true;
                    }
                }
            }
        })
        .await;
        match phase1 {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.startup_error(e)),
            Err(_) => {
                return Err(self.startup_error(DapError::Timeout {
                    command: format!("{} (no `initialized` event)", R::METHOD),
                    secs: startup_timeout.as_secs(),
                }));
            }
        }
        if self.state().closed.is_some() {
            return Err(self.startup_error(DapError::AdapterGone {
                detail: String::new(),
            }));
        }
        let functions = wanted.functions;
        // An adapter without function breakpoints: place them by the language servers'
        // definitions — bounded, since the launch request waits (its own timeout running)
        // while servers start.
        let within = startup_timeout / 2;
        let placement = if !functions.names.is_empty() && !caps.supports_function_breakpoints {
            let placing = place(
                wanted.locator.as_deref(),
                wanted.near,
                wanted.root,
                &functions.names,
                self.adapter.name(),
            );
            Some(
                tokio::time::timeout(within, placing)
                    .await
                    .unwrap_or_else(|_| Placement::timed_out(&functions.names, within)),
            )
        } else {
            None
        };
        let placed: &[Placed] = placement.as_ref().map_or(&[], |p| p.placed.as_slice());
        let mut files: Vec<&PathBuf> = wanted.files.keys().collect();
        for p in placed {
            if !files.contains(&&p.path) {
                files.push(&p.path);
            }
        }
        let mut results = Vec::new();
        let mut answers = Vec::new();
        for file in files {
            let own = wanted.files.get(file);
            let here = placed_in(placed, file);
            let mut list = self
                .client
                .call::<SetBreakpoints>(
                    &set_breakpoints_args(file, own, &here, &functions.options),
                    startup_timeout,
                )
                .await
                .map_err(|e| self.startup_error(e))?
                .breakpoints
                .0;
            let n_own = own.map_or(0, |o| o.lines.len()).min(list.len());
            let theirs = list.split_off(n_own);
            answers.extend(here.into_iter().cloned().zip(theirs));
            if own.is_some() {
                results.push((file.clone(), list));
            }
        }
        let functions = match &placement {
            _ if functions.names.is_empty() => None,
            Some(placement) => Some(placed_results(&functions.names, placement, &answers)),
            None => {
                let body = self
                    .client
                    .call::<SetFunctionBreakpoints>(
                        &set_function_breakpoints_args(functions),
                        startup_timeout,
                    )
                    .await
                    .map_err(|e| self.startup_error(e))?;
                Some(body.breakpoints.0)
            }
        };
        let advertised = caps.filter_ids();
        let filters: Vec<String> = exceptions
            .filters(&advertised)
            .into_iter()
            .map(str::to_string)
            .collect();
        if !advertised.is_empty() {
            // An adapter that rejects a filter it advertised still debugs; not fatal.
            let _ = self
                .client
                .call::<SetExceptionBreakpoints>(
                    &SetExceptionBreakpointsArguments {
                        filters: filters.clone(),
                    },
                    startup_timeout,
                )
                .await;
        }
        if caps.supports_configuration_done_request {
            self.client
                .call::<ConfigurationDone>(&NoArguments {}, startup_timeout)
                .await
                .map_err(|e| self.startup_error(e))?;
        }
        if !answered {
            match tokio::time::timeout(startup_timeout, &mut launch_task).await {
                Ok(Ok(r)) => {
                    r.map_err(|e| self.startup_error(e))?;
                }
                Ok(Err(e)) => return Err(internal(e)),
                Err(_) => {
                    launch_task.abort();
                    return Err(DapError::Timeout {
                        command: R::METHOD.to_string(),
                        secs: startup_timeout.as_secs(),
                    });
                }
            }
        }
        Ok(Configured {
            files: results,
            functions,
            filters,
            placement,
        })
    }

    fn startup_error(&self, e: DapError) -> DapError {
        let tail = self.stderr_tail();
        match e {
            DapError::AdapterGone { .. } => DapError::AdapterGone {
                detail: if tail.is_empty() {
                    " during start-up".to_string()
                } else {
                    format!(" during start-up; its stderr ends with: {tail}")
                },
            },
            DapError::Refused { command, message } if !tail.is_empty() && message.len() < 40 => {
                DapError::Refused {
                    command,
                    message: format!("{message}; adapter stderr: {tail}"),
                }
            }
            other => other,
        }
    }
}

/// What the start-up sequence set.
pub(crate) struct Configured {
    /// The breakpoints' results per file.
    pub files: Vec<(PathBuf, Vec<Breakpoint>)>,
    /// The function breakpoints' results, one per name (`None` when none were asked for).
    pub functions: Option<Vec<Breakpoint>>,
    /// The exception filters set.
    pub filters: Vec<String>,
    /// How the function breakpoints were placed, when the adapter has none of its own.
    pub placement: Option<Placement>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // Last resort when the session is dropped without `end` (the host shutting down): the
        // adapter's child ends its tree on drop; a reported debuggee of ours is killed here.
        let state = self.shared.state.borrow().clone();
        if state.ended.is_none() {
            self.kill_debuggee(state.debuggee_pid);
        }
    }
}
