//! `agent-tools serve`: the run's tools over MCP, on the official Rust SDK (`rmcp`).
//!
//! This module is the `ServerHandler` over our [`Registry`]: `tools/list` (input schema,
//! annotations from each tool's hints, the tier in `_meta`), `tools/call` (text, PNG images,
//! `structuredContent`, `isError`), progress notifications when the client sent a
//! `progressToken`, cancellation (the call's future is dropped, which aborts the tool and frees
//! its resource lock) and elicitation for `ask_user` and approvals. `rmcp` does the protocol:
//! JSON-RPC framing, `initialize` with every revision it knows, `ping`, request ids, errors.
//! The transports are in [`crate::stdio`] (stdio) and [`crate::http`] (Streamable HTTP).
//!
//! Each MCP session is a [`Session`], the requester of every call it makes: a prompt one of its
//! calls causes (`ask_user`, an approval, through a kernel cell's `tool()` bridge too) is put
//! to that session's client and to no other. Nothing here remembers a "current" client.

use crate::error::ElicitError;
use crate::logging::ClientLog;
use agent_tools::tier::display::escape_keeping_lines;
use agent_tools::tier::{
    Caller, Origin, ProgressListener, ProgressSink, Registry, Requester, RoomId, Surface, ToolInfo,
    ToolOutput,
};
use base64::Engine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitResult, ElicitationSchema, Implementation, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often a running call with a progress token reports that it is still running, so that
/// clients with a request timeout keep it alive and the person sees what is happening.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// The shortest gap between two progress notifications carrying a tool's own messages; what a
/// tool reports meanwhile is coalesced (its newest message is sent).
const PROGRESS_GAP: Duration = Duration::from_millis(200);

/// The next progress message of a call, or never when nobody listens.
async fn next_progress(listener: &mut Option<ProgressListener>) -> Option<String> {
    match listener {
        Some(l) => l.next().await,
        None => std::future::pending().await,
    }
}

/// The room of every request of a client that speaks a revision without sessions.
pub const STATELESS_ROOM: &str = "mcp-stateless";

/// What the MCP sessions of one run share: the numbering of their ids (never reused in the run).
/// Cheap to clone; every clone is the same table.
#[derive(Clone, Default)]
pub struct Sessions {
    next: Arc<AtomicU64>,
    /// The id of the session opened last (over stdio: the one client's).
    last: Arc<parking_lot::Mutex<Option<String>>>,
}

impl Sessions {
    /// A new session of this run, talking through `peer`; its client hears the log from now on.
    ///
    ///
    /// A request served without a session (over Streamable HTTP with no `Mcp-Session-Id`: a
    /// client of a revision without sessions, 2026-07-28 on, SEP-2567, as Claude Code speaks
    /// over HTTP) is in the run's one stateless room, [`STATELESS_ROOM`], as every such request
    /// is: its kernel, staged edits and debug session outlive the request that made them (they
    /// end with the run), where a room per request would end them at once.
    fn open(&self, peer: &rmcp::Peer<RoleServer>, stateless: bool) -> Arc<Session> {
        let id = if stateless {
            STATELESS_ROOM.to_string()
        } else {
            let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            format!("mcp-{n}")
        };
        let session = Session {
            id,
            stateless,
            peer: peer.clone(),
            log: ClientLog::open(peer.clone()),
        };
        tracing::debug!(session = %session.id, "session opened");
        *self.last.lock() = Some(session.id.clone());
        Arc::new(session)
    }
}

/// One MCP session: over stdio the one client, over Streamable HTTP one `Mcp-Session-Id`. It is
/// the [`Requester`] of every call it makes, so `ask_user` and approvals caused by its calls send
/// `elicitation/create` to its client only; and it holds its client's subscription to the log.
pub struct Session {
    id: String,
    /// Served by a revision without sessions: its room is the run's [`STATELESS_ROOM`], which
    /// the end of one request does not end.
    stateless: bool,
    peer: rmcp::Peer<RoleServer>,
    log: ClientLog,
}

