//! The `lsp` and `lsp_rename` tools and the family's run state (the supervisor, the rooms' ledgers,
//! the witness); the diagnostics-on-write wrapper is `on_write`.

use crate::checker;
use crate::error::LspError;
use crate::render::{Diag, symbols};
use crate::supervisor::Supervisor;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::confine_existing;
use agent_tier::{BoxError, CallContext, Effects, RoomId, Rooms, Tier, Tool, ToolOutput};
use parking_lot::Mutex;
use serde::Deserialize;
use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What one conversation has been shown: diagnostics by (severity, code, message).
type Ledger = HashSet<(String, String, String)>;

/// The family's state for one run: the supervisor (servers are shared by everyone on the root)
/// and, per room, the diagnostics ledger (what each conversation has been shown).
pub struct State {
    pub sup: Supervisor,
    /// The run's one question whether to trust the project ([`crate::trust`]).
    pub(crate) trust: crate::trust::TrustQuestion,
    ledger: Arc<Rooms<Mutex<Ledger>>>,
    /// The run's identifier witness, wired once when the registry is sealed (`attach`).
    witness: std::sync::OnceLock<Option<Arc<dyn agent_tier::witness::IdentifierWitness>>>,
}

impl State {
    pub fn new(registry: &agent_tier::Registry, sup: Supervisor) -> Self {
        State {
            sup,
            trust: Default::default(),
            ledger: Rooms::attach(registry),
            witness: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn ws(&self) -> &Path {
        &self.sup.root
    }

    /// The `path` argument, confined to the root: its path, how results show it, its text.
    pub(crate) fn read_file(&self, file: &str) -> Result<(PathBuf, String, String), LspError> {
        let path = confine_existing(self.ws(), "path", file)?;
        let display = agent_tier::workspace::display_path(self.ws(), &path);
        let text = crate::text::read_text(self.ws(), &path).map_err(|e| LspError::Read {
            path: display.clone(),
            source: e,
        })?;
        Ok((path, display, text))
    }

    /// Record diagnostics as reported to `room`; returns those not reported to it before.
    pub(crate) fn unseen(&self, room: &RoomId, mut diags: Vec<Diag>) -> Vec<Diag> {
        self.unseen_all(room, &mut [&mut diags], true);
        diags
    }

    /// Keep in each list the diagnostics not reported to `room` before (nor earlier in the
    /// lists); `record`: they now are (a dry run records nothing, so the write after it reports
    /// the same).
    pub(crate) fn unseen_all(&self, room: &RoomId, lists: &mut [&mut Vec<Diag>], record: bool) {
        let ledger = self.ledger.get_or_init(room, Mutex::default);
        let mut ledger = ledger.lock();
        let mut scratch = (!record).then(|| ledger.clone());
        let seen = match scratch.as_mut() {
            Some(s) => s,
            None => &mut *ledger,
        };
        for list in lists.iter_mut() {
            list.retain(|d| seen.insert(d.key()));
        }
    }
}

/// An `lsp` operation. The variants carry no doc comments: the tool's description says what
/// each does, once (a variant's doc comment would be repeated in the schema).
// missing_docs is allowed for that reason: the schema's description is written once, elsewhere.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
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
        match self {
            Operation::Diagnostics => "diagnostics",
            Operation::Definition => "definition",
            Operation::TypeDefinition => "type_definition",
            Operation::Implementation => "implementation",
            Operation::References => "references",
            Operation::IncomingCalls => "incoming_calls",
            Operation::OutgoingCalls => "outgoing_calls",
            Operation::Supertypes => "supertypes",
            Operation::Subtypes => "subtypes",
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

mod by_name;
mod command;
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
use command::{At, Checked, Command, Place};

impl State {
    /// Run one `lsp` call. `project_code`: the call declared that it runs the project's code
    /// (its effects).
    pub async fn run(
        &self,
        a: LspArgs,
        project_code: bool,
        room: &RoomId,
    ) -> Result<ToolOutput, LspError> {
        match Command::parse(a)? {
            Command::Status { file } => Ok(ToolOutput::report(&self.status(file.as_deref()).await)),
            Command::Reload { file } => self.reload(file.as_deref()).await,
            Command::Diagnostics(Checked::Project) => Ok(ToolOutput::report(
                &checker::run_all(&self.sup, project_code).await,
            )),
            Command::Diagnostics(Checked::File(f)) => self
                .diagnostics(&f, room)
                .await
                .map(|r| ToolOutput::report(&r)),
            Command::Symbols { file, query } => self
                .symbols(file.as_deref(), query.as_deref())
                .await
                .map(|r| ToolOutput::report(&r)),
            Command::Navigate(nav, p) => {
                let (at, by) = self.place(nav.op(), p).await?;
                self.navigate(nav, &at).await.map(|o| explained(o, by))
            }
            Command::Hierarchy(walk, p) => {
                let (at, by) = self.place(walk.op(), p).await?;
                self.hierarchy(walk, &at).await.map(|o| explained(o, by))
            }
            Command::Hover(p) => {
                let (at, by) = self.place(Operation::Hover, p).await?;
                self.hover(&at).await.map(|o| explained(o, by))
            }
            Command::CodeActions(p) => {
                let (at, by) = self.place(Operation::CodeActions, p).await?;
                self.code_actions(&at).await.map(|o| explained(o, by))
            }
        }
    }

    /// A positional call's address: given, or resolved from a name.
    async fn place(&self, op: Operation, p: Place) -> Result<(At, Option<ByName>), LspError> {
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
                let by = self.by_name(op.name(), &n, false, &next).await?;
                Ok((by.at.clone(), Some(by)))
            }
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
            crate::deadline::within(bound, st.run(args, project_code, &room))
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
            crate::deadline::within(bound, st.rename(args))
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
