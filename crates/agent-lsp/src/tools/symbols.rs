//! `symbols`: a file's symbols, or a workspace search that starts the servers it needs.

use crate::client::Server;
use crate::error::LspError;
use crate::protocol::{DocumentParams, DocumentSymbols, WorkspaceSymbolParams, WorkspaceSymbols};
use crate::render::{self, Renderer, Sym, workspace_symbols};
use crate::state::State;
use crate::text::path_to_uri;
use crate::tools::asking;
use crate::tools::{PARTIAL, arg_err};
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::confine_existing;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

pub(super) async fn symbols(
    st: &State,
    file: Option<&str>,
    query: Option<&str>,
) -> Result<SymbolsReport, LspError> {
    match (file, query) {
        (Some(file), None) => {
            let (path, display, text) = st.read_file(file)?;
            let srv = st.sup.server_for(&path).await?;
            srv.sync(&path, &text, false).await?;
            let ready = srv.wait_ready(st.sup.cfg.ready_timeout).await;
            let (v, partial) =
                asking::ask::<DocumentSymbols>(st, &srv, &DocumentParams::new(path_to_uri(&path)))
                    .await?;
            let mut r = Renderer::new(st.ws(), srv.encoding());
            r.preload(&path, &text);
            let syms = render::symbols(&mut r, &v, &path);
            Ok(render_syms(
                format!("symbols in `{display}` ({})", srv.spec.id),
                syms,
                200,
                partial || !ready,
                &srv.spec.id,
            ))
        }
        (file, Some(query)) => {
            let file = match file {
                Some(f) => Some(confine_existing(st.ws(), "path", f)?),
                None => None,
            };
            let (servers, note) = search_servers(st, file.as_deref()).await?;
            let mut all = Vec::new();
            let mut partial = false;
            let mut ids = Vec::new();
            for srv in servers {
                let ready = srv.wait_ready(st.sup.cfg.ready_timeout).await;
                let params = WorkspaceSymbolParams {
                    query: query.to_string(),
                };
                let (v, p) = asking::ask::<WorkspaceSymbols>(st, &srv, &params).await?;
                partial |= p || !ready;
                let mut r = Renderer::new(st.ws(), srv.encoding());
                all.extend(workspace_symbols(&mut r, &v));
                ids.push(srv.spec.id.clone());
            }
            let ids = ids.join(", ");
            let mut out = render_syms(
                format!("workspace symbols matching `{query}` ({ids})"),
                all,
                100,
                partial,
                &ids,
            );
            out.note = note;
            Ok(out)
        }
        (None, None) => Err(arg_err(
            "`symbols` needs `query` (workspace search) or `path` (that file's symbols)",
        )),
    }
}

/// The servers a workspace symbol search asks: the one for `file` (synced first), else the
/// running ones, else (cold) those the workspace calls for — one file per extension, at
/// most four servers — with a note when a folder could not be looked in for such files. An
/// error says why none can search.
pub(super) async fn search_servers(
    st: &State,
    file: Option<&Path>,
) -> Result<(Vec<Arc<Server>>, Option<String>), LspError> {
    let servers: Vec<Arc<Server>> = match file {
        Some(path) => {
            let srv = st.sup.server_for(path).await?;
            if let Ok(text) = crate::text::read_text(st.ws(), path) {
                srv.sync(path, &text, false).await?;
            }
            vec![srv]
        }
        None => st.sup.running(),
    };
    let mut servers: Vec<Arc<Server>> = servers
        .into_iter()
        .filter(|s| s.supports::<WorkspaceSymbols>())
        .collect();
    let mut why_none = Vec::new();
    let mut note = None;
    if servers.is_empty() && file.is_none() {
        let (samples, unreadable) = crate::discover::one_file_per_extension(st.ws(), 5000);
        note = unreadable.note(st.ws(), "files").map(|n| {
            format!(
                "{n}; a file inside {} was not looked at",
                if unreadable.count == 1 { "it" } else { "them" }
            )
        });
        for sample in samples {
            if servers.len() >= 4 {
                break;
            }
            if st.sup.candidates(&sample).is_empty() {
                continue;
            }
            match st.sup.server_for(&sample).await {
                Ok(srv) => {
                    if servers.iter().any(|s| Arc::ptr_eq(s, &srv)) {
                        continue;
                    }
                    if let Ok(text) = crate::text::read_text(st.ws(), &sample) {
                        let _ = srv.sync(&sample, &text, false).await;
                    }
                    if srv.supports::<WorkspaceSymbols>() {
                        servers.push(srv);
                    } else {
                        why_none.push(format!("{} offers no workspace symbol search", srv.spec.id));
                    }
                }
                Err(e) => why_none.push(e.to_string()),
            }
        }
    }
    if servers.is_empty() {
        let why = if why_none.is_empty() {
            match file {
                Some(_) => "its server offers no workspace symbol search".to_string(),
                None => "no file of the workspace has a configured language server".to_string(),
            }
        } else {
            why_none.join("; ")
        };
        let note = note.map(|n| format!("; {n}")).unwrap_or_default();
        return Err(arg_err(format!(
            "no language server could search workspace symbols ({why}); pass `path` (any file of the language to search) together with `query`{note}"
        )));
    }
    Ok((servers, note))
}

/// At most `limit` of `syms`, under `head` (`symbols in …`, `workspace symbols matching …`).
pub(super) fn render_syms(
    head: String,
    syms: Vec<Sym>,
    limit: usize,
    partial: bool,
    server: &str,
) -> SymbolsReport {
    let total = syms.len();
    SymbolsReport {
        operation: "symbols",
        server: server.to_string(),
        symbols: syms.into_iter().take(limit).collect(),
        total,
        partial,
        head,
        note: None,
    }
}

/// What `symbols` found: a file's symbols, or a workspace search's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SymbolsReport {
    /// `symbols`.
    pub operation: &'static str,
    /// The servers that answered, comma-separated.
    pub server: String,
    /// The symbols (a file: the first 200; a search: the first 100), nested ones after their
    /// container.
    pub symbols: Vec<Sym>,
    /// How many there are in all.
    pub total: usize,
    /// A server had not finished loading: the list may be partial.
    pub partial: bool,
    /// What was listed, as the text's first line says it.
    #[serde(skip)]
    pub head: String,
    /// A folder that could not be looked in while choosing the servers to ask.
    #[serde(skip)]
    pub note: Option<String>,
}

impl Report for SymbolsReport {
    fn text(&self) -> String {
        let head = &self.head;
        let mut out = Vec::new();
        if self.symbols.is_empty() {
            out.push(format!("no {head}"));
        } else {
            out.push(format!("{head}:"));
            out.extend(self.symbols.iter().map(Sym::render));
            if self.total > self.symbols.len() {
                out.push(format!(
                    "(showing {} of {})",
                    self.symbols.len(),
                    self.total
                ));
            }
        }
        if self.partial {
            out.push(PARTIAL.to_string());
        }
        out.extend(self.note.iter().map(|n| format!("note: {n}")));
        out.join("\n")
    }
}
