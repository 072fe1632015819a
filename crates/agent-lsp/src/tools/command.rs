//! `lsp`'s flat, model-friendly arguments parsed once into a command holding exactly the fields
//! its operation needs; every operation is one variant, dispatched by one exhaustive `match`.

use crate::error::LspError;
use crate::tools::{LspArgs, Operation, arg_err};
/// Where a positional operation points: a file, a 1-based line, and a symbol on that line.
#[derive(Debug, Clone)]
pub(super) struct At {
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
pub(super) struct Named {
    pub file: Option<String>,
    pub symbol: String,
}

/// Where a positional operation points: a line, or a name to resolve first.
#[derive(Debug, Clone)]
pub(super) enum Place {
    At(At),
    Named(Named),
}

/// The navigation requests that answer with locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Nav {
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
pub(super) enum Walk {
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
pub(super) enum Checked {
    /// One file, through its language server.
    File(String),
    /// `"*"`: every project checker of every root.
    Project,
}

/// One `lsp` call, parsed.
#[derive(Debug, Clone)]
pub(super) enum Command {
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
            // An empty symbol is refused where every target is resolved (`State::target`).
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
