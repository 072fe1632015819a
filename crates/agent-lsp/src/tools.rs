//! The `lsp` and `lsp_rename` tools and the diagnostics-on-write wrapper.

use crate::address;
use crate::checker;
use crate::client::{CONTENT_MODIFIED, REQUEST_CANCELLED, SERVER_CANCELLED, Server};
use crate::error::LspError;
use crate::rename;
use crate::render::{Diag, Loc, Renderer, Sym, escapes, hover_text, locations, symbols};
use crate::supervisor::{Supervisor, project_binary, resolve_command};
use crate::text::{lines, path_to_uri, units_of_byte};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::{apply_all, confine, confine_existing};
use agent_tier::{BoxError, CallContext, Tier, Tool, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The family's state for one run: the supervisor and the diagnostics ledger.
pub struct State {
    pub sup: Supervisor,
    ledger: Mutex<HashSet<(String, String, String)>>,
}

impl State {
    pub fn new(sup: Supervisor) -> Self {
        State {
            sup,
            ledger: Mutex::new(HashSet::new()),
        }
    }

    pub(crate) fn ws(&self) -> &Path {
        &self.sup.root
    }

    /// Record diagnostics as reported; returns those not reported before in this run.
    pub(crate) fn unseen(&self, diags: Vec<Diag>) -> Vec<Diag> {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        diags
            .into_iter()
            .filter(|d| ledger.insert(d.key()))
            .collect()
    }
}

/// An `lsp` operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Errors and warnings of `file`; with `file` = `"*"`, run the project checker of every root.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where its type is declared.
    TypeDefinition,
    /// Concrete implementations.
    Implementation,
    /// Every use (at most 50).
    References,
    /// Signature and doc comment.
    Hover,
    /// With `query`: workspace search (at most 100); with `file`: the file's symbols (at most 200).
    Symbols,
    /// Quick fixes the server offers at the symbol.
    CodeActions,
    /// Which servers run, for which roots, and what is missing for the others.
    Status,
    /// Restart the server(s) of `file`'s root (all servers without `file`).
    Reload,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Diagnostics => "diagnostics",
            Operation::Definition => "definition",
            Operation::TypeDefinition => "type_definition",
            Operation::Implementation => "implementation",
            Operation::References => "references",
            Operation::Hover => "hover",
            Operation::Symbols => "symbols",
            Operation::CodeActions => "code_actions",
            Operation::Status => "status",
            Operation::Reload => "reload",
        }
    }
}

/// Arguments of `lsp`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// The operation.
    #[serde(alias = "op")]
    pub operation: Operation,
    /// The file, relative to the workspace root; `"*"` with `diagnostics` runs the project checker.
    #[serde(default, alias = "path")]
    pub file: Option<String>,
    /// 1-based line number of the symbol (navigation operations).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// A substring of that line that names the symbol (navigation operations); never a column.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// Workspace symbol search text (`symbols` only).
    #[serde(default)]
    pub query: Option<String>,
}

/// Arguments of `lsp_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// Where the symbol is, relative to the workspace root.
    #[serde(alias = "path")]
    pub file: String,
    /// 1-based line number.
    #[schemars(range(min = 1))]
    pub line: u32,
    /// A substring that identifies the symbol on that line.
    pub symbol: String,
    /// Which occurrence of `symbol` on the line, 1-based, when it occurs more than once (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// The new name.
    pub new_name: String,
}

struct Target {
    path: PathBuf,
    display: String,
    text: String,
    line0: u32,
    line_text: String,
    byte: usize,
    symbol: String,
    note: Option<String>,
}

