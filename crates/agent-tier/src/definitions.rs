//! A file's definitions by name path, read from its grammar: what an edit by symbol
//! (`Class.method`) is addressed with, found without a language server.
//!
//! The family that parses code (structural search) provides a [`DefinitionFinder`] while the
//! run is composed; the file tools ask the registry for it by type. A run without one has none,
//! and an edit by symbol says so.

use std::path::Path;

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Its name and the names of the definitions around it, outermost first (`["Greeter",
    /// "greet"]`; a Rust `impl Greeter` block and a Go method's receiver count as `Greeter`).
    pub path: Vec<String>,
    /// Its kind, in the grammar's tags (`function`, `method`, `class`, `interface`, …).
    pub kind: String,
    /// Where its whole text starts, as a byte offset in the file (decorators and an `export`
    /// included).
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// The 1-based line it starts on.
    pub line: u32,
}

impl Definition {
    /// Its name path as written in an argument: `Greeter.greet`.
    pub fn name_path(&self) -> String {
        self.path.join(".")
    }
}

/// Reads a file's definitions from its grammar.
pub trait DefinitionFinder: Send + Sync + 'static {
    /// Every definition in `source`, the content of `path` (whose extension picks the
    /// grammar). An error says why none can be read (no grammar for the file, or no
    /// definitions query for that grammar).
    fn definitions(&self, path: &Path, source: &str) -> Result<Vec<Definition>, String>;
}

/// The definitions a name path (`greet`, `Greeter.greet`, `mod::Greeter::greet`) names: those
/// whose path ends with its segments.
pub fn matching<'a>(defs: &'a [Definition], name_path: &str) -> Vec<&'a Definition> {
    let want: Vec<&str> = name_path
        .split(['.', ':'])
        .filter(|s| !s.is_empty())
        .collect();
    if want.is_empty() {
        return Vec::new();
    }
    defs.iter()
        .filter(|d| d.path.len() >= want.len() && d.path[d.path.len() - want.len()..] == want[..])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(path: &[&str]) -> Definition {
        Definition {
            path: path.iter().map(|s| s.to_string()).collect(),
            kind: "function".into(),
            start: 0,
            end: 0,
            line: 1,
        }
    }

    #[test]
    fn name_paths_match_from_the_end() {
        let defs = [
            def(&["Greeter", "greet"]),
            def(&["Other", "greet"]),
            def(&["greet"]),
        ];
        assert_eq!(matching(&defs, "greet").len(), 3);
        assert_eq!(matching(&defs, "Greeter.greet"), vec![&defs[0]]);
        assert_eq!(matching(&defs, "Greeter::greet"), vec![&defs[0]]);
        assert!(matching(&defs, "Nope.greet").is_empty());
        assert!(matching(&defs, "..").is_empty());
        assert!(matching(&defs, "x.Greeter.greet").is_empty());
    }
}
