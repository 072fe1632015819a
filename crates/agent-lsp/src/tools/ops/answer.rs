//! What a positional answer is — its [`Head`] (the target and who answered), what the operation
//! found (a [`Body`]: [`Places`], [`HoverBody`], [`Actions`], [`Hierarchy`]) and how a name
//! given alone was resolved — the text a model reads, rendered from it, and the refusal of an
//! operation the server does not offer ([`offered`]).

use super::super::witnessed::{WitnessReport, identifier_of};
use super::super::{PARTIAL, escaped_note};
use crate::error::LspError;
use crate::protocol::Offered;
use crate::render::{Loc, Renderer};
use crate::state::State;
use crate::tools::target::Located;
use crate::tools::{Operation, arg_err};
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;

/// The head every positional answer starts with: the operation, the server that answered, the
/// target, and whether the answer may be partial.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Head {
    /// The operation (`definition`, `hover`, …).
    pub operation: &'static str,
    /// The server that answered.
    pub server: String,
    /// The file asked about, relative to the workspace root.
    pub file: String,
    /// The line asked about, 1-based.
    pub line: u32,
    /// The symbol asked about (its identifier).
    pub symbol: String,
    /// The server had not finished loading (or left sites out): the answer may be partial.
    pub partial: bool,
    /// `file:line:column` as shown (1-based, columns in characters).
    #[serde(skip)]
    pub at: String,
    /// How the symbol was taken on its line, when that needs saying.
    #[serde(skip)]
    pub note: Option<String>,
    /// Files whose locations were withheld: they lead out of the root through a symlink.
    #[serde(skip)]
    pub escaped: Vec<String>,
}

/// What a positional operation found: its fields of the answer, and its lines of text.
pub trait Body: Serialize + JsonSchema {
    /// The lines the answer's text starts with (the notes of the [`Head`] follow).
    fn lines(&self, head: &Head) -> Vec<String>;

    /// Its lines already say why the answer is partial (the loading note is then left out).
    fn explains_partial(&self) -> bool {
        false
    }
}

/// A positional answer (`definition`, `type_definition`, `implementation`, `references`,
/// `hover`, `code_actions`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Answer<B> {
    /// The target and who answered.
    #[serde(flatten)]
    pub head: Head,
    /// What the operation found.
    #[serde(flatten)]
    pub body: B,
    /// How a `symbol` given without `line` was resolved to its declaration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
}

impl<B: Body> Report for Answer<B> {
    fn text(&self) -> String {
        let mut text: Vec<String> = self.resolved.iter().cloned().collect();
        text.extend(self.body.lines(&self.head));
        text.extend(self.head.note.iter().cloned());
        if !self.head.escaped.is_empty() {
            text.push(escaped_note(&self.head.escaped));
        }
        if self.head.partial && !self.body.explains_partial() {
            text.push(PARTIAL.to_string());
        }
        text.join("\n")
    }
}

/// What `definition`, `type_definition`, `implementation` and `references` found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Places {
    /// The places, each with its line (references: the first 50).
    pub locations: Vec<Loc>,
    /// How many the server gave in all.
    pub total: usize,
    /// How the identifier witness checked the answer (references, when the run has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<WitnessReport>,
    /// What the witness said when it did not check the answer, or how the answer was asked
    /// again.
    #[serde(skip)]
    pub witness_note: Option<String>,
}

impl Body for Places {
    fn lines(&self, head: &Head) -> Vec<String> {
        let what = head.operation.replace('_', " ");
        let references = head.operation == "references";
        let mut text = Vec::new();
        if self.locations.is_empty() {
            text.push(format!(
                "no {what} found for `{}` at {} ({})",
                head.symbol, head.at, head.server
            ));
        } else {
            let of = if references { "to" } else { "of" };
            text.push(format!(
                "{what} {of} `{}` at {} ({}):",
                head.symbol, head.at, head.server
            ));
            text.extend(self.locations.iter().map(Loc::render));
            if self.total > self.locations.len() {
                text.push(format!(
                    "(showing {} of {})",
                    self.locations.len(),
                    self.total
                ));
            }
        }
        if let Some(w) = &self.witness {
            text.push(w.summary(identifier_of(&head.symbol).unwrap_or_default()));
        }
        text.extend(self.witness_note.iter().cloned());
        text
    }
}

