//! Diagnostics of a synced document: what the server published, and the fresh answer for one
//! synced version (pulled, or the publish that carries that version).

use super::*;

impl Server {
    /// The diagnostics last published for every document, as they stand now.
    pub fn published(&self) -> HashMap<PathBuf, Vec<Value>> {
        lock(&self.shared)
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
                busy: Self::working(&lock(&self.shared)),
            };
        }
        let mut tried_pull = false;
        loop {
            if !tried_pull && self.supports("diagnosticProvider", "textDocument/diagnostic") {
                tried_pull = true;
                if let Some(items) = self.pull(path, deadline).await {
                    let items = self.merge_pushed(path, synced, items, deadline).await;
                    return Fresh {
                        items,
                        complete: true,
                        pulled: true,
                        busy: Self::working(&lock(&self.shared)),
                    };
                }
            }
            let fresh = |sh: &Shared| {
                sh.diagnostics.get(path).is_some_and(|p| match p.version {
                    Some(v) => v >= synced.version && p.seq > synced.seq_before,
                    None => p.seq > synced.seq_before,
                }) || (!tried_pull && sh.registrations.contains("textDocument/diagnostic"))
            };
            let remaining = deadline.saturating_duration_since(Instant::now());
            if !self.wait_until(fresh, remaining).await {
                return Fresh {
                    items: Vec::new(),
                    complete: false,
                    pulled: false,
                    busy: Self::working(&lock(&self.shared)),
                };
            }
            let registered = lock(&self.shared)
                .registrations
                .contains("textDocument/diagnostic");
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
        let sh = lock(&self.shared);
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
        self.caps()
            .pointer("/executeCommandProvider/commands")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().any(|c| c == TSSERVER_REQUEST))
    }

    /// The file's syntactic and semantic diagnostics, asked of tsserver synchronously through
    /// typescript-language-server (`workspace/executeCommand` `typescript.tsserverRequest`
    /// with `syntacticDiagnosticsSync`, then `semanticDiagnosticsSync`): tsserver handles
    /// requests in order, so the answer is for the content synced before, and complete when
    /// it comes. As LSP diagnostics; `None` when either request fails.
    async fn tsserver_diagnostics(&self, path: &Path, deadline: Instant) -> Option<Vec<Value>> {
        let uri = path_to_uri(path);
        let mut items = Vec::new();
        for request in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
            let params = json!({
                "command": TSSERVER_REQUEST,
                "arguments": [request, {"file": uri}],
            });
            let remaining = deadline.saturating_duration_since(Instant::now());
            let v = self
                .request_with("workspace/executeCommand", params, remaining)
                .await
                .ok()?;
            if v.get("success") != Some(&Value::Bool(true)) {
                return None;
            }
            let body = v.get("body")?.as_array()?;
            items.extend(body.iter().filter_map(tsserver_to_lsp));
        }
        Some(items)
    }

    /// `textDocument/diagnostic`, retried on ContentModified; `None` when it fails.
    async fn pull(&self, path: &Path, deadline: Instant) -> Option<Vec<Value>> {
        let params = json!({"textDocument": {"uri": path_to_uri(path)}});
        for _ in 0..5 {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match self
                .request_with("textDocument/diagnostic", params.clone(), remaining)
                .await
            {
                Ok(v) if v.get("kind").and_then(Value::as_str) == Some("full") => {
                    return Some(
                        v.get("items")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default(),
                    );
                }
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
        mut items: Vec<Value>,
        deadline: Instant,
    ) -> Vec<Value> {
        let quiet = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(10));
        let _ = self.wait_until(|sh| !Self::working(sh), quiet).await;
        let sh = lock(&self.shared);
        if let Some(p) = sh.diagnostics.get(path)
            && p.seq > synced.seq_before
            && p.version.is_none_or(|v| v >= synced.version)
        {
            for d in &p.items {
                let same = |x: &Value| {
                    x.get("message") == d.get("message") && x.get("range") == d.get("range")
                };
                if !items.iter().any(same) {
                    items.push(d.clone());
                }
            }
        }
        items
    }
}

/// typescript-language-server's command that passes a request through to tsserver.
const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

/// A tsserver diagnostic (`start`/`end` as 1-based `line` and `offset`, `text`, `code`,
/// `category`) as an LSP diagnostic, as typescript-language-server would publish it.
fn tsserver_to_lsp(d: &Value) -> Option<Value> {
    let pos = |p: &Value| -> Option<Value> {
        let line = p.get("line")?.as_u64()?.checked_sub(1)?;
        let character = p.get("offset")?.as_u64()?.checked_sub(1)?;
        Some(json!({"line": line, "character": character}))
    };
    let severity = match d.get("category").and_then(Value::as_str) {
        Some("error") => 1,
        Some("warning") => 2,
        Some("suggestion") => 4,
        _ => 3,
    };
    let mut out = json!({
        "range": {"start": pos(d.get("start")?)?, "end": pos(d.get("end")?)?},
        "severity": severity,
        "message": d.get("text")?.as_str()?,
        "source": d.get("source").and_then(Value::as_str).unwrap_or("typescript"),
    });
    if let Some(code) = d.get("code") {
        out["code"] = code.clone();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsserver_diagnostic_is_an_lsp_diagnostic() {
        let d = json!({
            "start": {"line": 2, "offset": 14}, "end": {"line": 2, "offset": 15},
            "text": "Type 'string' is not assignable to type 'number'.",
            "code": 2322, "category": "error"
        });
        assert_eq!(
            tsserver_to_lsp(&d),
            Some(json!({
                "range": {"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 14}},
                "severity": 1,
                "message": "Type 'string' is not assignable to type 'number'.",
                "source": "typescript",
                "code": 2322
            }))
        );
        assert_eq!(tsserver_to_lsp(&json!({"text": "no position"})), None);
    }
}
