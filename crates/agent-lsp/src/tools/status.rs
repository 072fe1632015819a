//! `status` and `reload`: which servers run, for which roots, what is missing or ignored.

use crate::binaries::{project_binary, resolve_command};
use crate::config::ServerSpec;
use crate::error::LspError;
use crate::state::State;
use crate::supervisor::{CapStatus, SlotStatus};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::{confine, confine_existing};
use agent_tier::{Report, ToolOutput};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub(super) async fn status(st: &State, file: Option<&str>) -> StatusReport {
    let ws = st.ws();
    let cfg = &st.sup.cfg;
    let trusted = st.sup.trusted();
    let servers = st.sup.status().await;
    let mut detected = Vec::new();
    let mut file_error = None;
    // Folders the walk for roots could not list (the same walk for every server).
    let mut unreadable = crate::roots::Unreadable::default();
    // The project's own binaries that were not used because it is not trusted.
    let mut ignored_bins: Vec<String> = Vec::new();
    if let Some(f) = file {
        match confine(ws, "file", f) {
            Ok(path) => {
                for c in st.sup.candidates(&path) {
                    if !trusted && let Some(r) = &c.root {
                        ignored_bins.extend(untrusted_note(&c.spec, r, ws));
                    }
                    if let Some(p) = &c.ignored {
                        ignored_bins.push(format!(
                            "{} for {}",
                            agent_tier::workspace::display_path(ws, p),
                            c.spec.id
                        ));
                    }
                    detected.push(Detected {
                        id: c.spec.id.clone(),
                        usable: c.usable(),
                        roots: c.root.iter().map(|r| disp_root(ws, r)).collect(),
                        roots_total: None,
                        binary: c.binary.as_ref().map(|b| b.0.display().to_string()),
                        missing: if c.usable() {
                            String::new()
                        } else {
                            c.missing(ws)
                        },
                        language: None,
                    });
                }
            }
            Err(e) => file_error = Some(e.to_string()),
        }
    } else {
        for spec in cfg.servers.values() {
            let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
            let counted = crate::roots::roots_counted(ws, &markers);
            let (roots, total_roots) = (counted.roots, counted.total);
            if counted.unreadable.count > unreadable.count {
                unreadable = counted.unreadable;
            }
            let base = roots.first().map(PathBuf::as_path).unwrap_or(ws);
            let binary = resolve_command(spec, base, ws, trusted);
            if !trusted && let Some(r) = roots.first() {
                ignored_bins.extend(untrusted_note(spec, r, ws));
            }
            if !trusted && let Some(p) = project_binary(spec, base, ws) {
                ignored_bins.push(format!(
                    "{} for {}",
                    agent_tier::workspace::display_path(ws, &p),
                    spec.id
                ));
            }
            let mut missing = Vec::new();
            if roots.is_empty() {
                missing.push(format!(
                    "no root marker ({}) in the workspace",
                    spec.root_markers.join(", ")
                ));
            }
            if binary.is_none() {
                let progs: Vec<&str> = spec
                    .commands
                    .iter()
                    .filter_map(|c| c.first().map(String::as_str))
                    .collect();
                missing.push(format!(
                    "binary not found ({}; install: {})",
                    progs.join(", "),
                    spec.install
                ));
            }
            detected.push(Detected {
                id: spec.id.clone(),
                usable: !roots.is_empty() && binary.is_some(),
                roots: roots.iter().map(|r| disp_root(ws, r)).collect(),
                roots_total: Some(total_roots),
                binary: binary.as_ref().map(|b| b.0.display().to_string()),
                missing: missing.join("; "),
                language: Some(spec.language.clone()),
            });
        }
    }
    // Only when something would start: working it out asks rustup where the host's
    // toolchain is.
    let contained = match (
        st.sup.containment(),
        servers.is_empty() && detected.is_empty(),
    ) {
        (None, _) | (_, true) => None,
        (Some(Ok(c)), _) => Some(c.summary.clone()),
        (Some(Err(e)), _) => Some(format!("none, so servers do not start: {}", e.0)),
    };
    let ignored: Vec<String> = cfg.ignored.iter().chain(&ignored_bins).cloned().collect();
    StatusReport {
        cap: st.sup.cap(),
        detected,
        trusted,
        contained,
        how_to_trust: (!ignored.is_empty()).then(|| cfg.how_to_trust()),
        ignored,
        unreadable_folders: unreadable.shown(ws),
        unreadable_note: unreadable.note(ws, "roots").map(|note| {
            format!(
                "note: {note}; a root inside {} is not listed",
                if unreadable.count == 1 { "it" } else { "them" }
            )
        }),
        servers: servers
            .into_iter()
            .map(|s| ServerShown {
                shown_root: disp_root(ws, &s.root),
                slot: s,
            })
            .collect(),
        file: file.map(str::to_string),
        file_error,
        warnings: cfg.warnings.clone(),
    }
}