/// What `hover` found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HoverBody {
    /// The signature and documentation, as markdown (empty: none, or withheld).
    pub hover: String,
    /// The files out of the root (through a symlink) that declare the symbol: the hover is
    /// withheld.
    #[serde(skip)]
    pub declared_outside: Vec<String>,
}

impl Body for HoverBody {
    fn lines(&self, head: &Head) -> Vec<String> {
        if !self.declared_outside.is_empty() {
            vec![format!(
                "hover for `{}` at {} withheld: it is declared in {}, outside the workspace root through a symlink (`read` refuses it too)",
                head.symbol,
                head.at,
                self.declared_outside
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )]
        } else if self.hover.is_empty() {
            vec![format!(
                "no hover information for `{}` at {} ({})",
                head.symbol, head.at, head.server
            )]
        } else {
            vec![
                format!(
                    "hover for `{}` at {} ({}):",
                    head.symbol, head.at, head.server
                ),
                self.hover.clone(),
            ]
        }
    }
}

/// What `code_actions` found: the quick fixes (refactorings and source actions are counted).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Actions {
    /// Refactorings and source actions offered besides the quick fixes.
    pub other_actions: usize,
    /// The quick fixes.
    pub actions: Vec<Action>,
}

/// One quick fix.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Action {
    /// What it does.
    pub title: String,
    /// Its kind (`quickfix`, `quickfix.…`).
    pub kind: String,
    /// The server prefers it.
    pub preferred: bool,
}

impl Body for Actions {
    fn lines(&self, head: &Head) -> Vec<String> {
        let mut text = Vec::new();
        if self.actions.is_empty() {
            text.push(format!(
                "no quick fixes for `{}` at {} ({})",
                head.symbol, head.at, head.server
            ));
        } else {
            text.push(format!(
                "quick fixes for `{}` at {} ({}):",
                head.symbol, head.at, head.server
            ));
            for a in &self.actions {
                let kind = Some(a.kind.as_str())
                    .filter(|k| !k.is_empty())
                    .map(|k| format!(" [{k}]"))
                    .unwrap_or_default();
                let pref = if a.preferred { " (preferred)" } else { "" };
                text.push(format!("- {}{kind}{pref}", a.title));
            }
        }
        if self.other_actions > 0 {
            text.push(format!(
                "({} other action(s) — refactorings or source actions — not shown; apply a fix with `edit` or `apply_patch`)",
                self.other_actions
            ));
        }
        text
    }
}

/// What `incoming_calls`, `outgoing_calls`, `supertypes` and `subtypes` found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Hierarchy {
    /// What the server took the symbol to be (`kind name — path:line:col`).
    pub items: Vec<String>,
    /// The first 50 found: each call into the symbol (at the call, with the caller's name), each
    /// function it calls, or each type.
    pub steps: Vec<Step>,
    /// How many the server gave in all.
    pub total: usize,
    /// incoming_calls: calls of the symbol (by the witness and the server's own definitions)
    /// that the server's answer left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Loc>,
    /// incoming_calls: uses of the symbol that are not calls (imports, passed as a value).
    pub other_uses: usize,
    /// How the identifier witness checked the callers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<WitnessReport>,
    /// Why the witness did not check them.
    #[serde(skip)]
    pub witness_note: Option<String>,
}

/// One step of a hierarchy.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Step {
    /// The caller, the callee, or the type.
    pub name: String,
    /// Its kind in words.
    pub kind: String,
    /// incoming_calls: the call; otherwise where its name is.
    #[serde(flatten)]
    pub loc: Loc,
    /// outgoing_calls: the lines of the symbol that make this call (1-based).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub called_at: Vec<u32>,
}