fn arg_err(s: impl Into<String>) -> LspError {
    LspError::Arg(s.into())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

const PARTIAL: &str = "note: the server had not finished loading in time; this answer may be partial — ask again shortly";

impl State {
    fn target(
        &self,
        op: &str,
        file: Option<&str>,
        line: Option<u32>,
        symbol: Option<&str>,
        occurrence: Option<u32>,
        for_write: bool,
    ) -> Result<Target, LspError> {
        let file = file.ok_or_else(|| {
            arg_err(format!(
                "`file` is required for `{op}`; give a path relative to the workspace root"
            ))
        })?;
        let line =
            line.ok_or_else(|| arg_err(format!("`line` (1-based) is required for `{op}`")))?;
        let symbol = symbol.filter(|s| !s.is_empty()).ok_or_else(|| {
            arg_err(format!(
                "`symbol` is required for `{op}`: give a substring of line {line} that names the symbol (positions are never columns)"
            ))
        })?;
        let path = confine_existing(self.ws(), "file", file)?;
        let display = agent_tier::workspace::display_path(self.ws(), &path);
        let text = std::fs::read_to_string(&path).map_err(|e| LspError::Read {
            path: display.clone(),
            source: e,
        })?;
        let ls = lines(&text);
        if line == 0 || line as usize > ls.len() {
            return Err(arg_err(format!(
                "`line` = {line} is not a line of `{display}` (it has {} lines; lines are 1-based)",
                ls.len()
            )));
        }
        let line_text = ls[line as usize - 1].to_string();
        let r = match address::resolve(&ls, line as usize - 1, symbol, occurrence, for_write) {
            Ok(r) => r,
            Err(address::Miss::NotOnLine { nearby }) => {
                let ident = address::identifier(symbol);
                let near = if nearby.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; `{ident}` does occur on {}",
                        nearby
                            .iter()
                            .map(|(n, t)| format!("line {n} (`{t}`)"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                return Err(arg_err(format!(
                    "symbol `{symbol}` is not on line {line} of `{display}`; that line reads: `{}`{near}",
                    line_text.trim()
                )));
            }
            Err(address::Miss::OutOfRange { count }) => {
                return Err(arg_err(format!(
                    "`occurrence` = {} is out of range: `{symbol}` occurs {count} time(s) on line {line} of `{display}`; that line reads: `{}`",
                    occurrence.unwrap_or(1),
                    line_text.trim()
                )));
            }
            Err(address::Miss::Ambiguous { candidates }) => {
                return Err(arg_err(format!(
                    "`{symbol}` occurs {} times on line {line} of `{display}` (`{}`): {}; `{op}` never acts on a guess: pass `occurrence`",
                    candidates.len(),
                    line_text.trim(),
                    candidates
                        .iter()
                        .map(|(k, col)| format!("occurrence {k} at column {col}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let byte = r.byte;
        let mut notes = Vec::new();
        if r.count > 1 && occurrence.is_none() {
            notes.push(format!(
                "`{}` occurs {} times on line {line}; the first was used (pass `occurrence` to pick another)",
                r.ident, r.count
            ));
        }
        if r.inside {
            notes.push(format!(
                "`{}` is not a whole identifier on line {line}; the match inside `{}` was used",
                r.ident,
                line_text[byte..]
                    .split(|c: char| !address::is_ident(c))
                    .next()
                    .unwrap_or_default()
            ));
        }
        if !r.also_inside.is_empty() {
            notes.push(format!(
                "`{}` was taken as a whole identifier (also inside: {})",
                r.ident,
                r.also_inside
                    .iter()
                    .map(|w| format!("`{w}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if r.ident != symbol {
            notes.push(format!(
                "`{symbol}` was resolved to its identifier `{}`",
                r.ident
            ));
        }
        let note = (!notes.is_empty()).then(|| format!("note: {}", notes.join("; ")));
        let symbol = r.ident.as_str();
        Ok(Target {
            path,
            display,
            text,
            line0: line - 1,
            line_text,
            byte,
            symbol: symbol.to_string(),
            note,
        })
    }

    /// A request with retries: ContentModified / cancelled are retried; an empty answer from a
    /// server that is still young or loading is asked again. Returns the answer and whether it
    /// may be partial.
    async fn ask(
        &self,
        srv: &Server,
        method: &str,
        params: Value,
    ) -> Result<(Value, bool), LspError> {
        let ready_timeout = self.sup.cfg.ready_timeout;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match srv.request(method, params.clone()).await {
                Err(LspError::Rpc { code, .. })
                    if attempt < 8
                        && (code == CONTENT_MODIFIED
                            || code == SERVER_CANCELLED
                            || code == REQUEST_CANCELLED) =>
                {
                    tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
                    srv.wait_ready(ready_timeout).await;
                }
                Err(e) => return Err(e),
                Ok(v) => {
                    let empty = is_empty(&v);
                    let young = srv.started.elapsed() < Duration::from_secs(20);
                    if empty && (young || !srv.is_idle()) && attempt < 5 {
                        tokio::time::sleep(Duration::from_millis(700)).await;
                        srv.wait_ready(ready_timeout).await;
                        continue;
                    }
                    return Ok((v, empty && !srv.is_idle()));
                }
            }
        }
    }

    /// [`State::ask`], repeated until two consecutive answers hold the same locations (bounded
    /// by the ready timeout); an answer that never settled is partial.
    async fn ask_settled(
        &self,
        srv: &Server,
        method: &str,
        params: Value,
    ) -> Result<(Value, bool), LspError> {
        fn key(v: &Value) -> Vec<String> {
            let mut k: Vec<String> = match v {
                Value::Array(a) => a.iter().map(Value::to_string).collect(),
                Value::Null => Vec::new(),
                other => vec![other.to_string()],
            };
            k.sort();
            k
        }
        let deadline = Instant::now() + self.sup.cfg.ready_timeout;
        let (mut last, _) = self.ask(srv, method, params.clone()).await?;
        loop {
            if Instant::now() >= deadline {
                return Ok((last, true));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            srv.wait_ready(deadline.saturating_duration_since(Instant::now()))
                .await;
            let (next, p) = self.ask(srv, method, params.clone()).await?;
            if key(&next) == key(&last) {
                return Ok((next, p));
            }
            last = next;
        }
    }

    async fn open(&self, t: &Target) -> Result<(Arc<Server>, bool), LspError> {
        let srv = self.sup.server_for(&t.path).await?;
        srv.sync(&t.path, &t.text, false).await?;
        let ready = srv.wait_ready(self.sup.cfg.ready_timeout).await;
        Ok((srv, ready))
    }

    pub async fn run(&self, a: LspArgs) -> Result<ToolOutput, LspError> {
        let op = a.operation;
        match op {
            Operation::Status => return Ok(self.status(a.file.as_deref()).await),
            Operation::Reload => return self.reload(a.file.as_deref()).await,
            Operation::Diagnostics => {
                return match a.file.as_deref() {
                    Some("*") => Ok(checker::run_all(&self.sup).await),
                    Some(f) => self.diagnostics(f).await,
                    None => Err(arg_err(
                        "`file` is required for `diagnostics`: a path relative to the workspace root, or \"*\" to run the project checker",
                    )),
                };
            }
            Operation::Symbols => return self.symbols(a.file.as_deref(), a.query.as_deref()).await,
            _ => {}
        }
        let t = self.target(
            op.name(),
            a.file.as_deref(),
            a.line,
            a.symbol.as_deref(),
            a.occurrence,
            false,
        )?;
        let (srv, ready) = self.open(&t).await?;
        let enc = srv.encoding();
        let character = units_of_byte(&t.line_text, t.byte, enc);
        let end = units_of_byte(&t.line_text, t.byte + t.symbol.len(), enc);
        let position = json!({"line": t.line0, "character": character});
        let td = json!({"uri": path_to_uri(&t.path)});
        let at = format!(
            "{}:{}:{}",
            t.display,
            t.line0 + 1,
            t.line_text[..t.byte].chars().count() + 1
        );
        let (method, params) = match op {
            Operation::Definition => (
                "textDocument/definition",
                json!({"textDocument": td, "position": position}),
            ),
            Operation::TypeDefinition => (
                "textDocument/typeDefinition",
                json!({"textDocument": td, "position": position}),
            ),
            Operation::Implementation => (
                "textDocument/implementation",
                json!({"textDocument": td, "position": position}),
            ),
            Operation::References => (
                "textDocument/references",
                json!({"textDocument": td, "position": position, "context": {"includeDeclaration": true}}),
            ),
            Operation::Hover => (
                "textDocument/hover",
                json!({"textDocument": td, "position": position}),
            ),
            _ => {
                // code_actions: the diagnostics on that line give the quick fixes.
                let synced = srv.sync(&t.path, &t.text, false).await?;
                let diags = srv
                    .fresh_diagnostics(&t.path, synced, Duration::from_secs(5))
                    .await
                    .items;
                let on_line: Vec<Value> = diags
                    .into_iter()
                    .filter(|d| {
                        let s = d
                            .pointer("/range/start/line")
                            .and_then(Value::as_u64)
                            .unwrap_or(0);
                        let e = d
                            .pointer("/range/end/line")
                            .and_then(Value::as_u64)
                            .unwrap_or(s);
                        (s..=e).contains(&u64::from(t.line0))
                    })
                    .collect();
                (
                    "textDocument/codeAction",
                    json!({"textDocument": td,
                    "range": {"start": position, "end": {"line": t.line0, "character": end}},
                    "context": {"diagnostics": on_line, "triggerKind": 1}}),
                )
            }
        };
        let cap = match op {
            Operation::Definition => "definitionProvider",
            Operation::TypeDefinition => "typeDefinitionProvider",
            Operation::Implementation => "implementationProvider",
            Operation::References => "referencesProvider",
            Operation::Hover => "hoverProvider",
            _ => "codeActionProvider",
        };
        if !srv.supports(cap, method) {
            return Err(arg_err(format!(
                "{} does not offer `{}`; use another operation (definition, hover, references), or make another server serve this language with `languages` in the lsp config",
                srv.spec.id,
                op.name()
            )));
        }
        let (result, partial) = match op {
            // Servers that analyse in the background (pyright) answer a cold `references` with
            // what they have indexed so far, without saying so: ask until two answers agree.
            Operation::References | Operation::Implementation => {
                self.ask_settled(&srv, method, params).await?
            }
            _ => self.ask(&srv, method, params).await?,
        };
        let partial = partial || !ready;
        let mut text = Vec::new();
        let mut structured = json!({
            "operation": op.name(), "server": srv.spec.id, "file": t.display,
            "line": t.line0 + 1, "symbol": t.symbol, "partial": partial,
        });
        let mut r = Renderer::new(self.ws(), enc);
        r.preload(&t.path, &t.text);
        match op {
            Operation::Hover => {
                let mut md = hover_text(&result);
                // A hover quotes the file that declares the symbol: withheld when that file is
                // reached through a symlink out of the root (`read` refuses it too).
                let outside = if md.is_empty() {
                    Vec::new()
                } else {
                    let at_pos = json!({"textDocument": {"uri": path_to_uri(&t.path)},
                        "position": {"line": t.line0, "character": character}});
                    self.declared_outside(&srv, at_pos).await
                };
                if !outside.is_empty() {
                    md.clear();
                    text.push(format!(
                        "hover for `{}` at {at} withheld: it is declared in {}, outside the workspace root through a symlink (`read` refuses it too)",
                        t.symbol,
                        outside.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
                    ));
                } else if md.is_empty() {
                    text.push(format!(
                        "no hover information for `{}` at {at} ({})",
                        t.symbol, srv.spec.id
                    ));
                } else {
                    text.push(format!(
                        "hover for `{}` at {at} ({}):",
                        t.symbol, srv.spec.id
                    ));
                    text.push(md.clone());
                }
                structured["hover"] = json!(md);
            }
            Operation::CodeActions => {
                let actions: Vec<Value> = result.as_array().cloned().unwrap_or_default();
                let mut list = Vec::new();
                for a in &actions {
                    let title = a
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let kind = a
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let preferred = a
                        .get("isPreferred")
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    list.push(json!({"title": title, "kind": kind, "preferred": preferred}));
                }
                // Quick fixes only: refactorings and source actions are listed by count (this
                // tool shows actions; it cannot apply any of them).
                let all = list.len();
                list.retain(|a| {
                    a["kind"]
                        .as_str()
                        .is_some_and(|k| k == "quickfix" || k.starts_with("quickfix."))
                });
                let others = all - list.len();
                structured["other_actions"] = json!(others);
                if list.is_empty() {
                    text.push(format!(
                        "no quick fixes for `{}` at {at} ({})",
                        t.symbol, srv.spec.id
                    ));
                } else {
                    text.push(format!(
                        "quick fixes for `{}` at {at} ({}):",
                        t.symbol, srv.spec.id
                    ));
                    for a in &list {
                        let kind = a["kind"]
                            .as_str()
                            .filter(|k| !k.is_empty())
                            .map(|k| format!(" [{k}]"))
                            .unwrap_or_default();
                        let pref = if a["preferred"].as_bool() == Some(true) {
                            " (preferred)"
                        } else {
                            ""
                        };
                        text.push(format!(
                            "- {}{kind}{pref}",
                            a["title"].as_str().unwrap_or("")
                        ));
                    }
                }
                if others > 0 {
                    text.push(format!(
                        "({others} other action(s) — refactorings or source actions — not shown; apply a fix with `edit` or `apply_patch`)"
                    ));
                }
                structured["actions"] = json!(list);
            }
            _ => {
                let locs: Vec<Loc> = locations(&result)
                    .into_iter()
                    .map(|(p, l, c)| r.loc(&p, l, c))
                    .collect();
                let what = op.name().replace('_', " ");
                let total = locs.len();
                let shown: Vec<Loc> = if op == Operation::References {
                    locs.into_iter().take(50).collect()
                } else {
                    locs
                };
                if shown.is_empty() {
                    text.push(format!(
                        "no {what} found for `{}` at {at} ({})",
                        t.symbol, srv.spec.id
                    ));
                } else {
                    let of = if op == Operation::References {
                        "to"
                    } else {
                        "of"
                    };
                    text.push(format!(
                        "{what} {of} `{}` at {at} ({}):",
                        t.symbol, srv.spec.id
                    ));
                    text.extend(shown.iter().map(Loc::render));
                    if total > shown.len() {
                        text.push(format!("(showing {} of {total})", shown.len()));
                    }
                }
                structured["locations"] = json!(shown);
                structured["total"] = json!(total);
            }
        }
        if let Some(n) = &t.note {
            text.push(n.clone());
        }
        if !r.escaped.is_empty() {
            text.push(escaped_note(&r.escaped));
        }
        if partial {
            text.push(PARTIAL.to_string());
        }
        Ok(ToolOutput::text(text.join("\n")).with_structured(structured))
    }

    /// The files out of the root (through a symlink) that declare the symbol at `at`.
    async fn declared_outside(&self, srv: &Server, at: Value) -> Vec<String> {
        if !srv.supports("definitionProvider", "textDocument/definition") {
            return Vec::new();
        }
        let Ok((v, _)) = self.ask(srv, "textDocument/definition", at).await else {
            return Vec::new();
        };
        let mut out: Vec<String> = locations(&v)
            .into_iter()
            .filter(|(p, _, _)| escapes(self.ws(), p))
            .map(|(p, _, _)| agent_tier::workspace::display_path(self.ws(), &p))
            .collect();
        out.dedup();
        out
    }

    async fn diagnostics(&self, file: &str) -> Result<ToolOutput, LspError> {
        let path = confine_existing(self.ws(), "file", file)?;
        let display = agent_tier::workspace::display_path(self.ws(), &path);
        let text = std::fs::read_to_string(&path).map_err(|e| LspError::Read {
            path: display.clone(),
            source: e,
        })?;
        let srv = self.sup.server_for(&path).await?;
        let synced = srv.sync(&path, &text, false).await?;
        let got = srv
            .fresh_diagnostics(&path, synced, self.sup.cfg.ready_timeout)
            .await;
        let (items, fresh) = (got.items, got.complete);
        let mut r = Renderer::new(self.ws(), srv.encoding());
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
        let _ = self.unseen(shown.clone());
        let mut out = Vec::new();
        if !fresh {
            out.push(format!(
                "{} did not report diagnostics for the current content of `{display}` within {} s; try again",
                srv.spec.id,
                self.sup.cfg.ready_timeout.as_secs()
            ));
        } else if shown.is_empty() {
            out.push(format!(
                "no errors or warnings in `{display}` ({})",
                srv.spec.id
            ));
        } else {
            out.push(format!(
                "{} problem(s) in `{display}` ({}):",
                shown.len(),
                srv.spec.id
            ));
            out.extend(shown.iter().map(Diag::render));
        }
        if minor > 0 {
            out.push(format!("({minor} info/hint diagnostic(s) not shown)"));
        }
        Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
            "operation": "diagnostics", "server": srv.spec.id, "file": display,
            "complete": fresh, "mode": if got.pulled { "pull" } else { "push" }, "diagnostics": shown,
        })))
    }

    async fn symbols(
        &self,
        file: Option<&str>,
        query: Option<&str>,
    ) -> Result<ToolOutput, LspError> {
        match (file, query) {
            (Some(file), None) => {
                let path = confine_existing(self.ws(), "file", file)?;
                let display = agent_tier::workspace::display_path(self.ws(), &path);
                let text = std::fs::read_to_string(&path).map_err(|e| LspError::Read {
                    path: display.clone(),
                    source: e,
                })?;
                let srv = self.sup.server_for(&path).await?;
                srv.sync(&path, &text, false).await?;
                let ready = srv.wait_ready(self.sup.cfg.ready_timeout).await;
                let (v, partial) = self
                    .ask(
                        &srv,
                        "textDocument/documentSymbol",
                        json!({"textDocument": {"uri": path_to_uri(&path)}}),
                    )
                    .await?;
                let mut r = Renderer::new(self.ws(), srv.encoding());
                r.preload(&path, &text);
                let syms = symbols(&mut r, &v, Some(&path));
                Ok(render_syms(
                    format!("symbols in `{display}` ({})", srv.spec.id),
                    syms,
                    200,
                    partial || !ready,
                    &srv.spec.id,
                ))
            }
            (file, Some(query)) => {
                let servers: Vec<Arc<Server>> = match file {
                    Some(f) => {
                        let path = confine_existing(self.ws(), "file", f)?;
                        let srv = self.sup.server_for(&path).await?;
                        if let Ok(text) = std::fs::read_to_string(&path) {
                            srv.sync(&path, &text, false).await?;
                        }
                        vec![srv]
                    }
                    None => self.sup.running(),
                };
                let mut servers: Vec<Arc<Server>> = servers
                    .into_iter()
                    .filter(|s| s.supports("workspaceSymbolProvider", "workspace/symbol"))
                    .collect();
                let mut why_none = Vec::new();
                if servers.is_empty() && file.is_none() {
                    // Cold: start the servers the workspace calls for (one file per extension,
                    // at most four servers), then search them all.
                    for sample in crate::discover::one_file_per_extension(self.ws(), 5000) {
                        if servers.len() >= 4 {
                            break;
                        }
                        if self.sup.candidates(&sample).is_empty() {
                            continue;
                        }
                        match self.sup.server_for(&sample).await {
                            Ok(srv) => {
                                if servers.iter().any(|s| Arc::ptr_eq(s, &srv)) {
                                    continue;
                                }
                                if let Ok(text) = std::fs::read_to_string(&sample) {
                                    let _ = srv.sync(&sample, &text, false).await;
                                }
                                if srv.supports("workspaceSymbolProvider", "workspace/symbol") {
                                    servers.push(srv);
                                } else {
                                    why_none.push(format!(
                                        "{} offers no workspace symbol search",
                                        srv.spec.id
                                    ));
                                }
                            }
                            Err(e) => why_none.push(e.to_string()),
                        }
                    }
                }
                if servers.is_empty() {
                    let why = if why_none.is_empty() {
                        "no file of the workspace has a configured language server".to_string()
                    } else {
                        why_none.join("; ")
                    };
                    return Err(arg_err(format!(
                        "no language server could search workspace symbols ({why}); pass `file` (any file of the language to search) together with `query`"
                    )));
                }
                let mut all = Vec::new();
                let mut partial = false;
                let mut ids = Vec::new();
                for srv in servers {
                    let ready = srv.wait_ready(self.sup.cfg.ready_timeout).await;
                    let (v, p) = self
                        .ask(&srv, "workspace/symbol", json!({"query": query}))
                        .await?;
                    partial |= p || !ready;
                    let mut r = Renderer::new(self.ws(), srv.encoding());
                    all.extend(symbols(&mut r, &v, None));
                    ids.push(srv.spec.id.clone());
                }
                let ids = ids.join(", ");
                Ok(render_syms(
                    format!("workspace symbols matching `{query}` ({ids})"),
                    all,
                    100,
                    partial,
                    &ids,
                ))
            }
            (None, None) => Err(arg_err(
                "`symbols` needs `query` (workspace search) or `file` (that file's symbols)",
            )),
        }
    }

    async fn status(&self, file: Option<&str>) -> ToolOutput {
        let ws = self.ws();
        let slots = self.sup.status().await;
        let mut out = Vec::new();
        if slots.is_empty() {
            out.push("no language server has been started in this run (servers start at the first call on a file)".to_string());
        } else {
            out.push("language servers:".to_string());
            for s in &slots {
                let root = agent_tier::workspace::display_path(ws, &s.root);
                let root = if root.is_empty() {
                    ".".to_string()
                } else {
                    root
                };
                let pid = s.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                out.push(format!("- {} for {root}{pid}: {}", s.id, s.state));
                if let Some(t) = &s.stderr_tail {
                    out.push(format!("  stderr tail:\n    {}", t.replace('\n', "\n    ")));
                }
            }
        }
        let mut detected = Vec::new();
        // The project's own binaries that were not used because it is not trusted.
        let mut ignored_bins: Vec<String> = Vec::new();
        if let Some(f) = file {
            match confine(ws, "file", f) {
                Ok(path) => {
                    out.push(format!("servers for `{f}` (in order of preference):"));
                    for c in self.sup.candidates(&path) {
                        if !self.sup.cfg.trusted
                            && let Some(r) = &c.root
                        {
                            ignored_bins.extend(untrusted_note(&c.spec.id, r, ws));
                        }
                        if let Some(p) = &c.ignored {
                            ignored_bins.push(format!(
                                "{} for {}",
                                agent_tier::workspace::display_path(ws, p),
                                c.spec.id
                            ));
                        }
                        let line = if c.usable() {
                            format!(
                                "- {}: usable; root {}; binary {}",
                                c.spec.id,
                                c.root
                                    .as_deref()
                                    .map(|r| disp_root(ws, r))
                                    .unwrap_or_default(),
                                c.binary
                                    .as_ref()
                                    .map(|b| b.0.display().to_string())
                                    .unwrap_or_default()
                            )
                        } else {
                            let mut have = Vec::new();
                            if let Some(r) = &c.root {
                                have.push(format!("root {}", disp_root(ws, r)));
                            }
                            if let Some(b) = &c.binary {
                                have.push(format!("binary {}", b.0.display()));
                            }
                            let have = if have.is_empty() {
                                String::new()
                            } else {
                                format!(" (present: {})", have.join("; "))
                            };
                            format!("- {}: not usable; {}{have}", c.spec.id, c.missing(ws))
                        };
                        detected.push(json!({"id": c.spec.id, "usable": c.usable(),
                            "roots": c.root.iter().map(|r| disp_root(ws, r)).collect::<Vec<_>>(),
                            "binary": c.binary.as_ref().map(|b| b.0.display().to_string()),
                            "missing": if c.usable() { String::new() } else { c.missing(ws) }}));
                        out.push(line);
                    }
                }
                Err(e) => out.push(e.to_string()),
            }
        } else {
            out.push("servers for this workspace:".to_string());
            for spec in self.sup.cfg.servers.values() {
                let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
                let roots = checker::marker_dirs(ws, &markers);
                let base = roots.first().map(PathBuf::as_path).unwrap_or(ws);
                let binary = resolve_command(spec, base, ws, self.sup.cfg.trusted);
                if !self.sup.cfg.trusted
                    && let Some(r) = roots.first()
                {
                    ignored_bins.extend(untrusted_note(&spec.id, r, ws));
                }
                if !self.sup.cfg.trusted
                    && let Some(p) = project_binary(spec, base, ws)
                {
                    ignored_bins.push(format!(
                        "{} for {}",
                        agent_tier::workspace::display_path(ws, &p),
                        spec.id
                    ));
                }
                let usable = !roots.is_empty() && binary.is_some();
                let roots_s: Vec<String> = roots.iter().map(|r| disp_root(ws, r)).collect();
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
                let line = if usable {
                    format!(
                        "- {} ({}): usable for {}; binary {}",
                        spec.id,
                        spec.language,
                        roots_s.join(", "),
                        binary
                            .as_ref()
                            .map(|b| b.0.display().to_string())
                            .unwrap_or_default()
                    )
                } else {
                    let mut have = Vec::new();
                    if !roots.is_empty() {
                        have.push(format!("root marker found in {}", roots_s.join(", ")));
                    }
                    if let Some(b) = &binary {
                        have.push(format!("binary {}", b.0.display()));
                    }
                    let have = if have.is_empty() {
                        String::new()
                    } else {
                        format!(" (present: {})", have.join("; "))
                    };
                    format!(
                        "- {} ({}): not usable; {}{have}",
                        spec.id,
                        spec.language,
                        missing.join("; ")
                    )
                };
                out.push(line);
                detected.push(json!({"id": spec.id, "usable": usable, "roots": roots_s,
                    "binary": binary.as_ref().map(|b| b.0.display().to_string()),
                    "missing": missing.join("; ")}));
            }
        }
        for w in &self.sup.cfg.warnings {
            out.push(format!("config warning: {w}"));
        }
        let cfg = &self.sup.cfg;
        if !cfg.ignored.is_empty() || !ignored_bins.is_empty() {
            out.push("ignored because this project is not trusted:".to_string());
            for i in cfg.ignored.iter().chain(&ignored_bins) {
                out.push(format!("- {i}"));
            }
            out.push(cfg.how_to_trust());
        }
        ToolOutput::text(out.join("\n")).with_structured(json!({
            "servers": slots, "detected": detected, "trusted": cfg.trusted,
            "ignored": cfg.ignored.iter().chain(&ignored_bins).collect::<Vec<_>>(),
        }))
    }

    async fn reload(&self, file: Option<&str>) -> Result<ToolOutput, LspError> {
        let path = match file {
            Some(f) => Some(confine_existing(self.ws(), "file", f)?),
            None => None,
        };
        let stopped = self.sup.reload(path.as_deref()).await;
        let mut out = Vec::new();
        if stopped.is_empty() {
            out.push("no running server to restart".to_string());
        }
        for (id, root) in &stopped {
            out.push(format!("stopped {id} for {}", disp_root(self.ws(), root)));
        }
        if let Some(p) = &path {
            let srv = self.sup.server_for(p).await?;
            out.push(format!(
                "started {} for {} (pid {})",
                srv.spec.id,
                disp_root(self.ws(), &srv.root),
                srv.pid.unwrap_or(0)
            ));
        } else if !stopped.is_empty() {
            out.push("each starts again at the next call on one of its files".to_string());
        }
        Ok(ToolOutput::text(out.join("\n")))
    }
}

/// What a server is not allowed to do for a project that is not trusted, when it is something.
fn untrusted_note(id: &str, root: &Path, ws: &Path) -> Option<String> {
    match id {
        "rust-analyzer" => Some(
            "rust-analyzer's build scripts, proc macros and check on save (they run the project's code)"
                .to_string(),
        ),
        "typescript-language-server" => [root, ws]
            .into_iter()
            .map(|d| d.join("node_modules/typescript"))
            .find(|d| d.is_dir())
            .map(|d| {
                format!(
                    "{} for typescript-language-server (it loads the TypeScript installed beside it)",
                    agent_tier::workspace::display_path(ws, &d)
                )
            }),
        _ => None,
    }
}

/// The note under an answer some of whose locations lead out of the root through a symlink.
fn escaped_note(paths: &[String]) -> String {
    format!(
        "note: {} {} outside the workspace root through a symlink; its lines are not shown (`read` refuses it too)",
        paths
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if paths.len() == 1 { "is" } else { "are" }
    )
}

fn disp_root(ws: &Path, root: &Path) -> String {
    let d = agent_tier::workspace::display_path(ws, root);
    if d.is_empty() { ".".into() } else { d }
}

fn render_syms(
    head: String,
    syms: Vec<Sym>,
    limit: usize,
    partial: bool,
    server: &str,
) -> ToolOutput {
    let total = syms.len();
    let shown: Vec<Sym> = syms.into_iter().take(limit).collect();
    let mut out = Vec::new();
    if shown.is_empty() {
        out.push(format!("no {head}"));
    } else {
        out.push(format!("{head}:"));
        out.extend(shown.iter().map(Sym::render));
        if total > shown.len() {
            out.push(format!("(showing {} of {total})", shown.len()));
        }
    }
    if partial {
        out.push(PARTIAL.to_string());
    }
    ToolOutput::text(out.join("\n")).with_structured(json!({
        "operation": "symbols", "server": server, "symbols": shown, "total": total, "partial": partial,
    }))
}

// ---------------------------------------------------------------------------------------------
// rename

impl State {
    /// `textDocument/rename`, asked again once if the content was modified meanwhile.
    async fn rename_request(&self, srv: &Server, params: &Value) -> Result<Value, LspError> {
        match srv.request("textDocument/rename", params.clone()).await {
            Err(LspError::Rpc { code, .. }) if code == CONTENT_MODIFIED => {
                srv.wait_ready(self.sup.cfg.ready_timeout).await;
                srv.request("textDocument/rename", params.clone()).await
            }
            other => other,
        }
    }

    pub async fn rename(&self, a: RenameArgs) -> Result<ToolOutput, LspError> {
        if a.new_name.trim().is_empty() {
            return Err(arg_err("`new_name` is empty; give the new identifier"));
        }
        let t = self.target(
            "lsp_rename",
            Some(&a.file),
            Some(a.line),
            Some(&a.symbol),
            a.occurrence,
            true,
        )?;
        let (srv, _ready) = self.open(&t).await?;
        // The server plans from what it holds: every document it has open is brought up to the
        // disk first (a kernel cell, an editor or `git checkout` may have changed it).
        let mut synced = rename::resync(&srv, self.ws()).await?;
        let enc = srv.encoding();
        let position =
            json!({"line": t.line0, "character": units_of_byte(&t.line_text, t.byte, enc)});
        let td = json!({"uri": path_to_uri(&t.path)});
        let at = format!("{}:{}", t.display, t.line0 + 1);
        let prepare = srv
            .caps()
            .pointer("/renameProvider/prepareProvider")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if prepare {
            let (v, _) = self
                .ask(
                    &srv,
                    "textDocument/prepareRename",
                    json!({"textDocument": td, "position": position}),
                )
                .await?;
            if v.is_null() {
                return Err(arg_err(format!(
                    "{} says `{}` at {at} cannot be renamed (prepareRename returned nothing); check that `symbol` names an identifier defined in the project",
                    srv.spec.id, t.symbol
                )));
            }
        }
        let params = json!({"textDocument": td, "position": position, "newName": a.new_name});
        let mut edit = self.rename_request(&srv, &params).await?;
        // A file the edit changes that the server read from disk by itself may be stale: open
        // it with its disk content and ask again, until the edit names only synced files.
        let mut absent = Vec::new();
        for round in 0..=3 {
            let missing: Vec<PathBuf> = rename::unsynced(self.ws(), &edit, &synced)?
                .into_iter()
                .filter(|p| !absent.contains(p))
                .collect();
            if missing.is_empty() {
                break;
            }
            if round == 3 {
                return Err(arg_err(format!(
                    "{} kept naming files it had not been synced with ({}); nothing was written — try again",
                    srv.spec.id,
                    missing
                        .iter()
                        .map(|p| agent_tier::workspace::display_path(self.ws(), p))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            for p in missing {
                match rename::read_bytes(self.ws(), &p)? {
                    Some(bytes) => {
                        srv.sync(&p, &String::from_utf8_lossy(&bytes), false)
                            .await?;
                        synced.insert(p, bytes);
                    }
                    None => absent.push(p),
                }
            }
            edit = self.rename_request(&srv, &params).await?;
        }
        if is_empty(&edit) {
            return Err(arg_err(format!(
                "{} returned no edit for renaming `{}` at {at}; nothing was written",
                srv.spec.id, t.symbol
            )));
        }
        let plan = rename::plan_edit(self.ws(), &edit, enc, &synced)?;
        apply_all(self.ws(), &plan.changes)?;
        // Tell every running server what changed on disk.
        for s in self.sup.running() {
            for (p, now) in &plan.after {
                match now {
                    Some(text) if s.is_open(p).await => {
                        let _ = s.sync(p, text, true).await;
                    }
                    None => s.close(p).await,
                    _ => {}
                }
            }
        }
        let total: usize = plan.per_file.iter().map(|(_, n)| n).sum();
        let mut out = vec![format!(
            "renamed `{}` to `{}` ({}): {total} edit(s) in {} file(s)",
            t.symbol,
            a.new_name,
            srv.spec.id,
            plan.per_file.len()
        )];
        for (f, n) in &plan.per_file {
            out.push(format!("- {f}: {n} edit(s)"));
        }
        for (o, n) in &plan.renames {
            out.push(format!("- renamed file {o} → {n}"));
        }
        Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
            "server": srv.spec.id,
            "files": plan.per_file.iter().map(|(f, n)| json!({"path": f, "edits": n})).collect::<Vec<_>>(),
            "renamed_files": plan.renames.iter().map(|(o, n)| json!({"from": o, "to": n})).collect::<Vec<_>>(),
        }))
        .with_file_changes(self.ws(), &plan.changes))
    }
}

/// The `lsp` tool.
pub struct LspTool(pub Arc<State>);

impl Tool for LspTool {
    type Args = LspArgs;

    fn name(&self) -> &str {
        "lsp"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn call_tier(&self, args: &LspArgs) -> Option<(Tier, String)> {
        (args.operation == Operation::Diagnostics && args.file.as_deref() == Some("*")).then(|| {
            (
                Tier::Exec,
                "`diagnostics` with `\"*\"` runs the project's own code (`cargo check` runs build scripts and proc macros; `tsc`, `go vet` and pyright run the project's toolchain); ask `diagnostics` with a `file` instead — the language server checks one file without running the project".to_string(),
            )
        })
    }

    fn description(&self) -> String {
        "Ask the project's language server. Positions are `line` (1-based) plus `symbol`, a substring \
of that line naming the symbol (add `occurrence` when it appears more than once). Operations: \
diagnostics (file, or \"*\" to run the project checkers: that runs project code, an exec-tier call the \
full surface only allows), definition, type_definition, implementation, \
references (at most 50), hover, symbols (query: workspace search, at most 100; file: the file's \
symbols, at most 200), code_actions, status (which servers run and what is missing), reload. \
Results are `path:line:col: <line text>`."
            .to_string()
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn call(
        &self,
        args: LspArgs,
        _cx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let st = self.0.clone();
        async move { st.run(args).await.map_err(BoxError::from) }
    }
}

/// The `lsp_rename` tool.
pub struct RenameTool(pub Arc<State>);

impl Tool for RenameTool {
    type Args = RenameArgs;

    fn name(&self) -> &str {
        "lsp_rename"
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> String {
        "Rename a symbol across the project with the language server: `file`, `line` (1-based), \
`symbol` (a substring of that line naming it), `new_name`. All files change or none do; the result \
lists every file and its number of edits."
            .to_string()
    }

    fn call(
        &self,
        args: RenameArgs,
        _cx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let st = self.0.clone();
        async move { st.rename(args).await.map_err(BoxError::from) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_of_every_shape() {
        let one = json!({"uri": "file:///a.py", "range": {"start": {"line": 1, "character": 2}}});
        let link = json!([{"targetUri": "file:///b.py", "targetRange": {"start": {"line": 0, "character": 0}},
                           "targetSelectionRange": {"start": {"line": 3, "character": 4}}}]);
        assert_eq!(locations(&one), vec![(PathBuf::from("/a.py"), 1, 2)]);
        assert_eq!(locations(&json!([one.clone(), one])).len(), 1);
        assert_eq!(locations(&link), vec![(PathBuf::from("/b.py"), 3, 4)]);
        assert!(locations(&Value::Null).is_empty());
    }
}
