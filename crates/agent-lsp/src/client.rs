//! Our LSP client: one `agent-rpc` connection per server process (capped framing, a send task
//! owning the writer, abandoned requests cancelled with `$/cancelRequest`), a server's start,
//! typed calls with their timeouts, readiness and shutdown; stderr goes into a bounded [`Tail`].
//! The server's own requests and notifications are `events`', the open documents
//! `documents`', fresh diagnostics `diagnostics`'.

use crate::config::ServerSpec;
use crate::error::LspError;
use crate::protocol::{
    self, ConfigurationChange, Diagnostic, DidChangeConfiguration, Empty, Exit, Initialize,
    InitializeParams, Initialized, Offered, Sent, ServerCapabilities, Shutdown, WorkspaceFolder,
};
use crate::text::{Encoding, path_to_uri};
use agent_proc::{Launcher, Tail};
use agent_rpc::{CallError, Connection, JsonRpc, Limits, Malformed, Request};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::watch;

mod diagnostics;
mod documents;
mod events;
use documents::Doc;
use events::Events;

/// LSP `ContentModified`.
pub const CONTENT_MODIFIED: i64 = -32801;
/// LSP `ServerCancelled`.
pub const SERVER_CANCELLED: i64 = -32802;
/// LSP `RequestCancelled`.
pub const REQUEST_CANCELLED: i64 = -32800;

/// How long a server must be quiet (no progress, no status change, no sync) to count as loaded.
pub const SETTLE: Duration = Duration::from_millis(300);

/// How long an unversioned publish must stand before it counts as the answer for the synced
/// content, for a server that neither versions its publishes nor offers pull diagnostics nor a
/// synchronous way to ask (typescript-language-server publishes unversioned, in stages, but its
/// tsserver is asked directly: `client/diagnostics.rs`). A versioned publish is the answer at
/// once; work-done progress is waited for in both cases.
pub const PUBLISH_SETTLE: Duration = Duration::from_millis(150);

/// Diagnostics for one version of a document.
#[derive(Debug, Clone)]
pub struct Fresh {
    pub items: Vec<Diagnostic>,
    /// Whether diagnostics for this content arrived in time.
    pub complete: bool,
    /// Pulled (`textDocument/diagnostic`) rather than waited for as a publish.
    pub pulled: bool,
    /// The server still reported work in progress (indexing, a check run) when we stopped
    /// waiting: the items are for this content but may be partial.
    pub busy: bool,
}

/// One `textDocument/publishDiagnostics` as received.
#[derive(Debug, Clone)]
pub struct Published {
    pub version: Option<i64>,
    pub seq: u64,
    pub items: Vec<Diagnostic>,
    pub at: Instant,
}

#[derive(Default)]
struct Shared {
    progress: HashSet<String>,
    last_activity: Option<Instant>,
    quiescent: Option<bool>,
    diagnostics: HashMap<PathBuf, Published>,
    seq: u64,
    exited: Option<String>,
    registrations: HashSet<String>,
    progress_seen: bool,
    first_open: Option<Instant>,
    open_settle: Duration,
    /// When we last sent the server a request or notification (the supervisor's LRU order).
    last_used: Option<Instant>,
    /// Notifications sent (files opened, changed, saved, closed, watched files changed): the
    /// server's inputs.
    inputs: u64,
    /// `inputs` when a call last used up its whole ready bound waiting for this server: until
    /// they change (or the server becomes idle by itself) no call waits for it again.
    stalled_at: Option<u64>,
}

/// A running language server for one root.
pub struct Server {
    pub spec: Arc<ServerSpec>,
    pub root: PathBuf,
    pub started: Instant,
    pub pid: Option<u32>,
    pub stderr: Tail,
    request_timeout: Duration,
    caps: OnceLock<ServerCapabilities>,
    conn: Connection<JsonRpc>,
    shared: Mutex<Shared>,
    tick: watch::Sender<u64>,
    docs: tokio::sync::Mutex<HashMap<PathBuf, Doc>>,
    /// Per document changed since the last [`Server::drifted`], the text it had before.
    superseded: Mutex<HashMap<PathBuf, String>>,
    /// The server process; dropping it ends the server and everything it started.
    child: agent_proc::Child,
    /// `shutdown` and `exit` when the run ends (the host exiting on a signal).
    farewell: OnceLock<agent_proc::Farewell>,
}