impl Requester for Session {
    fn id(&self) -> &str {
        &self.id
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Session {
    /// Whether this session's client declared the `elicitation` capability in `initialize`:
    /// the only way `serve` reaches a person.
    pub fn can_elicit(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some())
    }

    /// Put a form to this session's client (`elicitation/create`) and wait for its answer (no
    /// timeout here: the caller bounds the wait).
    pub async fn elicit(
        &self,
        message: String,
        requested_schema: ElicitationSchema,
    ) -> Result<ElicitResult, ElicitError> {
        if self.peer.is_transport_closed() {
            return Err(ElicitError::Gone(self.id.clone()));
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        Ok(self.peer.create_elicitation(params).await?)
    }
}

/// The MCP `instructions`: which tool for which job, for the tools this surface has and this
/// client can use (`can_ask`: whether it answers elicitation), kept under ~200 tokens.
pub fn instructions(registry: &Registry, surface: Surface, can_ask: bool) -> String {
    let have: std::collections::BTreeSet<String> = registry
        .list(surface)
        .into_iter()
        .filter(|t| can_ask || !t.asks_a_person)
        .map(|t| t.name)
        .collect();
    let mut lines = vec![format!(
        "Tools for one run in {} ({surface} surface). Paths are relative to it; lines are 1-based.",
        registry.run().root.display()
    )];
    let routes: [(&[&str], &str); 9] = [
        (&["read"], "Look at a file: read."),
        (
            &["grep"],
            "Find text (comments, strings, any file): grep; files by name: glob.",
        ),
        (
            &["ast_grep"],
            "Find code by shape: ast_grep; by meaning (definitions, references, types): lsp.",
        ),
        (
            &["edit", "apply_patch"],
            "Change text: edit, apply_patch (several places or files), write (whole file).",
        ),
        (
            &["lsp_rename"],
            "Rename a symbol: lsp_rename; rewrite a code pattern: ast_edit, then resolve.",
        ),
        (
            &["eval"],
            "Run code or a shell command (`!cmd`), keep state: eval.",
        ),
        (&["debug"], "Step through a program: debug."),
        (
            &["ask_user"],
            "Need a person's decision: ask_user, never a chat message.",
        ),
        (
            &["vibe_spawn"],
            "Delegate a self-contained task: vibe_spawn, then vibe_wait.",
        ),
    ];
    for (tools, line) in routes {
        if tools.iter().any(|t| have.contains(*t)) {
            lines.push(line.to_string());
        }
    }
    if have.contains("lsp") && have.contains("write") {
        lines.push(
            "Diagnostics after a write are information (the change was made), each reported once; `dry_run: true` on a write tool reports them and writes nothing."
                .into(),
        );
    }
    lines.join("\n")
}

/// A tool as MCP lists it: annotations from the tool's declared hints, the tier in `_meta`. No
/// output schema: no tool's structured content has one fixed shape declared beside it. The
/// input schema is the registry's, an object schema (the registry refuses a tool without one).
pub fn tool(info: &ToolInfo) -> Tool {
    let mut meta = serde_json::Map::new();
    meta.insert("tier".into(), json!(info.tier));
    meta.insert("parallelSafe".into(), json!(info.parallel_safe));
    Tool::new(
        info.name.clone(),
        info.description.clone(),
        Arc::new(info.input_schema.clone()),
    )
    .with_annotations(
        ToolAnnotations::new()
            .read_only(info.hints.read_only)
            .destructive(info.hints.destructive)
            .idempotent(info.hints.idempotent)
            .open_world(info.hints.open_world),
    )
    .with_meta(MetaObject::from(meta))
}

/// [`tool`] as JSON (for `agent-tools tools --json`).
pub fn tool_json(info: &ToolInfo) -> Value {
    serde_json::to_value(tool(info)).unwrap_or(Value::Null)
}

/// A tool result as MCP `CallToolResult`: the text, each image as PNG base64, the structured
/// value (an object as is, anything else wrapped as `{"value": …}`), and the error flag. Every
/// string of it passes the one escaping of outside text (`agent_tier::display`), as `grep`'s
/// lines always did: no control sequence of a file, a server or a program reaches a client raw.
///
/// The agent clients people run hand the model the structured content *instead of* the content
/// blocks when there is any (Claude Code and Codex CLI, measured by `tests/agent_clients.rs`;
/// docs/decisions.md), so the structured value is a superset of the text: the rendered text is
/// in it as `text` (a tool's own `text` field is kept under `text` and the rendering goes to
/// `rendered`). A result with images has no structured value at all: those clients would drop
/// the images for it. A harness that embeds the crates still has both halves in [`ToolOutput`].
pub fn call_result(out: &ToolOutput) -> CallToolResult {
    let text = escape_keeping_lines(&out.text).into_owned();
    let mut content = vec![ContentBlock::text(text.clone())];
    for img in &out.images {
        content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&img.data),
            img.mime_type.clone(),
        ));
    }
    let mut result = if out.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.is_error = Some(out.is_error);
    result.structured_content = out
        .structured
        .as_ref()
        .filter(|_| out.images.is_empty())
        .map(|s| {
            let mut obj = match escaped(s) {
                Value::Object(o) => o,
                other => {
                    let mut o = serde_json::Map::new();
                    o.insert("value".into(), other.clone());
                    o
                }
            };
            let key = if obj.contains_key("text") {
                "rendered"
            } else {
                "text"
            };
            obj.insert(key.into(), Value::String(text.clone()));
            Value::Object(obj)
        });
    result
}

