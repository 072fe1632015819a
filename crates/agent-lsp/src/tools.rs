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
use agent_tier::{BoxError, CallContext, Effects, Tier, Tool, ToolOutput};
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

mod file_diagnostics;
mod rename_check;
mod rename_tool;
mod status;
mod symbols;
mod target;

impl State {
    /// `project_code`: this call declared that it runs the project's code (its effects).
    pub async fn run(&self, a: LspArgs, project_code: bool) -> Result<ToolOutput, LspError> {
        let op = a.operation;
        match op {
            Operation::Status => return Ok(self.status(a.file.as_deref()).await),
            Operation::Reload => return self.reload(a.file.as_deref()).await,
            Operation::Diagnostics => {
                return match a.file.as_deref() {
                    Some("*") => Ok(checker::run_all(&self.sup, project_code).await),
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

    fn effects(&self, args: &LspArgs) -> Effects {
        let e = Effects::of(self);
        if args.operation == Operation::Diagnostics && args.file.as_deref() == Some("*") {
            e.running_project_code("`diagnostics` with `\"*\"` runs the project's own code (`cargo check` runs build scripts and proc macros; `tsc`, `go vet` and pyright run the project's toolchain); ask `diagnostics` with a `file` instead — the language server checks one file without running the project")
        } else {
            e
        }
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
        cx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let st = self.0.clone();
        let project_code = cx.effects.runs_project_code;
        async move { st.run(args, project_code).await.map_err(BoxError::from) }
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
