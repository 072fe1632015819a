//! Diagnostics of a synced document: what the server published, and the fresh answer for one
//! synced version (pulled, or the publish that carries that version).

use crate::client::documents::Synced;
use crate::client::{CONTENT_MODIFIED, Fresh, PUBLISH_SETTLE, SERVER_CANCELLED, Server, Shared};
use crate::error::LspError;
use crate::protocol::Diagnostic;
use crate::protocol::{
    DocumentDiagnostic, DocumentDiagnosticReport, DocumentParams, ExecuteCommandParams, Position,
    Range, TSSERVER_REQUEST, TsserverDiagnostic, TsserverFile, TsserverRequest,
};
use crate::text::path_to_uri;
use agent_rpc::Request;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

impl Server {
    /// The diagnostics last published for every document, as they stand now.
    pub fn published(&self) -> HashMap<PathBuf, Vec<Diagnostic>> {
        self.shared
            .lock()
            .diagnostics
            .iter()
            .map(|(p, d)| (p.clone(), d.items.clone()))
            .collect()
    }

    /// The documents the server has open.
    pub async fn open_paths(&self) -> Vec<PathBuf> {
        self.docs.lock().await.keys().cloned().collect()
    }

    /// Diagnostics for the content synced as `synced`: pulled when the server supports it (also
    /// when it registers pull support while we wait), else the first publish for that version,
    /// then (bounded) until the server is quiet again.
    pub async fn fresh_diagnostics(&self, path: &Path, synced: Synced, timeout: Duration) -> Fresh {
        let deadline = Instant::now() + timeout;
        // typescript-language-server publishes without a version and with no end signal; its
        // tsserver is asked directly instead, which answers for the content synced before.
        if self.offers_tsserver_requests()
            && let Some(items) = self.tsserver_diagnostics(path, deadline).await
        {
            return Fresh {
                items,
                complete: true,
                pulled: true,
                busy: Self::working(&self.shared.lock()),
            };
        }
        let mut tried_pull = false;
        loop {
            if !tried_pull && self.supports::<DocumentDiagnostic>() {
                tried_pull = true;
                if let Some(items) = self.pull(path, deadline).await {
                    let items = self.merge_pushed(path, synced, items, deadline).await;
                    return Fresh {
                        items,
                        complete: true,
                        pulled: true,
                        busy: Self::working(&self.shared.lock()),
                    };
                }
            }
            let fresh = |sh: &Shared| {
                sh.diagnostics.get(path).is_some_and(|p| match p.version {
                    Some(v) => v >= synced.version && p.seq > synced.seq_before,
                    None => p.seq > synced.seq_before,
                }) || (!tried_pull && sh.registrations.contains(DocumentDiagnostic::METHOD))
            };
            let remaining = deadline.saturating_duration_since(Instant::now());
            if !self.wait_until(fresh, remaining).await {
                return Fresh {
                    items: Vec::new(),
                    complete: false,
                    pulled: false,
                    busy: Self::working(&self.shared.lock()),
                };
            }
            let registered = self
                .shared
                .lock()
                .registrations
                .contains(DocumentDiagnostic::METHOD);
            if !tried_pull && registered {
                continue;
            }
            break;
        }
        // A publish that carries the synced version is the answer for this content: nothing is
        // waited for beyond work the server reports in progress (a check run on save). An
        // unversioned publish cannot be told apart from a late one for older content, so for
        // those the last publish must also have settled.
        let settle = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(10));
        let _ = self
            .wait_until(
                |sh| {
                    sh.progress.is_empty()
                        && sh.quiescent != Some(false)
                        && sh.diagnostics.get(path).is_some_and(|p| {
                            p.version.is_some() || p.at.elapsed() >= PUBLISH_SETTLE
                        })
                },
                settle,
            )
            .await;
        let sh = self.shared.lock();
        let items = sh
            .diagnostics
            .get(path)
            .map(|p| p.items.clone())
            .unwrap_or_default();
        Fresh {
            items,
            complete: true,
            pulled: false,
            busy: Self::working(&sh),
        }
    }

    /// Whether the server passes requests through to tsserver (typescript-language-server's
    /// `typescript.tsserverRequest` command).
    fn offers_tsserver_requests(&self) -> bool {
        self.caps().runs_command(TSSERVER_REQUEST)
    }

    /// The file's syntactic and semantic diagnostics, asked of tsserver synchronously through
    /// typescript-language-server (`workspace/executeCommand` `typescript.tsserverRequest`
    /// with `syntacticDiagnosticsSync`, then `semanticDiagnosticsSync`): tsserver handles
    /// requests in order, so the answer is for the content synced before, and complete when
    /// it comes. As LSP diagnostics; `None` when either request fails.
    async fn tsserver_diagnostics(
        &self,
        path: &Path,
        deadline: Instant,
    ) -> Option<Vec<Diagnostic>> {
        let uri = path_to_uri(path);
        let mut items = Vec::new();
        for request in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
            let params = ExecuteCommandParams {
                command: TSSERVER_REQUEST,
                arguments: (request, TsserverFile { file: uri.clone() }),
            };
            let remaining = deadline.saturating_duration_since(Instant::now());
            let response = self
                .call_with::<TsserverRequest>(&params, remaining)
                .await
                .ok()??;
            if !response.success {
                return None;
            }
            items.extend(response.body?.iter().filter_map(tsserver_to_lsp));
        }
        Some(items)
    }

    /// `textDocument/diagnostic`, retried on ContentModified; `None` when it fails.
    async fn pull(&self, path: &Path, deadline: Instant) -> Option<Vec<Diagnostic>> {
        let params = DocumentParams::new(path_to_uri(path));
        for _ in 0..5 {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match self
                .call_with::<DocumentDiagnostic>(&params, remaining)
                .await
            {
                Ok(DocumentDiagnosticReport::Full { items }) => return Some(items),
                Err(LspError::Rpc { code, .. })
                    if code == CONTENT_MODIFIED || code == SERVER_CANCELLED =>
                {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                _ => return None,
            }
        }
        None
    }

    /// A server may push more on save (rust-analyzer's cargo check): once the work it reports
    /// in progress has ended (bounded), merge the pushes made for this content into the pulled
    /// items.
    async fn merge_pushed(
        &self,
        path: &Path,
        synced: Synced,
        mut items: Vec<Diagnostic>,
        deadline: Instant,
    ) -> Vec<Diagnostic> {
        let quiet = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(10));
        let _ = self.wait_until(|sh| !Self::working(sh), quiet).await;
        let sh = self.shared.lock();
        if let Some(p) = sh.diagnostics.get(path)
            && p.seq > synced.seq_before
            && p.version.is_none_or(|v| v >= synced.version)
        {
            for d in &p.items {
                let same = |x: &Diagnostic| x.message == d.message && x.range == d.range;
                if !items.iter().any(same) {
                    items.push(d.clone());
                }
            }
        }
        items
    }
}