pub(super) async fn reload(st: &State, file: Option<&str>) -> Result<ToolOutput, LspError> {
    let path = match file {
        Some(f) => Some(confine_existing(st.ws(), "file", f)?),
        None => None,
    };
    let stopped = st.sup.reload(path.as_deref()).await;
    let mut out = Vec::new();
    if stopped.is_empty() {
        out.push("no running server to restart".to_string());
    }
    for (id, root) in &stopped {
        out.push(format!("stopped {id} for {}", disp_root(st.ws(), root)));
    }
    if let Some(p) = &path {
        let srv = st.sup.server_for(p).await?;
        out.push(format!(
            "started {} for {} (pid {})",
            srv.spec.id,
            disp_root(st.ws(), &srv.root),
            srv.pid.unwrap_or(0)
        ));
    } else if !stopped.is_empty() {
        out.push("each starts again at the next call on one of its files".to_string());
    }
    Ok(ToolOutput::text(out.join("\n")))
}

/// What a server is not allowed to do for a project that is not trusted, when it is something
/// (its spec's [`Untrusted`](crate::config::Untrusted)).
pub(super) fn untrusted_note(spec: &ServerSpec, root: &Path, ws: &Path) -> Option<String> {
    if let Some(withheld) = &spec.untrusted.withheld {
        return Some(withheld.clone());
    }
    if !spec.untrusted.host_typescript {
        return None;
    }
    [root, ws]
        .into_iter()
        .map(|d| d.join("node_modules/typescript"))
        .find(|d| d.is_dir())
        .map(|d| {
            format!(
                "{} for {} (it loads the TypeScript installed beside it)",
                agent_tier::workspace::display_path(ws, &d),
                spec.id
            )
        })
}

pub(super) fn disp_root(ws: &Path, root: &Path) -> String {
    let d = agent_tier::workspace::display_path(ws, root);
    if d.is_empty() { ".".into() } else { d }
}

/// What `status` says: the servers of this run, the cap, which servers could serve the
/// workspace (or a file) and what each lacks, and whether the project is trusted.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusReport {
    /// Every server slot of this run: running, crashed, failed to start or stopped.
    pub servers: Vec<ServerShown>,
    /// The cap on running servers.
    pub cap: CapStatus,
    /// The servers that could serve the workspace (or the file), in order of preference.
    pub detected: Vec<Detected>,
    /// Whether the project's own programs and settings may run.
    pub trusted: bool,
    /// How the servers of an untrusted project are contained (none: trusted, or nothing would
    /// start).
    pub contained: Option<String>,
    /// What was ignored because the project is not trusted.
    pub ignored: Vec<String>,
    /// Folders the walk for roots could not read.
    pub unreadable_folders: crate::roots::UnreadableFolders,
    /// The file asked about.
    #[serde(skip)]
    pub file: Option<String>,
    /// Why the file asked about was refused.
    #[serde(skip)]
    pub file_error: Option<String>,
    /// What the unreadable folders mean for the list.
    #[serde(skip)]
    pub unreadable_note: Option<String>,
    /// The config files' warnings.
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// How to trust the project, when something was ignored.
    #[serde(skip)]
    pub how_to_trust: Option<String>,
}

/// One server slot, as `status` shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct ServerShown {
    /// The slot.
    pub slot: SlotStatus,
    /// Its root, relative to the workspace root (`.` for the root itself).
    #[serde(skip)]
    pub shown_root: String,
}

