//! Finding where a named symbol is defined, for a family that is given a name where it needs a
//! place (a debugger's function breakpoint on an adapter without function breakpoints).
//!
//! The family that knows definitions (the language servers) provides a [`SymbolLocator`] while
//! the run is composed; another family asks the registry for it by type, never by a tool's name.
//! A run without a locator simply has none, and the asking family says so.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

/// One definition of a symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolPlace {
    /// The symbol's name as the locator reported it.
    pub name: String,
    /// Its kind, in words (`function`, `method`, `constructor`).
    pub kind: String,
    /// What contains it (a class, a module), when known.
    pub container: Option<String>,
    /// The absolute file of the definition, inside the workspace root.
    pub path: PathBuf,
    /// The line of the symbol's name, 1-based.
    pub line: u32,
    /// The last line of the whole definition (its body included), 1-based, when known.
    pub end_line: Option<u32>,
}

/// What a search for one name found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Located {
    /// Every callable definition whose name (and, for a qualified name, container) matches.
    pub places: Vec<SymbolPlace>,
    /// Who answered (the language servers' ids).
    pub by: String,
    /// Whether an answering server was still indexing: a missing definition may appear later.
    pub partial: bool,
    /// Matching definitions left out because they are outside the workspace root (a library,
    /// or a file reached through a symlink out of the root).
    pub outside_root: usize,
}

/// Why a locator could not search (no server for the language, the server failed).
pub type LocateError = Box<dyn std::error::Error + Send + Sync>;

/// Resolves a function's name to its definitions. (The future is spelled out rather than
/// `BoxFuture`: the registry holds the locator, so this module does not import it back.)
pub trait SymbolLocator: Send + Sync + 'static {
    /// The callable definitions named `name` (`add`, `Greeter.greet`, `pkg::helper`). `near` is
    /// a file of the language to search (the debugged program), when known. An error says why
    /// nothing could be searched (no server for the language, the server failed).
    fn locate<'a>(
        &'a self,
        name: &'a str,
        near: Option<&'a Path>,
    ) -> Pin<Box<dyn Future<Output = Result<Located, LocateError>> + Send + 'a>>;
}
