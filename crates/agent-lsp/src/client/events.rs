//! What a server sends besides responses: its requests to the client (configuration, progress
//! tokens, registrations) and notifications (diagnostics, progress, status), and its exit.

use super::*;

impl Server {
    fn on_request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "workspace/configuration" => {
                let items = params
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                Ok(Value::Array(
                    items
                        .iter()
                        .map(|it| {
                            lookup_section(
                                &self.spec.settings,
                                it.get("section").and_then(Value::as_str),
                            )
                        })
                        .collect(),
                ))
            }
            "client/registerCapability" => {
                let mut sh = lock(&self.shared);
                for r in params
                    .get("registrations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(m) = r.get("method").and_then(Value::as_str) {
                        sh.registrations.insert(m.to_string());
                    }
                }
                Ok(Value::Null)
            }
            "workspace/workspaceFolders" => {
                let uri = path_to_uri(&self.root);
                Ok(json!([{"uri": uri, "name": "root"}]))
            }
            "workspace/applyEdit" => Ok(
                json!({"applied": false, "failureReason": "agent-tools applies edits only through lsp_rename"}),
            ),
            "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "window/showDocument"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/inlineValue/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/diagnostic/refresh"
            | "workspace/foldingRange/refresh" => Ok(Value::Null),
            other => Err((-32601, format!("method not found: {other}"))),
        }
    }

    fn on_notification(&self, method: &str, params: &Value) {
        let mut sh = lock(&self.shared);
        match method {
            "$/progress" => {
                let token = match params.get("token") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => return,
                };
                match params.pointer("/value/kind").and_then(Value::as_str) {
                    Some("begin") => {
                        sh.progress_seen = true;
                        sh.progress.insert(token);
                    }
                    Some("end") => {
                        sh.progress.remove(&token);
                    }
                    _ => {}
                }
                sh.last_activity = Some(Instant::now());
            }
            "experimental/serverStatus" => {
                sh.quiescent = params.get("quiescent").and_then(Value::as_bool);
                sh.last_activity = Some(Instant::now());
            }
            "textDocument/publishDiagnostics" => {
                let Some(path) = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .and_then(uri_to_path)
                else {
                    return;
                };
                sh.seq += 1;
                let p = Published {
                    version: params.get("version").and_then(Value::as_i64),
                    seq: sh.seq,
                    items: params
                        .get("diagnostics")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                    at: Instant::now(),
                };
                sh.diagnostics.insert(path, p);
            }
            _ => return,
        }
        drop(sh);
        self.tick.send_modify(|t| *t += 1);
    }

    async fn on_exit(&self, why: &ConnectionError) {
        let broke = match why {
            ConnectionError::Protocol(e) => {
                // The stream is no longer framed: nothing it says can be trusted.
                self.kill();
                Some(e.clone())
            }
            _ => None,
        };
        let status = match self.child.wait(Duration::from_secs(2)).await {
            Some(s) => agent_proc::describe_exit(s),
            None => "closed its output".to_string(),
        };
        let status = match broke {
            Some(e) => format!("stopped after a protocol error: {e}"),
            None => status,
        };
        // The last stderr bytes say why; they arrive on their own pipe.
        self.child.stderr_closed(Duration::from_secs(1)).await;
        lock(&self.shared).exited = Some(status);
        self.tick.send_modify(|t| *t += 1);
    }
}

/// What the connection hands over besides responses: the server's requests and notifications,
/// handled in arrival order on the reader task.
pub(super) struct Events(pub(super) Weak<Server>);

impl Handler for Events {
    fn notification(&self, msg: Value) {
        if let (Some(srv), Some(method)) = (self.0.upgrade(), msg.get("method")) {
            let params = msg.get("params").unwrap_or(&Value::Null);
            srv.on_notification(method.as_str().unwrap_or(""), params);
        }
    }

    fn request(&self, msg: &Value) -> Result<Value, ReplyError> {
        let Some(srv) = self.0.upgrade() else {
            return Err(ReplyError {
                code: -32603,
                message: "the client is shutting down".into(),
            });
        };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").unwrap_or(&Value::Null);
        srv.on_request(method, params)
            .map_err(|(code, message)| ReplyError { code, message })
    }

    fn closed(&self, why: &ConnectionError) {
        if let Some(srv) = self.0.upgrade() {
            let why = why.clone();
            tokio::spawn(async move { srv.on_exit(&why).await });
        }
    }
}
