//! `diagnostics` of one file: synced, fresh for that content, rendered.

use crate::error::LspError;
use crate::render::{Diag, Renderer};
use crate::state::State;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{Report, RoomId};
use serde::Serialize;

pub(super) async fn diagnostics(
    st: &State,
    file: &str,
    room: &RoomId,
) -> Result<FileDiagnostics, LspError> {
    let (path, display, text) = st.read_file(file)?;
    let srv = st.sup.server_for(&path).await?;
    let synced = srv.sync(&path, &text, false).await?;
    let got = srv
        .fresh_diagnostics(&path, synced, st.sup.cfg.ready_timeout)
        .await;
    let (items, fresh) = (got.items, got.complete);
    let mut r = Renderer::new(st.ws(), srv.encoding());
    r.preload(&path, &text);
    let all: Vec<Diag> = items.iter().map(|d| r.diag(&path, d)).collect();
    let minor = all
        .iter()
        .filter(|d| d.severity == "info" || d.severity == "hint")
        .count();
    let shown: Vec<Diag> = all
        .into_iter()
        .filter(|d| d.severity == "error" || d.severity == "warning")
        .collect();
    // What the agent has been shown is "already reported" for the write wrapper.
    let _ = st.unseen(room, shown.clone());
    Ok(FileDiagnostics {
        operation: "diagnostics",
        server: srv.spec.id.clone(),
        file: display,
        complete: fresh && !got.busy,
        mode: if got.pulled { "pull" } else { "push" },
        diagnostics: shown,
        fresh,
        busy: got.busy,
        minor,
        timeout_secs: st.sup.cfg.ready_timeout.as_secs(),
    })
}

/// What `diagnostics` of one file found: its errors and warnings for the content on disk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileDiagnostics {
    /// `diagnostics`.
    pub operation: &'static str,
    /// The server that answered.
    pub server: String,
    /// The file, relative to the workspace root.
    pub file: String,
    /// The answer is for the current content and the server was not still busy.
    pub complete: bool,
    /// `pull` (the server was asked) or `push` (its publish for this content was waited for).
    pub mode: &'static str,
    /// The errors and warnings.
    pub diagnostics: Vec<Diag>,
    /// An answer for the current content came in time.
    #[serde(skip)]
    pub fresh: bool,
    /// The server was still indexing or checking.
    #[serde(skip)]
    pub busy: bool,
    /// Information and hint diagnostics left out.
    #[serde(skip)]
    pub minor: usize,
    /// How long the answer was waited for.
    #[serde(skip)]
    pub timeout_secs: u64,
}

impl Report for FileDiagnostics {
    fn text(&self) -> String {
        let (server, file) = (&self.server, &self.file);
        let mut out = Vec::new();
        if !self.fresh {
            out.push(format!(
                "{server} did not report diagnostics for the current content of `{file}`: timed out after {} s; try again",
                self.timeout_secs
            ));
        } else if self.diagnostics.is_empty() {
            out.push(format!("no errors or warnings in `{file}` ({server})"));
        } else {
            out.push(format!(
                "{} problem(s) in `{file}` ({server}):",
                self.diagnostics.len()
            ));
            out.extend(self.diagnostics.iter().map(Diag::render));
        }
        if self.minor > 0 {
            out.push(format!(
                "({} info/hint diagnostic(s) not shown)",
                self.minor
            ));
        }
        if self.fresh && self.busy {
            out.push(format!(
                "(partial: {server} was still indexing or checking; ask again for a complete answer)"
            ));
        }
        out.join("\n")
    }
}