/// A server that could serve the workspace or the file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Detected {
    /// The server's id.
    pub id: String,
    /// Both a root marker and a binary were found.
    pub usable: bool,
    /// The roots it would serve (relative to the workspace root; at most 50).
    pub roots: Vec<String>,
    /// How many roots there are in all (for the workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots_total: Option<usize>,
    /// The binary that would run.
    pub binary: Option<String>,
    /// What is missing, in words (empty when usable).
    pub missing: String,
    /// The language it serves (for the workspace).
    #[serde(skip)]
    pub language: Option<String>,
}

impl Detected {
    /// Its line: usable, or what is missing and what was found.
    fn line(&self) -> String {
        let binary = self.binary.as_deref().unwrap_or_default();
        match &self.language {
            // One file's candidates.
            None if self.usable => format!(
                "- {}: usable; root {}; binary {binary}",
                self.id,
                self.roots.first().map(String::as_str).unwrap_or_default()
            ),
            None => {
                let mut have: Vec<String> =
                    self.roots.iter().map(|r| format!("root {r}")).collect();
                have.extend(self.binary.iter().map(|b| format!("binary {b}")));
                format!(
                    "- {}: not usable; {}{}",
                    self.id,
                    self.missing,
                    present(&have)
                )
            }
            // The workspace's servers: the list stops at 50 roots and says how many it left
            // out.
            Some(language) => {
                let more_roots = match self
                    .roots_total
                    .unwrap_or_default()
                    .saturating_sub(self.roots.len())
                {
                    0 => String::new(),
                    1 => " … and 1 more root".to_string(),
                    n => format!(" … and {n} more roots"),
                };
                let roots = self.roots.join(", ");
                if self.usable {
                    format!(
                        "- {} ({language}): usable for {roots}{more_roots}; binary {binary}",
                        self.id
                    )
                } else {
                    let mut have = Vec::new();
                    if !self.roots.is_empty() {
                        have.push(format!("root marker found in {roots}{more_roots}"));
                    }
                    have.extend(self.binary.iter().map(|b| format!("binary {b}")));
                    format!(
                        "- {} ({language}): not usable; {}{}",
                        self.id,
                        self.missing,
                        present(&have)
                    )
                }
            }
        }
    }
}

/// ` (present: a; b)`, or nothing.
fn present(have: &[String]) -> String {
    if have.is_empty() {
        String::new()
    } else {
        format!(" (present: {})", have.join("; "))
    }
}

impl Report for StatusReport {
    fn text(&self) -> String {
        let mut out = Vec::new();
        if self.servers.is_empty() {
            out.push("no language server has been started in this run (servers start at the first call on a file)".to_string());
        } else {
            out.push("language servers:".to_string());
            for ServerShown {
                slot: s,
                shown_root,
            } in &self.servers
            {
                let pid = s.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                out.push(format!("- {} for {shown_root}{pid}: {}", s.id, s.state));
                if let Some(t) = &s.stderr_tail {
                    out.push(format!("  stderr tail:\n    {}", t.replace('\n', "\n    ")));
                }
            }
            let cap = &self.cap;
            out.push(format!(
                "cap: {} running of at most {} (`max_servers`, {}); {} stopped so far to stay within it (the least recently used idle server goes first and starts again at its next use)",
                cap.running, cap.max_servers, cap.from, cap.evictions
            ));
        }
        match (&self.file, &self.file_error) {
            (Some(_), Some(e)) => out.push(e.clone()),
            (Some(f), None) => out.push(format!("servers for `{f}` (in order of preference):")),
            (None, _) => out.push("servers for this workspace:".to_string()),
        }
        out.extend(self.detected.iter().map(Detected::line));
        out.extend(self.unreadable_note.iter().cloned());
        out.extend(self.warnings.iter().map(|w| format!("config warning: {w}")));
        if let Some(how) = &self.how_to_trust {
            out.push("ignored because this project is not trusted:".to_string());
            out.extend(self.ignored.iter().map(|i| format!("- {i}")));
            out.push(how.clone());
        }
        if let Some(c) = &self.contained {
            out.push(format!(
                "servers of this untrusted project run contained: {c}"
            ));
        }
        out.join("\n")
    }
}
