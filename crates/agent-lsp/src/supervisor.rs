//! The run's servers: one per (server id, root), started at call time when a root marker AND a
//! binary are both present, restarted with backoff after a crash, and at most
//! [`Resolved::max_servers`] at once.
//!
//! The cap on running servers, and the evictions that keep to it, are [`cap`].
//!
//! The log (`tracing`, target `agent_lsp::supervisor`): a server started for a root (`info`), a
//! restart after a crash with its backoff and a server stopped to stay within the cap (`info`
//! with `notice = true`, which the host forwards to MCP clients as a `notice`), a server that
//! could not start (`warn`). The crash itself is
//! logged by `agent-proc` when the process is reaped (`warn`), labelled with the purpose given
//! here (`language server <id> for <root>`).

use crate::binaries::{LOCAL_DIRS, host_only, project_binary, resolve_command};
use crate::client::{Launch, Server, tail_lines};
use crate::config::{Resolved, ServerSpec};
use crate::contain::{Containment, Uncontained};
use crate::error::LspError;
use crate::roots::root_for;
use agent_tier::schemars::{self, JsonSchema};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

mod cap;
pub use cap::CapStatus;
use cap::{Occupancy, Reservation, Room};

/// Whether a server could serve a file, and which half is missing when it cannot.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub spec: Arc<ServerSpec>,
    pub root: Option<PathBuf>,
    pub binary: Option<(PathBuf, Vec<String>)>,
    /// The project's own binary, not used because the project is not trusted.
    pub ignored: Option<PathBuf>,
}

impl Candidate {
    /// `root + binary` when both are present.
    pub fn usable(&self) -> bool {
        self.root.is_some() && self.binary.is_some()
    }

    /// What is missing, in words.
    pub fn missing(&self, ws: &Path) -> String {
        let mut parts = Vec::new();
        if self.root.is_none() {
            parts.push(format!(
                "no root marker ({}) in the file's folder or any parent inside {}",
                self.spec.root_markers.join(", "),
                ws.display()
            ));
        }
        if self.binary.is_none() {
            let progs: Vec<&str> = self
                .spec
                .commands
                .iter()
                .filter_map(|c| c.first().map(String::as_str))
                .collect();
            parts.push(format!(
                "binary not found ({}; looked in {} and $PATH; install: {})",
                progs.join(", "),
                LOCAL_DIRS.join(", "),
                self.spec.install
            ));
        }
        if let Some(p) = &self.ignored {
            parts.push(format!(
                "the project's own {} was ignored (the project is not trusted)",
                agent_tier::workspace::display_path(ws, p)
            ));
        }
        parts.join("; ")
    }
}

#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    crashes: u32,
    last_crash: Option<Instant>,
    last_error: Option<String>,
    /// Stopped to stay within the cap; the next call starts it again.
    evicted: bool,
}

type SlotRef = Arc<tokio::sync::Mutex<Slot>>;
type Key = (String, PathBuf);

/// A slot and, readable without its (async) lock, whether it counts against the cap.
#[derive(Default)]
struct Entry {
    slot: SlotRef,
    occupancy: Occupancy,
}

/// One entry of `status`.
#[derive(Debug, Clone, serde::Serialize, JsonSchema)]
pub struct SlotStatus {
    /// The server's id.
    pub id: String,
    /// The root it serves.
    pub root: PathBuf,
    /// Running (ready, loading, indexing), crashed, failed to start, or stopped, in words.
    pub state: String,
    /// Its process id, while it has one.
    pub pid: Option<u32>,
    /// How many times it was restarted after a crash or a failed start.
    pub restarts: u32,
    /// The tail of its stderr (crashed), or why it failed to start.
    pub stderr_tail: Option<String>,
}

/// The run's language servers.
pub struct Supervisor {
    pub cfg: Resolved,
    pub root: PathBuf,
    prefix: Vec<String>,
    slots: Mutex<HashMap<Key, Entry>>,
    /// Servers stopped to stay within the cap.
    evictions: AtomicU64,
    /// How untrusted servers are contained, worked out at the first start.
    containment: std::sync::OnceLock<Result<Containment, Uncontained>>,
    /// The person trusted the project for this run (asked because nothing could contain its
    /// servers: [`crate::trust`]).
    granted: std::sync::atomic::AtomicBool,
}