/// The last lines of a stderr tail, for error messages.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    let s = lines[start..].join("\n");
    if s.is_empty() { "(empty)".into() } else { s }
}

fn lookup_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

/// How a server's process is started: its program and arguments, the prefix it runs behind,
/// and how an untrusted project's server is contained.
pub struct Launch {
    /// The resolved program.
    pub binary: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The run's sandbox prefix and, for a contained server, bubblewrap's argv.
    pub prefix: Vec<String>,
    /// Only these host variables reach the server (a contained server's allow-list).
    pub kept_env: Option<&'static [&'static str]>,
    /// Landlock, where the server is contained by it.
    pub confinement: Option<agent_proc::Confinement>,
}

impl Server {
    /// Spawn the server as `launch` says and run `initialize` / `initialized`.
    pub async fn start(
        spec: Arc<ServerSpec>,
        root: PathBuf,
        launch: Launch,
        request_timeout: Duration,
    ) -> Result<Arc<Server>, LspError> {
        let Launch {
            binary,
            args,
            prefix,
            kept_env,
            confinement,
        } = launch;
        let prefix = prefix.as_slice();
        // A server that cannot reach this process is told no `processId`: behind a prefix
        // (bubblewrap's own pid namespace) it cannot see it, and under Landlock's signal scope
        // `kill(pid, 0)` is refused — node servers (vscode-languageserver) check the client that
        // way every 3 s and exit when it fails, so a contained pyright or typescript-language-
        // server died 3 s after its start.
        let process_id = (prefix.is_empty() && confinement.is_none()).then(std::process::id);
        let start_err = |detail: String, stderr: String| LspError::Start {
            server: spec.id.clone(),
            root: root.display().to_string(),
            detail,
            stderr,
        };
        let mut cmd = agent_proc::Command::new(&Launcher::prefixed(prefix), &binary)
            .args(&args)
            .current_dir(&root)
            .stdin_piped()
            .stderr_tail(16 * 1024);
        if let Some(kept) = kept_env {
            cmd = cmd.env_only(kept);
        }
        if let Some(c) = confinement {
            cmd = cmd.confine(c);
        }
        for (k, v) in &spec.env {
            cmd = cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .await
            .map_err(|e| start_err(format!("spawning {}: {e}", binary.display()), String::new()))?;
        let pid = Some(child.pid());
        let stderr = child.stderr();
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(start_err("no stdio pipes".into(), String::new()));
        };
        let (tick, _) = watch::channel(0u64);
        let server = Arc::new_cyclic(|weak: &Weak<Server>| Server {
            spec: spec.clone(),
            root: root.clone(),
            started: Instant::now(),
            pid,
            stderr: stderr.clone(),
            request_timeout,
            caps: OnceLock::new(),
            conn: Connection::start(
                stdout,
                stdin,
                JsonRpc,
                Arc::new(Events(weak.clone())),
                Limits::default(),
            ),
            shared: Mutex::new(Shared {
                open_settle: Duration::from_millis(spec.open_settle_ms),
                ..Default::default()
            }),
            tick,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            superseded: Mutex::new(HashMap::new()),
            child,
            farewell: OnceLock::new(),
        });
        let weak = Arc::downgrade(&server);
        let _ = server.farewell.set(agent_proc::on_shutdown(move || {
            let weak = weak.clone();
            async move {
                if let Some(server) = weak.upgrade() {
                    server.shutdown().await;
                }
            }
        }));

        let uri = path_to_uri(&root);
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "root".into());
        let params = InitializeParams {
            process_id,
            client_info: protocol::ClientInfo {
                name: "agent-tools",
                version: env!("CARGO_PKG_VERSION"),
            },
            root_uri: uri.clone(),
            root_path: root.display().to_string(),
            workspace_folders: vec![WorkspaceFolder { uri, name }],
            capabilities: protocol::client_capabilities(),
            initialization_options: Some(spec.init_options.clone()).filter(|o| !o.is_null()),
        };
        let init_timeout = request_timeout.max(Duration::from_secs(60));
        let caps = match server.call_with::<Initialize>(&params, init_timeout).await {
            Ok(v) => v.capabilities,
            Err(e) => {
                let tail = tail_lines(&stderr.text(), 15);
                server.kill();
                return Err(start_err(format!("initialize failed: {e}"), tail));
            }
        };
        let _ = server.caps.set(caps);
        server.notify::<Initialized>(&Empty {}).await?;
        if !spec.settings.is_null() {
            server
                .notify::<DidChangeConfiguration>(&ConfigurationChange {
                    settings: spec.settings.clone(),
                })
                .await?;
        }
        server.shared.lock().last_activity = Some(Instant::now());
        Ok(server)
    }

    /// The server's capabilities from `initialize`.
    pub fn caps(&self) -> &ServerCapabilities {
        static NONE: std::sync::LazyLock<ServerCapabilities> =
            std::sync::LazyLock::new(ServerCapabilities::default);
        self.caps.get().unwrap_or(&NONE)
    }

    /// The negotiated position encoding.
    pub fn encoding(&self) -> Encoding {
        Encoding::from_lsp(self.caps().position_encoding.as_deref())
    }

    /// Whether the server offers `R` (statically, or by dynamic registration of its method).
    pub fn supports<R: Offered>(&self) -> bool {
        match R::offered(self.caps()) {
            Some(on) => on,
            None => self.shared.lock().registrations.contains(R::METHOD),
        }
    }

    /// When the server was last sent a request or notification (else when it started): the
    /// supervisor stops the least recently used idle server to stay within its cap.
    pub fn last_used(&self) -> Instant {
        self.shared.lock().last_used.unwrap_or(self.started)
    }

    fn touch(&self) {
        self.shared.lock().last_used = Some(Instant::now());
    }

    /// Why it exited, if it did.
    pub fn exited(&self) -> Option<String> {
        self.shared.lock().exited.clone()
    }

    /// Progress tasks in flight (titles are not kept, only tokens) and readiness.
    pub fn loading(&self) -> (usize, Option<bool>) {
        let sh = self.shared.lock();
        (sh.progress.len(), sh.quiescent)
    }

    /// Kill the process group now, and everything the server started.
    pub fn kill(&self) {
        self.child.kill();
    }

    fn crashed(&self, method: &str) -> LspError {
        LspError::Crashed {
            server: self.spec.id.clone(),
            method: method.to_string(),
            status: self.exited().unwrap_or_else(|| "connection closed".into()),
            stderr: tail_lines(&self.stderr.text(), 15),
        }
    }

    /// Send the notification `N`.
    pub async fn notify<N: Sent>(&self, params: &N::Params) -> Result<(), LspError> {
        let params = serde_json::to_value(params).map_err(|e| {
            self.malformed(Malformed {
                method: N::METHOD,
                what: "params",
                detail: e.to_string(),
            })
        })?;
        self.notify_raw(N::METHOD, params).await
    }

    async fn notify_raw(&self, method: &str, params: Value) -> Result<(), LspError> {
        if self.exited().is_some() {
            return Err(self.crashed(method));
        }
        self.touch();
        if method != "$/cancelRequest" {
            self.shared.lock().inputs += 1;
        }
        // Written whole even if this call times out or is dropped (the send task owns the pipe).
        match tokio::time::timeout(self.request_timeout, self.conn.notify(method, params)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.crashed(method)),
            Err(_) => Err(LspError::Timeout {
                server: self.spec.id.clone(),
                method: method.to_string(),
                secs: self.request_timeout.as_secs(),
            }),
        }
    }

    /// The request `R` with the default timeout, its reply read as `R` declares it.
    pub async fn call<R: Request>(&self, params: &R::Params) -> Result<R::Result, LspError> {
        self.call_with::<R>(params, self.request_timeout).await
    }

    /// The request `R` with an explicit timeout (on timeout it is cancelled); a reply of
    /// another shape is [`LspError::Malformed`], naming the server, the method and the field.
    pub async fn call_with<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        if self.exited().is_some() {
            return Err(self.crashed(R::METHOD));
        }
        self.touch();
        // On timeout (or if this call is dropped) the request's drop guard forgets it and sends
        // `$/cancelRequest`.
        match self.conn.call_within::<R>(params, timeout).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.call_error(R::METHOD, e).await),
        }
    }

    /// A message that did not have its declared shape, as this server's error.
    pub(crate) fn malformed(&self, e: Malformed) -> LspError {
        LspError::Malformed {
            server: self.spec.id.clone(),
            method: e.method.to_string(),
            what: e.what,
            detail: e.detail,
        }
    }

    /// Why a request has no result, as this server's error: the one place agent-rpc's
    /// [`CallError`] becomes an [`LspError`].
    async fn call_error(&self, asked: &'static str, e: CallError) -> LspError {
        match e {
            CallError::Refused { method, error } => LspError::Rpc {
                server: self.spec.id.clone(),
                method: method.to_string(),
                code: error.code,
                message: error.message,
            },
            CallError::Malformed(m) => self.malformed(m),
            CallError::Timeout { method, after } => LspError::Timeout {
                server: self.spec.id.clone(),
                method: method.to_string(),
                secs: after.as_secs(),
            },
            CallError::Connection(_) => {
                // The connection ended (the server exited or broke the protocol). Give it a
                // moment to record the exit status.
                let _ = self
                    .wait_until(|sh| sh.exited.is_some(), Duration::from_secs(2))
                    .await;
                self.crashed(asked)
            }
            other => LspError::Malformed {
                server: self.spec.id.clone(),
                method: asked.to_string(),
                what: "reply",
                detail: other.to_string(),
            },
        }
    }

    async fn wait_until(&self, pred: impl Fn(&Shared) -> bool, timeout: Duration) -> bool {
        let mut rx = self.tick.subscribe();
        let deadline = Instant::now() + timeout;
        loop {
            {
                let sh = self.shared.lock();
                if pred(&sh) {
                    return true;
                }
                if sh.exited.is_some() {
                    return false;
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let step = (deadline - now).min(Duration::from_millis(50));
            let _ = tokio::time::timeout(step, rx.changed()).await;
        }
    }

    /// Work the server reports in progress (`$/progress` not ended, rust-analyzer's quiescent
    /// flag down).
    fn working(sh: &Shared) -> bool {
        !sh.progress.is_empty() || sh.quiescent == Some(false)
    }

    /// Whether the server is loaded: no work-done progress in flight, rust-analyzer-style status
    /// quiescent, and nothing happened for [`SETTLE`] (or, for a server that reports no
    /// progress, its open settle period passed).
    fn idle(sh: &Shared) -> bool {
        sh.progress.is_empty()
            && sh.quiescent != Some(false)
            && sh.last_activity.is_none_or(|t| t.elapsed() >= SETTLE)
            && (sh.progress_seen || sh.first_open.is_none_or(|t| t.elapsed() >= sh.open_settle))
    }

    /// Wait (bounded by `timeout` and by what the call has left of its ready bound) until the
    /// server has finished loading; `false` when it had not in time. A server that used up a
    /// whole call's bound is not waited for again until its inputs change (or it becomes idle).
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        if self.stalled() {
            return false;
        }
        let ready = self
            .wait_until(Self::idle, crate::deadline::left(timeout))
            .await;
        if !ready && crate::deadline::spent() {
            let mut sh = self.shared.lock();
            sh.stalled_at = Some(sh.inputs);
            tracing::info!(server = %self.spec.id, "not ready within a call's whole ready bound: not waited for again until its inputs change");
        }
        ready
    }

    /// Whether an earlier call waited a whole ready bound for this server in vain and nothing
    /// was sent to it since, while it is still not idle.
    pub fn stalled(&self) -> bool {
        let mut sh = self.shared.lock();
        match sh.stalled_at {
            Some(at) if at == sh.inputs && !Self::idle(&sh) => true,
            Some(_) => {
                sh.stalled_at = None;
                false
            }
            None => false,
        }
    }

    /// Whether the server is idle right now.
    pub fn is_idle(&self) -> bool {
        Self::idle(&self.shared.lock())
    }

    /// Ask the server to shut down, then end its group (grace, then SIGKILL) and what it started.
    pub async fn shutdown(&self) {
        if self.exited().is_none() {
            let _ = self
                .call_with::<Shutdown>(&(), Duration::from_secs(2))
                .await;
            let _ = self.notify::<Exit>(&()).await;
            let _ = self
                .wait_until(|sh| sh.exited.is_some(), Duration::from_millis(500))
                .await;
        }
        // Then SIGTERM, a grace, SIGKILL, and everything the server started.
        self.child.terminate(Duration::from_millis(500)).await;
    }
}
