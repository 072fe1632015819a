//! The `lsp` and `lsp_rename` tools: their arguments, what an `lsp` call means once parsed (a
//! [`Command`]), and `run`, which dispatches it to its operation — each a free function over the
//! family's [`State`] in the module named for it. The state is `state.rs`; the
//! diagnostics-on-write wrapper is `on_write`.

use crate::checker;
use crate::error::LspError;
use crate::state::State;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Effects, RoomId, Tier, Tool, ToolOutput};
use serde::Deserialize;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

/// An `lsp` operation. The variants carry no doc comments: the tool's description says what
/// each does, once (a variant's doc comment would be repeated in the schema).
// missing_docs is allowed for that reason: the schema's description is written once, elsewhere.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Operation {
    Diagnostics,
    Definition,
    TypeDefinition,
    Implementation,
    References,
    IncomingCalls,
    OutgoingCalls,
    Supertypes,
    Subtypes,
    Hover,
    Symbols,
    CodeActions,
    Status,
    Reload,
}

impl Operation {
    fn name(self) -> &'static str {
        self.into()
    }
}

/// Arguments of `lsp`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// The operation (alias: `op`).
    #[serde(alias = "op")]
    pub operation: Operation,
    /// Workspace-relative file (alias: `file`); diagnostics: `"*"` for every root.
    #[serde(default, alias = "file")]
    pub path: Option<String>,
    /// position: 1-based line.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// position: a substring of `line` naming the symbol (not a column); without `line`, a
    /// name (`Class.method`) declared once in `path` or the workspace.
    #[serde(default)]
    pub symbol: Option<String>,
    /// position: which occurrence of `symbol` on the line (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// symbols: workspace search text.
    #[serde(default)]
    pub query: Option<String>,
}

/// Arguments of `lsp_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// Workspace-relative file (alias: `file`).
    #[serde(default, alias = "file")]
    pub path: Option<String>,
    /// 1-based line.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// Substring of `line` naming the symbol; without `line`, a name (`Class.method`) declared
    /// once in `path` or the workspace.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Which occurrence of `symbol` on the line (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub occurrence: Option<u32>,
    /// The new name.
    #[serde(default)]
    pub new_name: Option<String>,
    /// Move the file `path` here (no `symbol`).
    #[serde(default)]
    pub new_path: Option<String>,
    // Report the problems it would bring; write nothing (the instructions say so once).
    // (no doc comment: it would be the schema's description, which the instructions give once)
    #[allow(missing_docs)]
    #[serde(default)]
    pub dry_run: Option<bool>,
}

// What an `lsp` call means, parsed once from its flat arguments into a command holding exactly
// the fields its operation needs; every operation is one variant, dispatched by `run`'s one
// exhaustive `match`.

/// Where a positional operation points: a file, a 1-based line, and a symbol on that line.
#[derive(Debug, Clone)]
struct At {
    pub file: String,
    pub line: u32,
    pub symbol: String,
    pub occurrence: Option<u32>,
    /// The position is a declaration's, found by name: how the symbol was picked on the line
    /// needs no note.
    pub exact: bool,
}

/// A symbol given by name alone (no `line`): resolved to its one declaration in `file`, or
/// without `file` in the workspace (`by_name.rs`).
#[derive(Debug, Clone)]
struct Named {
    pub file: Option<String>,
    pub symbol: String,
}

/// Where a positional operation points: a line, or a name to resolve first.
#[derive(Debug, Clone)]
enum Place {
    At(At),
    Named(Named),
}

/// The navigation requests that answer with locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nav {
    Definition,
    TypeDefinition,
    Implementation,
    References,
}

impl Nav {
    pub fn op(self) -> Operation {
        match self {
            Nav::Definition => Operation::Definition,
            Nav::TypeDefinition => Operation::TypeDefinition,
            Nav::Implementation => Operation::Implementation,
            Nav::References => Operation::References,
        }
    }
}

/// One step of a call or type hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    IncomingCalls,
    OutgoingCalls,
    Supertypes,
    Subtypes,
}

impl Walk {
    pub fn op(self) -> Operation {
        match self {
            Walk::IncomingCalls => Operation::IncomingCalls,
            Walk::OutgoingCalls => Operation::OutgoingCalls,
            Walk::Supertypes => Operation::Supertypes,
            Walk::Subtypes => Operation::Subtypes,
        }
    }

    /// A call hierarchy's step (else a type hierarchy's).
    pub fn calls(self) -> bool {
        matches!(self, Walk::IncomingCalls | Walk::OutgoingCalls)
    }
}

/// What `diagnostics` checks.
#[derive(Debug, Clone)]
enum Checked {
    /// One file, through its language server.
    File(String),
    /// `"*"`: every project checker of every root.
    Project,
}