impl Supervisor {
    /// The sandbox prefix every child of this family is launched through.
    pub fn prefix(&self) -> &[String] {
        &self.prefix
    }

    /// How this run's servers are contained: `None` for a trusted project, else the
    /// containment or why there can be none.
    pub fn containment(&self) -> Option<&Result<Containment, Uncontained>> {
        if self.trusted() {
            return None;
        }
        Some(self.containment.get_or_init(|| {
            crate::contain::untrusted(
                &self.root,
                &self.prefix,
                self.cfg.untrusted_sandbox,
                self.cfg.user_file.as_deref(),
            )
        }))
    }

    pub fn new(cfg: Resolved, root: PathBuf, prefix: Vec<String>) -> Self {
        Supervisor {
            cfg,
            root,
            prefix,
            slots: Mutex::new(HashMap::new()),
            evictions: AtomicU64::new(0),
            containment: std::sync::OnceLock::new(),
            granted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the project is trusted: by the user's own config, `--trust`, or the person's
    /// answer in this run.
    pub fn trusted(&self) -> bool {
        self.cfg.trusted || self.granted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The person trusted the project for the rest of this run.
    pub fn grant_trust(&self) {
        self.granted
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The servers that could serve `path`, in order of preference, with what each lacks.
    pub fn candidates(&self, path: &Path) -> Vec<Candidate> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_default();
        self.cfg
            .servers_for_ext(&ext)
            .into_iter()
            .map(|spec| {
                let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
                let root = root_for(&self.root, path, &markers);
                let base = root.as_deref().unwrap_or(&self.root);
                let binary = resolve_command(spec, base, &self.root, self.trusted());
                let ignored = if self.trusted() {
                    None
                } else {
                    project_binary(spec, base, &self.root)
                };
                Candidate {
                    spec: Arc::new(spec.clone()),
                    root,
                    binary,
                    ignored,
                }
            })
            .collect()
    }

    /// The live server `id` for `root`, if one runs (no binary resolution: the fast path).
    fn live(&self, id: &str, root: &Path) -> Option<Arc<Server>> {
        let slot = self
            .slots
            .lock()
            .get(&(id.to_string(), root.to_path_buf()))
            .map(|e| e.slot.clone())?;
        let s = slot.try_lock().ok()?;
        s.server.clone().filter(|srv| srv.exited().is_none())
    }

    /// The server for `path` (started if needed), or why there is none.
    pub async fn server_for(&self, path: &Path) -> Result<Arc<Server>, LspError> {
        // Fast path: the preferred usable server is already running for this root.
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_default();
        for spec in self.cfg.servers_for_ext(&ext) {
            let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
            let Some(root) = root_for(&self.root, path, &markers) else {
                continue;
            };
            match self.live(&spec.id, &root) {
                Some(srv) => return Ok(srv),
                None => break,
            }
        }
        let cands = self.candidates(path);
        let file = agent_tier::workspace::display_path(&self.root, path);
        if cands.is_empty() {
            let mut exts: Vec<String> = self
                .cfg
                .servers
                .values()
                .flat_map(|s| s.extensions.keys().cloned())
                .collect();
            exts.sort();
            exts.dedup();
            return Err(LspError::NoServer {
                file,
                detail: format!(
                    "no server is configured for this file type; configured extensions: {}",
                    exts.join(", ")
                ),
            });
        }
        for c in &cands {
            if let (Some(root), Some((bin, args))) = (&c.root, &c.binary) {
                let spec = host_only(c.spec.clone(), bin, self.trusted());
                return self
                    .get_or_start(spec, root.clone(), bin.clone(), args.clone(), &file)
                    .await;
            }
        }
        let detail = cands
            .iter()
            .map(|c| format!("{}: {}", c.spec.id, c.missing(&self.root)))
            .collect::<Vec<_>>()
            .join(" | ");
        Err(LspError::NoServer { file, detail })
    }

    fn slot(&self, id: &str, root: &Path) -> Arc<tokio::sync::Mutex<Slot>> {
        self.slots
            .lock()
            .entry((id.to_string(), root.to_path_buf()))
            .or_default()
            .slot
            .clone()
    }

    async fn get_or_start(
        &self,
        spec: Arc<ServerSpec>,
        root: PathBuf,
        binary: PathBuf,
        args: Vec<String>,
        file: &str,
    ) -> Result<Arc<Server>, LspError> {
        let slot = self.slot(&spec.id, &root);
        let key: Key = (spec.id.clone(), root.clone());
        let mut s = slot.lock().await;
        let mut crashed: Option<String> = None;
        if let Some(srv) = &s.server {
            let Some(status) = srv.exited() else {
                return Ok(srv.clone());
            };
            crashed = Some(status);
            // A server that ran a good while before dying starts its backoff afresh.
            if srv.started.elapsed() > Duration::from_secs(120) {
                s.crashes = 0;
            }
            s.crashes += 1;
            s.last_crash = Some(Instant::now());
            s.server = None;
        }
        let (id, at_root) = (spec.id.clone(), root.display().to_string());
        // An untrusted project's server runs contained, or not at all.
        let mut prefix = self.prefix.clone();
        let mut kept_env = None;
        let mut confinement = None;
        let spec = match self.containment() {
            None => spec,
            Some(Err(Uncontained(why))) => {
                return Err(LspError::Start {
                    server: id,
                    root: at_root,
                    detail: why.clone(),
                    stderr: String::new(),
                });
            }
            Some(Ok(c)) => {
                let door = match crate::contain::toolchain_doors(
                    spec.untrusted.linked_cargo_project,
                    &root,
                ) {
                    Ok(door) => door,
                    Err(Uncontained(why)) => {
                        return Err(LspError::Start {
                            server: id,
                            root: at_root,
                            detail: why,
                            stderr: String::new(),
                        });
                    }
                };
                prefix.extend(c.wrap_for(&binary, &args));
                kept_env = Some(crate::contain::KEPT_ENV);
                confinement = c.confinement_for(&binary, &self.root);
                let mut spec = (*spec).clone();
                if let Some(options) = door {
                    crate::config::merge(&mut spec.init_options, options);
                }
                spec.env.extend(c.env.clone());
                Arc::new(spec)
            }
        };
        // Room under the cap: free, or made by stopping the least recently used idle server,
        // or waited for while every running server is busy.
        let waited_from = Instant::now();
        let reservation = loop {
            match self.room(&key) {
                Room::Free => break Reservation { sup: self, key },
                Room::Evict(victim, guard) => {
                    let reservation = Reservation { sup: self, key };
                    self.evict(victim, guard, &id, &at_root).await;
                    break reservation;
                }
                Room::Full { running } => {
                    let wait = self.cfg.request_timeout;
                    if waited_from.elapsed() >= wait {
                        let file_hint = self
                            .cfg
                            .user_file
                            .as_ref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_else(|| "~/.config/agent-tools/lsp.json".into());
                        return Err(LspError::NoServer {
                            file: file.to_string(),
                            detail: format!(
                                "{id} for {at_root} cannot start: the cap of {} running language servers (`max_servers`, {}) is reached and all {running} were busy with other calls for {} s; try again when one finishes, `reload` one you no longer need, or raise `max_servers` in your own {file_hint}",
                                self.cfg.max_servers,
                                self.cfg.max_servers_from,
                                wait.as_secs()
                            ),
                        });
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        if std::mem::take(&mut s.evicted) {
            tracing::info!(
                notice = true,
                server = %id,
                root = %at_root,
                "starting language server {id} for {at_root} again (it was stopped to stay within the cap of {} running servers)",
                self.cfg.max_servers
            );
        }
        if let (true, Some(at)) = (s.crashes > 0, s.last_crash) {
            let backoff = Duration::from_millis(250 * (1u64 << (s.crashes - 1).min(5)))
                .min(Duration::from_secs(8));
            let wait = backoff.saturating_sub(at.elapsed());
            let after = crashed
                .as_deref()
                .or(s.last_error.as_deref())
                .unwrap_or("an earlier failure");
            tracing::info!(
                notice = true,
                server = %id,
                root = %at_root,
                attempt = s.crashes,
                backoff_ms = wait.as_millis() as u64,
                "restarting language server {id} for {at_root} after it {after} (attempt {}, in {} ms)",
                s.crashes,
                wait.as_millis()
            );
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        let purpose = format!("language server {id} for {at_root}");
        let started = agent_proc::with_purpose(
            purpose,
            Server::start(
                spec,
                root,
                Launch {
                    binary: binary.clone(),
                    args,
                    prefix,
                    kept_env,
                    confinement,
                },
                self.cfg.request_timeout,
            ),
        )
        .await;
        match started {
            Ok(srv) => {
                tracing::info!(
                    notice = s.crashes > 0,
                    server = %id,
                    root = %at_root,
                    pid = srv.pid,
                    binary = %binary.display(),
                    "language server {id} started for {at_root}"
                );
                s.server = Some(srv.clone());
                s.last_error = None;
                self.set_occupancy(&reservation.key, Occupancy::Running(Arc::downgrade(&srv)));
                Ok(srv)
            }
            Err(e) => {
                s.crashes += 1;
                s.last_crash = Some(Instant::now());
                s.last_error = Some(e.to_string());
                tracing::warn!(
                    server = %id,
                    root = %at_root,
                    failures = s.crashes,
                    error = %e,
                    "language server {id} could not start for {at_root}; the next call retries after a backoff"
                );
                Err(e)
            }
        }
    }

    /// Every live server.
    pub fn running(&self) -> Vec<Arc<Server>> {
        let slots: Vec<_> = self.slots.lock().values().map(|e| e.slot.clone()).collect();
        slots
            .iter()
            .filter_map(|s| s.try_lock().ok().and_then(|g| g.server.clone()))
            .filter(|s| s.exited().is_none())
            .collect()
    }

    /// Shut down the servers whose root covers `path` (every server when `None`); returns
    /// `(id, root)` of each.
    pub async fn reload(&self, path: Option<&Path>) -> Vec<(String, PathBuf)> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.slot.clone()))
            .collect();
        let mut out = Vec::new();
        for ((id, root), slot) in slots {
            if path.is_some_and(|p| !p.starts_with(&root)) {
                continue;
            }
            let mut s = slot.lock().await;
            if let Some(srv) = s.server.take() {
                srv.shutdown().await;
                out.push((id.clone(), root.clone()));
            }
            s.crashes = 0;
            s.last_crash = None;
            s.last_error = None;
            s.evicted = false;
            self.set_occupancy(&(id, root), Occupancy::Free);
        }
        out.sort();
        out
    }

    /// Every server slot, running, crashed or failed to start.
    pub async fn status(&self) -> Vec<SlotStatus> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.slot.clone()))
            .collect();
        let mut out = Vec::new();
        for ((id, root), slot) in slots {
            let (state, pid, restarts, stderr_tail) = match slot.try_lock() {
                Err(_) => ("starting".to_string(), None, 0, None),
                Ok(s) => match &s.server {
                    Some(srv) => match srv.exited() {
                        Some(status) => (
                            format!("crashed ({status}); the next call restarts it"),
                            srv.pid,
                            s.crashes,
                            Some(tail_lines(&srv.stderr.text(), 15)),
                        ),
                        None => {
                            let (tasks, quiescent) = srv.loading();
                            let state = if srv.stalled() {
                                format!(
                                    "running, not ready: a call waited its whole ready bound ({} s) in vain; calls answer without waiting for it until a file it serves is opened or changed",
                                    self.cfg.ready_timeout.as_secs()
                                )
                            } else if srv.is_idle() {
                                "running, ready".to_string()
                            } else if tasks > 0 {
                                format!("running, loading ({tasks} task(s) in progress)")
                            } else if quiescent == Some(false) {
                                "running, indexing".to_string()
                            } else {
                                "running".to_string()
                            };
                            (state, srv.pid, s.crashes, None)
                        }
                    },
                    None => match &s.last_error {
                        Some(e) => (
                            "failed to start; the next call retries".to_string(),
                            None,
                            s.crashes,
                            Some(e.clone()),
                        ),
                        None if s.evicted => (
                            format!(
                                "stopped to stay within the cap of {} running servers (`max_servers`); the next call starts it again",
                                self.cfg.max_servers
                            ),
                            None,
                            s.crashes,
                            None,
                        ),
                        None => ("stopped".to_string(), None, s.crashes, None),
                    },
                },
            };
            out.push(SlotStatus {
                id,
                root,
                state,
                pid,
                restarts,
                stderr_tail,
            });
        }
        out.sort_by(|a, b| (&a.id, &a.root).cmp(&(&b.id, &b.root)));
        out
    }
}