/// `v` with every string (and key) passed through the one escaping of outside text
/// ([`escape_keeping_lines`]): a file's bytes, a server's hover, a program's output or a file's
/// name can hold a terminal's control sequences (OSC 52 to the clipboard, a clear screen) or
/// bidi overrides, and a client may show structured content to a person as it is.
fn escaped(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(escape_keeping_lines(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(escaped).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (escape_keeping_lines(k).into_owned(), escaped(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// [`call_result`] as the JSON a client of the 2025 revisions receives (for `call --json`).
pub fn result_json(out: &ToolOutput) -> Value {
    let mut v = serde_json::to_value(call_result(out)).unwrap_or(Value::Null);
    if let Some(obj) = v.as_object_mut() {
        obj.remove("resultType");
    }
    v
}

/// The server: one run's registry seen through one surface, serving one MCP session. Over
/// Streamable HTTP every session is served by its own clone: a clone shares the run (the
/// registry and the session numbering) and starts without a session of its own.
pub struct Host {
    registry: Registry,
    surface: Surface,
    sessions: Sessions,
    /// The session this host serves, opened by its `initialize` (or its first call).
    session: OnceLock<Arc<Session>>,
}

impl Clone for Host {
    fn clone(&self) -> Self {
        Host::new(self.registry.clone(), self.surface, self.sessions.clone())
    }
}

impl Drop for Host {
    /// The session this host served has ended (its client deleted it, it expired, or stdin
    /// closed): so has its room — its kernels, debug session, staged edits, ledgers and workers.
    /// The template host that Streamable HTTP clones per session serves none and ends nothing;
    /// a host that served one sessionless request leaves the run's stateless room as it is.
    fn drop(&mut self) {
        if let Some(session) = self.session.get().filter(|s| !s.stateless) {
            let ended = self.registry.end_room(&RoomId::new(session.id()));
            tracing::debug!(session = %session.id(), ended, "session ended");
        }
    }
}

impl Host {
    /// A host serving `registry` through `surface`, numbering its sessions' ids from the run's
    /// `sessions`; it starts without a session.
    pub fn new(registry: Registry, surface: Surface, sessions: Sessions) -> Self {
        Host {
            registry,
            surface,
            sessions,
            session: OnceLock::new(),
        }
    }

    /// The session this host serves, opened on first use with the client behind `cx`'s peer.
    fn session(&self, cx: &RequestContext<RoleServer>) -> Arc<Session> {
        self.session
            .get_or_init(|| self.sessions.open(&cx.peer, sessionless(cx)))
            .clone()
    }

    /// Run one call; report progress if asked (the tool's own messages, coalesced to one per
    /// [`PROGRESS_GAP`], and a heartbeat through silent stretches); give up (dropping the call,
    /// which aborts the tool and frees its lock) when the client cancels.
    async fn run_call(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressToken>,
        cx: &RequestContext<RoleServer>,
    ) -> Option<ToolOutput> {
        let notify = |step: f64, total: Option<f64>, message: String| {
            let peer = cx.peer.clone();
            let token = progress.clone();
            async move {
                if let Some(token) = token {
                    let mut p = ProgressNotificationParam::new(token, step).with_message(message);
                    p.total = total;
                    let _ = peer.notify_progress(p).await;
                }
            }
        };
        notify(0.0, None, format!("calling {name}")).await;
        let (sink, mut listener) = match progress {
            Some(_) => {
                let (sink, listener) = ProgressSink::channel();
                (sink, Some(listener))
            }
            None => (ProgressSink::none(), None),
        };
        // The prompts this call causes (and those of the calls nested in it) go to this session.
        let requester: Arc<dyn Requester> = self.session(cx);
        let caller = Caller::requested_by(requester).with_progress(sink);
        let call = self
            .registry
            .call_from(name, args, self.surface, Origin::Model, caller);
        tokio::pin!(call);
        let started = tokio::time::Instant::now();
        let mut beat = tokio::time::interval_at(started + HEARTBEAT, HEARTBEAT);
        let mut steps = 0.0;
        let mut next_allowed = started;
        let out = loop {
            let throttled = listener.is_some() && tokio::time::Instant::now() < next_allowed;
            tokio::select! {
                out = &mut call => break out,
                _ = cx.ct.cancelled() => {
                    tracing::info!(tool = name, "call cancelled by the client");
                    return None;
                }
                message = next_progress(&mut listener), if !throttled => match message {
                    Some(message) => {
                        steps += 1.0;
                        notify(steps, None, message).await;
                        beat.reset();
                        next_allowed = tokio::time::Instant::now() + PROGRESS_GAP;
                    }
                    None => listener = None,
                },
                _ = tokio::time::sleep_until(next_allowed), if throttled => {}
                _ = beat.tick(), if progress.is_some() => {
                    steps += 1.0;
                    let secs = started.elapsed().as_secs();
                    notify(steps, None, format!("{name} still running ({secs} s)")).await;
                }
            }
        };
        notify(steps + 1.0, Some(steps + 1.0), format!("{name} done")).await;
        Some(out)
    }
}

/// Whether the request of `cx` is served without a session: it came over Streamable HTTP
/// without an `Mcp-Session-Id` (stdio and every request of a session are not; neither is an
/// `initialize`, which opens one — its handler passes no context here).
fn sessionless(cx: &RequestContext<RoleServer>) -> bool {
    cx.extensions
        .get::<hyper::http::request::Parts>()
        .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"))
}

impl Host {
    /// Whether this session's client can put a question to a person: it declared `elicitation`
    /// (the only way `serve` reaches a person). Without it `ask_user` is not listed, not named in
    /// the instructions, and a call is refused with the reason — a model is never promised a
    /// person it cannot reach. Approvals still fail closed, saying why.
    fn can_ask(&self, cx: &RequestContext<RoleServer>) -> bool {
        self.session(cx).can_elicit()
    }

    /// The tools this session lists: the surface's, less those its client cannot use.
    fn listed(&self, cx: &RequestContext<RoleServer>) -> Vec<ToolInfo> {
        let can_ask = self.can_ask(cx);
        self.registry
            .list(self.surface)
            .into_iter()
            .filter(|t| can_ask || !t.asks_a_person)
            .collect()
    }
}

impl ServerHandler for Host {
    fn get_info(&self) -> ServerConfig {
        // `logging`: crashes and restarts reach the client as `notifications/message`
        // (`crate::logging`); deprecated by SEP-2577, still read by clients of the 2025 revisions.
        #[allow(deprecated)]
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "agent-tools",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions(&self.registry, self.surface, true))
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.session
            .get_or_init(|| self.sessions.open(&context.peer, false));
        let mut result = self.negotiate_initialize(&request)?;
        let can_ask = request.capabilities.elicitation.is_some();
        result.instructions = Some(instructions(&self.registry, self.surface, can_ask));
        Ok(result)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session(&context).log.set_level(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.listed(&context).iter().map(tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.registry
            .list(self.surface)
            .iter()
            .find(|t| t.name == name)
            .map(tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.registry.asks_a_person(&request.name) && !self.can_ask(&context) {
            let out = ToolOutput::error(format!(
                "{} is not available to this client: it did not declare the MCP `elicitation` capability, so no person can be asked through it. Proceed under an assumption you state.",
                request.name
            ))
            .with_structured(json!({"outcome": "no_operator"}));
            return Ok(call_result(&out).into());
        }
        let progress = context.meta.get_progress_token();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        match self.run_call(&request.name, args, progress, &context).await {
            Some(out) => Ok(call_result(&out).into()),
            // The client cancelled: rmcp drops the reply; the call's future is gone.
            None => Err(ErrorData::internal_error("the call was cancelled", None)),
        }
    }
}

/// Serve `registry` over stdio until stdin closes.
pub async fn serve(surface: Surface, registry: Registry) -> anyhow::Result<()> {
    let sessions = Sessions::default();
    // The control socket: a client's own edit tool reports its changes here (its hook). Its
    // checks go to the one client's room.
    let last = sessions.last.clone();
    let room: Arc<dyn Fn() -> RoomId + Send + Sync> =
        Arc::new(move || last.lock().as_deref().map_or_else(RoomId::run, RoomId::new));
    let _control = match crate::control::listen(registry.clone(), room) {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::warn!(error = %e, "no control socket: a client's hook cannot reach this host");
            None
        }
    };
    let host = Host::new(registry, surface, sessions);
    let transport = crate::stdio::Stdio::start();
    let running = match rmcp::serve_server(host, transport).await {
        Ok(r) => r,
        // Input ended before an `initialize`: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(anyhow::anyhow!("{e}")),
    };
    running
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("the MCP service stopped: {e}"))?;
    Ok(())
}