/// A tsserver diagnostic (`start`/`end` as 1-based `line` and `offset`, `text`, `code`,
/// `category`) as an LSP diagnostic, as typescript-language-server would publish it; `None`
/// for a position before the first line or column.
fn tsserver_to_lsp(d: &TsserverDiagnostic) -> Option<Diagnostic> {
    let pos = |p: crate::protocol::TsserverPosition| -> Option<Position> {
        Some(Position {
            line: p.line.checked_sub(1)?,
            character: p.offset.checked_sub(1)?,
        })
    };
    let severity = match d.category.as_deref() {
        Some("error") => 1,
        Some("warning") => 2,
        Some("suggestion") => 4,
        _ => 3,
    };
    Some(Diagnostic {
        range: Range {
            start: pos(d.start)?,
            end: pos(d.end)?,
        },
        severity: Some(severity),
        code: d.code.clone(),
        source: Some(d.source.clone().unwrap_or_else(|| "typescript".into())),
        message: d.text.clone(),
        rest: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tsserver_diagnostic_is_an_lsp_diagnostic() {
        let d: TsserverDiagnostic = serde_json::from_value(json!({
            "start": {"line": 2, "offset": 14}, "end": {"line": 2, "offset": 15},
            "text": "Type 'string' is not assignable to type 'number'.",
            "code": 2322, "category": "error"
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(tsserver_to_lsp(&d)).unwrap(),
            json!({
                "range": {"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 14}},
                "severity": 1,
                "code": 2322,
                "source": "typescript",
                "message": "Type 'string' is not assignable to type 'number'.",
            })
        );
        let at_zero: TsserverDiagnostic = serde_json::from_value(json!({
            "start": {"line": 0, "offset": 1}, "end": {"line": 1, "offset": 1},
            "text": "before the first line"
        }))
        .unwrap();
        assert!(tsserver_to_lsp(&at_zero).is_none());
    }
}