impl Body for Hierarchy {
    fn explains_partial(&self) -> bool {
        !self.left_out.is_empty()
    }

    fn lines(&self, head: &Head) -> Vec<String> {
        let what = head.operation.replace('_', " ");
        let mut text = Vec::new();
        if self.items.is_empty() {
            text.push(format!(
                "{} found no {} at {} to take {what} of ({})",
                head.server,
                if head.operation.ends_with("types") {
                    "type"
                } else {
                    "function"
                },
                head.at,
                head.server
            ));
            return text;
        }
        let of = self.items.join("; ");
        if self.steps.is_empty() {
            text.push(format!("no {what} of {of} ({})", head.server));
        } else {
            text.push(format!("{what} of {of} ({}):", head.server));
        }
        for s in &self.steps {
            text.push(match head.operation {
                "incoming_calls" => format!("{} — in {} {}", s.loc.render(), s.kind, s.name),
                "outgoing_calls" => {
                    let lines: Vec<String> = s.called_at.iter().map(u32::to_string).collect();
                    format!(
                        "{} {} — {} (called at line {})",
                        s.kind,
                        s.name,
                        s.loc.render(),
                        lines.join(", ")
                    )
                }
                _ => format!("{} {} — {}", s.kind, s.name, s.loc.render()),
            });
        }
        if self.total > self.steps.len() {
            text.push(format!("(showing {} of {})", self.steps.len(), self.total));
        }
        if !self.left_out.is_empty() {
            text.push(format!(
                "partial: {} left out {} call(s) the witness found (their definition is this function):",
                head.server,
                self.left_out.len()
            ));
            text.extend(self.left_out.iter().map(Loc::render));
        }
        if let Some(w) = &self.witness {
            let mut line = w.summary(identifier_of(&head.symbol).unwrap_or_default());
            if self.other_uses > 0 {
                line.push_str(&format!(
                    "; {} other use(s) of this function that are not calls (imports, passed as a value)",
                    self.other_uses
                ));
            }
            text.push(line);
        }
        text.extend(self.witness_note.iter().cloned());
        text
    }
}

/// The refusal of an operation the server does not offer.
pub(in crate::tools) fn not_offered(l: &Located, op: Operation) -> LspError {
    arg_err(format!(
        "{} does not offer `{}`; use another operation (definition, hover, references), or make another server serve this language with `languages` in the lsp config",
        l.srv.spec.id,
        op.name()
    ))
}

/// Refuse an operation the server does not offer (`R` is the request that answers it).
pub(in crate::tools) fn offered<R: Offered>(l: &Located, op: Operation) -> Result<(), LspError> {
    if l.srv.supports::<R>() {
        return Ok(());
    }
    Err(not_offered(l, op))
}

/// The answer's head, and its renderer with the target file loaded.
pub(in crate::tools) fn answer_head<'a>(
    st: &'a State,
    l: &Located,
    op: Operation,
    partial: bool,
) -> (Head, Renderer<'a>) {
    let head = Head {
        operation: op.name(),
        server: l.srv.spec.id.clone(),
        file: l.t.display.clone(),
        line: l.t.line0 + 1,
        symbol: l.t.symbol.clone(),
        partial,
        at: l.at.clone(),
        note: l.t.note.clone(),
        escaped: Vec::new(),
    };
    let mut r = Renderer::new(st.ws(), l.srv.encoding());
    r.preload(&l.t.path, &l.t.text);
    (head, r)
}

/// The answer: its head, the locations the renderer withheld because they lead out of the
/// root, and what the operation found.
pub(in crate::tools) fn finish<B: Body>(mut head: Head, body: B, r: &Renderer) -> Answer<B> {
    head.escaped = r.escaped.clone();
    Answer {
        head,
        body,
        resolved: None,
    }
}