/// One `lsp` call, parsed.
#[derive(Debug, Clone)]
enum Command {
    Diagnostics(Checked),
    Navigate(Nav, Place),
    Hover(Place),
    CodeActions(Place),
    Hierarchy(Walk, Place),
    Symbols {
        file: Option<String>,
        query: Option<String>,
    },
    Status {
        file: Option<String>,
    },
    Reload {
        file: Option<String>,
    },
}

impl Command {
    /// Parse the flat arguments; a missing field is an error naming it and what to give.
    pub fn parse(a: LspArgs) -> Result<Command, LspError> {
        let op = a.operation;
        let at = |a: LspArgs| -> Result<Place, LspError> {
            let Some(line) = a.line else {
                // No line: the symbol is a name, resolved to its declaration.
                let symbol = a.symbol.filter(|s| !s.trim().is_empty()).ok_or_else(|| {
                    arg_err(format!(
                        "`symbol` is required for `{}`: a name (`Class.method` works), or with `path` and `line` a substring of that line",
                        op.name()
                    ))
                })?;
                if a.occurrence.is_some() {
                    return Err(arg_err(
                        "`occurrence` picks among the matches on `line`; give `path` and `line` too, or leave out `occurrence` to find `symbol` by name",
                    ));
                }
                return Ok(Place::Named(Named {
                    file: a.path,
                    symbol: symbol.trim().to_string(),
                }));
            };
            let file = a.path.ok_or_else(|| {
                arg_err(format!(
                    "`path` is required for `{}` with `line`: a path relative to the workspace root (or leave out `line` to find `symbol` by name)",
                    op.name()
                ))
            })?;
            // An empty symbol is refused where every target is resolved (`target::target`).
            let symbol = a.symbol.ok_or_else(|| {
                arg_err(format!(
                    "`symbol` is required for `{}`: give a substring of line {line} that names the symbol (positions are never columns)",
                    op.name()
                ))
            })?;
            Ok(Place::At(At {
                file,
                line,
                symbol,
                occurrence: a.occurrence,
                exact: false,
            }))
        };
        Ok(match op {
            Operation::Diagnostics => Command::Diagnostics(match a.path.as_deref() {
                Some("*") => Checked::Project,
                Some(f) => Checked::File(f.to_string()),
                None => {
                    return Err(arg_err(
                        "`path` is required for `diagnostics`: a path relative to the workspace root, or \"*\" to run the project checker",
                    ));
                }
            }),
            Operation::Definition => Command::Navigate(Nav::Definition, at(a)?),
            Operation::TypeDefinition => Command::Navigate(Nav::TypeDefinition, at(a)?),
            Operation::Implementation => Command::Navigate(Nav::Implementation, at(a)?),
            Operation::References => Command::Navigate(Nav::References, at(a)?),
            Operation::Hover => Command::Hover(at(a)?),
            Operation::IncomingCalls => Command::Hierarchy(Walk::IncomingCalls, at(a)?),
            Operation::OutgoingCalls => Command::Hierarchy(Walk::OutgoingCalls, at(a)?),
            Operation::Supertypes => Command::Hierarchy(Walk::Supertypes, at(a)?),
            Operation::Subtypes => Command::Hierarchy(Walk::Subtypes, at(a)?),
            Operation::CodeActions => Command::CodeActions(at(a)?),
            Operation::Symbols => Command::Symbols {
                file: a.path,
                query: a.query,
            },
            Operation::Status => Command::Status { file: a.path },
            Operation::Reload => Command::Reload { file: a.path },
        })
    }
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

const PARTIAL: &str = "note: the server had not finished loading in time; this answer may be partial — ask again shortly";

mod asking;
mod by_name;
mod file_diagnostics;
mod locate;
mod move_file;
mod ops;
mod rename_check;
mod rename_tool;
mod status;
mod symbols;
mod target;
mod witnessed;

pub use locate::Locator;

use by_name::{ByName, address_fields};

/// Run one `lsp` call. `project_code`: the call declared that it runs the project's code
/// (its effects).
pub async fn run(
    st: &State,
    a: LspArgs,
    project_code: bool,
    room: &RoomId,
) -> Result<ToolOutput, LspError> {
    match Command::parse(a)? {
        Command::Status { file } => Ok(ToolOutput::report(
            &status::status(st, file.as_deref()).await,
        )),
        Command::Reload { file } => status::reload(st, file.as_deref()).await,
        Command::Diagnostics(Checked::Project) => Ok(ToolOutput::report(
            &checker::run_all(&st.sup, project_code).await,
        )),
        Command::Diagnostics(Checked::File(f)) => file_diagnostics::diagnostics(st, &f, room)
            .await
            .map(|r| ToolOutput::report(&r)),
        Command::Symbols { file, query } => symbols::symbols(st, file.as_deref(), query.as_deref())
            .await
            .map(|r| ToolOutput::report(&r)),
        Command::Navigate(nav, p) => {
            let (at, by) = place(st, nav.op(), p).await?;
            ops::navigate(st, nav, &at).await.map(|o| explained(o, by))
        }
        Command::Hierarchy(walk, p) => {
            let (at, by) = place(st, walk.op(), p).await?;
            ops::hierarchy(st, walk, &at)
                .await
                .map(|o| explained(o, by))
        }
        Command::Hover(p) => {
            let (at, by) = place(st, Operation::Hover, p).await?;
            ops::hover(st, &at).await.map(|o| explained(o, by))
        }
        Command::CodeActions(p) => {
            let (at, by) = place(st, Operation::CodeActions, p).await?;
            ops::code_actions(st, &at).await.map(|o| explained(o, by))
        }
    }
}

/// A positional call's address: given, or resolved from a name.
async fn place(st: &State, op: Operation, p: Place) -> Result<(At, Option<ByName>), LspError> {
    match p {
        Place::At(at) => Ok((at, None)),
        Place::Named(n) => {
            let next = |path: &str, line: u32, symbol: &str| {
                format!(
                    "{{\"operation\": \"{}\", {}}}",
                    op.name(),
                    address_fields(path, line, symbol)
                )
            };
            let by = by_name::by_name(st, op.name(), &n, false, &next).await?;
            Ok((by.at.clone(), Some(by)))
        }
    }
}

/// An answer, with how its name was resolved when it was (the first line of its text, and
/// `resolved` in its structured result).
fn explained<B: ops::Body>(mut answer: ops::Answer<B>, by: Option<ByName>) -> ToolOutput {
    answer.resolved = by.map(|by| by.how);
    ToolOutput::report(&answer)
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
        if args.operation == Operation::Diagnostics && args.path.as_deref() == Some("*") {
            e.running_project_code("`diagnostics` with `\"*\"` runs the project's own code (`cargo check` runs build scripts and proc macros; `tsc`, `go vet` and pyright run the project's toolchain); ask `diagnostics` with a `file` instead — the language server checks one file without running the project")
        } else {
            e
        }
    }

