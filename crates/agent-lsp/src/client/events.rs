//! What a server sends besides responses: its requests to the client (configuration, progress
//! tokens, registrations) and notifications (diagnostics, progress, status), and its exit.

use crate::client::{Published, Server, lookup_section};
use crate::protocol;
use crate::protocol::WorkspaceFolder;
use crate::protocol::{
    ApplyEdit, ApplyEditResult, Configuration, Progress, PublishDiagnostics, RegisterCapability,
    ServerStatus, WorkDoneProgress, WorkspaceFolders,
};
use crate::text::{path_to_uri, uri_to_path};
use agent_rpc::Notification;
use agent_rpc::{ConnectionError, Handler, ReplyError, Request};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Weak;
use std::time::{Duration, Instant};

impl Server {
    /// Answer one of the server's requests; `Err` is the JSON-RPC error to reply with.
    fn on_request(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        match method {
            Configuration::METHOD => {
                let asked = self.incoming::<Configuration>(params)?;
                let settings = asked
                    .items
                    .iter()
                    .map(|it| lookup_section(&self.spec.settings, it.section.as_deref()))
                    .collect::<Vec<_>>();
                reply::<Configuration>(&settings)
            }
            RegisterCapability::METHOD => {
                let asked = self.incoming::<RegisterCapability>(params)?;
                let mut sh = self.shared.lock();
                for r in asked.registrations.iter() {
                    sh.registrations.insert(r.method.clone());
                }
                reply::<RegisterCapability>(&())
            }
            WorkspaceFolders::METHOD => reply::<WorkspaceFolders>(&vec![WorkspaceFolder {
                uri: path_to_uri(&self.root),
                name: "root".into(),
            }]),
            ApplyEdit::METHOD => reply::<ApplyEdit>(&ApplyEditResult {
                applied: false,
                failure_reason: Some("agent-tools applies edits only through lsp_rename".into()),
            }),
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

    /// The params of the server's request `R`; a malformed one is answered with "invalid
    /// params", naming the field.
    fn incoming<R>(&self, params: Value) -> Result<R::Params, (i64, String)>
    where
        R: Request,
        R::Params: serde::de::DeserializeOwned,
    {
        protocol::incoming::<R>(params).map_err(|e| (-32602, e.to_string()))
    }

    /// The params of the notification `N`, or `None` (logged) when they are malformed.
    fn read<N: Notification>(&self, params: Value) -> Option<N::Params> {
        match agent_rpc::request::notification::<N>(params) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(server = %self.spec.id, error = %e, "ignored a malformed notification");
                None
            }
        }
    }

    fn on_notification(&self, method: &str, params: Value) {
        match method {
            Progress::METHOD => {
                let Some(p) = self.read::<Progress>(params) else {
                    return;
                };
                let mut sh = self.shared.lock();
                match p.value {
                    WorkDoneProgress::Begin {} => {
                        sh.progress_seen = true;
                        sh.progress.insert(p.token.key());
                    }
                    WorkDoneProgress::End {} => {
                        sh.progress.remove(&p.token.key());
                    }
                    WorkDoneProgress::Report {} => {}
                }
                sh.last_activity = Some(Instant::now());
            }
            ServerStatus::METHOD => {
                let Some(p) = self.read::<ServerStatus>(params) else {
                    return;
                };
                let mut sh = self.shared.lock();
                sh.quiescent = p.quiescent;
                sh.last_activity = Some(Instant::now());
            }
            PublishDiagnostics::METHOD => {
                let Some(p) = self.read::<PublishDiagnostics>(params) else {
                    return;
                };
                let Some(path) = uri_to_path(&p.uri) else {
                    return;
                };
                let mut sh = self.shared.lock();
                sh.seq += 1;
                let published = Published {
                    version: p.version,
                    seq: sh.seq,
                    items: p.diagnostics,
                    at: Instant::now(),
                };
                sh.diagnostics.insert(path, published);
            }
            _ => return,
        }
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
        self.shared.lock().exited = Some(status);
        self.tick.send_modify(|t| *t += 1);
    }
}

/// What the connection hands over besides responses: the server's requests and notifications,
/// handled in arrival order on the reader task.
pub(super) struct Events(pub(super) Weak<Server>);

/// A message from the server as the connection hands it over: its method and params.
#[derive(serde::Deserialize)]
struct Envelope {
    method: String,
    #[serde(default)]
    params: Value,
}

impl Handler for Events {
    fn notification(&self, msg: Value) {
        if let Some(srv) = self.0.upgrade()
            && let Ok(m) = serde_json::from_value::<Envelope>(msg)
        {
            srv.on_notification(&m.method, m.params);
        }
    }

    fn request(&self, msg: &Value) -> Result<Value, ReplyError> {
        let Some(srv) = self.0.upgrade() else {
            return Err(ReplyError {
                code: -32603,
                message: "the client is shutting down".into(),
            });
        };
        let m = Envelope::deserialize(msg).map_err(|e| ReplyError {
            code: -32600,
            message: format!("invalid request: {e}"),
        })?;
        srv.on_request(&m.method, m.params)
            .map_err(|(code, message)| ReplyError { code, message })
    }

    fn closed(&self, why: &ConnectionError) {
        if let Some(srv) = self.0.upgrade() {
            let why = why.clone();
            tokio::spawn(async move { srv.on_exit(&why).await });
        }
    }
}

/// Our answer to the server's request `R`, as the wire carries it.
fn reply<R>(result: &R::Result) -> Result<Value, (i64, String)>
where
    R: Request,
    R::Result: serde::Serialize,
{
    serde_json::to_value(result).map_err(|e| (-32603, format!("{}: {e}", R::METHOD)))
}