    fn description(&self) -> String {
        "Ask the language server what code means: declarations, uses, types, errors. At a position (`line` + `symbol`, or `symbol` alone when that name is \
declared once): definition, type_definition, implementation, references (max 50), \
incoming_calls/outgoing_calls (callers, callees), supertypes/subtypes, hover (signature, docs), code_actions (lists fixes; cannot apply them). symbols: `query` searches the \
workspace (100), `path` lists its own (200), as `kind name — path:line:col`. diagnostics of \
`path`; `\"*\"` runs every root's project checker: slow, runs project code, exec tier only. \
status: which servers run, what is missing. reload: restarts the servers of `path`'s root, or \
all. Locations are `path:line:col: <line text>`."
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
        let room = cx.room();
        let bound = st.sup.cfg.ready_timeout;
        async move {
            // `status` reports; every other operation needs a server, which an untrusted
            // project that nothing contains gets only with the person's yes.
            if args.operation != Operation::Status {
                crate::trust::settle(&st.sup, &st.trust, &cx).await?;
            }
            crate::deadline::within(bound, run(&st, args, project_code, &room))
                .await
                .map_err(BoxError::from)
        }
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
        "Rename a symbol everywhere (to rewrite a code pattern: ast_edit). `symbol` alone (no `line`) must name one declaration; anything ambiguous is refused \
with the candidates. All files change or none do; \
the server's references then check the result, and a rename they contradict is rolled back. \
`new_path` moves a file, fixing its imports."
            .to_string()
    }

    fn call(
        &self,
        args: RenameArgs,
        cx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        let st = self.0.clone();
        let bound = st.sup.cfg.ready_timeout;
        async move {
            crate::trust::settle(&st.sup, &st.trust, &cx).await?;
            crate::deadline::within(bound, rename_tool::rename(&st, args))
                .await
                .map_err(BoxError::from)
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::protocol::Locations;
    use crate::render::locations;
    use std::path::PathBuf;

    #[test]
    fn locations_of_every_shape() {
        let read = |wire: &str| serde_json::from_str::<Locations>(wire).unwrap();
        let one = r#"{"uri": "file:///a.py",
            "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 3}}}"#;
        let link = r#"[{"targetUri": "file:///b.py",
            "targetRange": {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}},
            "targetSelectionRange": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 5}}}]"#;
        assert_eq!(locations(&read(one)), vec![(PathBuf::from("/a.py"), 1, 2)]);
        assert_eq!(locations(&read(&format!("[{one}, {one}]"))).len(), 1);
        assert_eq!(locations(&read(link)), vec![(PathBuf::from("/b.py"), 3, 4)]);
        assert!(locations(&read("null")).is_empty());
    }
}
