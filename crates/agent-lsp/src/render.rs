//! Turning server answers into plain text and plain JSON: `path:line:col: <line text>`.

use crate::protocol::{
    Diagnostic, DocumentSymbolItem, Hover, HoverContents, Locations, Position, SymbolInformation,
    SymbolKind,
};
use crate::text::{Encoding, display_col, lines, uri_to_path};
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A checker's finding before rendering: (file, 1-based line, 1-based column, severity, code,
/// message).
pub(crate) type Finding = (PathBuf, u32, u32, String, String, String);

/// A place in a file, for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Loc {
    /// Relative to the workspace root when inside it, else absolute.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub column: usize,
    /// The line's text, trimmed.
    pub text: String,
}

impl Loc {
    pub fn render(&self) -> String {
        format!("{}:{}:{}: {}", self.path, self.line, self.column, self.text)
    }
}

/// A diagnostic, for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Diag {
    /// Where it is.
    #[serde(flatten)]
    pub loc: Loc,
    /// `error`, `warning`, `info` or `hint`.
    pub severity: String,
    /// The server's or checker's code for it (empty when it has none).
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// Who reported it (`Pylance`, `rustc`, a checker; empty when unknown).
    pub source: String,
}

impl Diag {
    pub fn render(&self) -> String {
        let code = if self.code.is_empty() {
            String::new()
        } else {
            format!("[{}]", self.code)
        };
        let msg = self.message.trim().replace('\n', "\n    ");
        format!(
            "{}:{}:{}: {}{code}: {msg}\n    {}",
            self.loc.path, self.loc.line, self.loc.column, self.severity, self.loc.text
        )
    }

    /// The ledger key: severity, code and message — not the position.
    pub fn key(&self) -> (String, String, String) {
        (
            self.severity.clone(),
            self.code.clone(),
            self.message.trim().to_string(),
        )
    }
}

/// What a location through a symlink out of the root shows instead of its line.
pub const ESCAPED_TEXT: &str = "(not shown: outside the workspace root through a symlink)";

/// What a location named outside the root (a library, the standard library, any file a server
/// points to) shows instead of its line: `read` refuses such a file, so no answer quotes it,
/// whether the project is trusted or not.
pub const OUTSIDE_TEXT: &str = "(not shown: outside the workspace)";

/// Whether `path` is named inside `ws` but resolves outside it (a symlinked directory or file
/// in the workspace that points out of it): `read` refuses such a file, so no `lsp` answer may
/// quote it. A path named outside the root (a library, the standard library) is not an escape.
pub fn escapes(ws: &Path, path: &Path) -> bool {
    if !path.starts_with(ws) {
        return false;
    }
    match path.canonicalize() {
        Ok(real) => !real.starts_with(ws),
        // A dangling symlink, or `..` through one: not provably inside, so treat it as out.
        Err(_) => {
            path.symlink_metadata().is_ok()
                || path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        }
    }
}

/// Reads files (once each) to quote lines and convert columns.
pub struct Renderer<'a> {
    ws: &'a Path,
    enc: Encoding,
    cache: HashMap<PathBuf, Option<String>>,
    /// Display paths of the locations withheld because they lead out of the root.
    pub escaped: Vec<String>,
}

impl<'a> Renderer<'a> {
    pub fn new(ws: &'a Path, enc: Encoding) -> Self {
        Renderer {
            ws,
            enc,
            cache: HashMap::new(),
            escaped: Vec::new(),
        }
    }

    /// Use this text for `path` instead of reading it.
    pub fn preload(&mut self, path: &Path, text: &str) {
        self.cache
            .insert(path.to_path_buf(), Some(text.to_string()));
    }

    pub fn display(&self, path: &Path) -> String {
        path.strip_prefix(self.ws)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.display().to_string())
    }

    /// A location from an LSP position (0-based line, column in the negotiated encoding).
    pub fn loc(&mut self, path: &Path, line: u32, character: u32) -> Loc {
        if !self.cache.contains_key(path) && escapes(self.ws, path) {
            let shown = self.display(path);
            if !self.escaped.contains(&shown) {
                self.escaped.push(shown.clone());
            }
            return Loc {
                path: shown,
                line: line + 1,
                column: character as usize + 1,
                text: ESCAPED_TEXT.to_string(),
            };
        }
        if !self.cache.contains_key(path) && !path.starts_with(self.ws) {
            return Loc {
                path: self.display(path),
                line: line + 1,
                column: character as usize + 1,
                text: OUTSIDE_TEXT.to_string(),
            };
        }
        let text = self
            .cache
            .entry(path.to_path_buf())
            .or_insert_with(|| crate::text::read_text(self.ws, path).ok());
        let (column, line_text) = match text
            .as_deref()
            .and_then(|t| lines(t).get(line as usize).map(|l| l.to_string()))
        {
            Some(l) => (display_col(&l, character, self.enc), l.trim().to_string()),
            None => (character as usize + 1, String::new()),
        };
        Loc {
            path: self.display(path),
            line: line + 1,
            column,
            text: line_text,
        }
    }

    pub fn diag(&mut self, path: &Path, d: &Diagnostic) -> Diag {
        let severity = match d.severity {
            Some(1) | None => "error",
            Some(2) => "warning",
            Some(3) => "info",
            _ => "hint",
        };
        Diag {
            loc: self.loc(path, d.range.start.line, d.range.start.character),
            severity: severity.to_string(),
            code: d.code.as_ref().map(ToString::to_string).unwrap_or_default(),
            message: d.message.clone(),
            source: d.source.clone().unwrap_or_default(),
        }
    }
}

/// Every location of a navigation answer, as `(path, line, character)`: once each, `file:`
/// URIs only.
pub fn locations(v: &Locations) -> Vec<(PathBuf, u32, u32)> {
    let mut out = Vec::new();
    for it in &v.0 {
        if let Some(p) = uri_to_path(it.uri()) {
            let Position { line, character } = it.start();
            if !out.contains(&(p.clone(), line, character)) {
                out.push((p, line, character));
            }
        }
    }
    out
}

/// Hover contents as markdown: `MarkupContent`, `MarkedString` or an array of them.
pub fn hover_text(v: Option<&Hover>) -> String {
    fn one(v: &HoverContents) -> String {
        match v {
            HoverContents::Text(s) => s.clone(),
            HoverContents::Block(b) => match &b.language {
                Some(lang) => format!("```{lang}\n{}\n```", b.value),
                None => b.value.clone(),
            },
            HoverContents::Many(a) => a
                .iter()
                .map(one)
                .filter(|s| !s.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n\n"),
        }
    }
    v.and_then(|h| h.contents.as_ref())
        .map(one)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The name of an LSP `SymbolKind`.
pub fn symbol_kind(k: SymbolKind) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    NAMES
        .get((k as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("symbol")
}

/// A symbol, for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Sym {
    /// Its name as the server reports it.
    pub name: String,
    /// Its kind in words (`class`, `method`, `function`, …).
    pub kind: String,
    /// How deep it is nested in the file's symbols (0: top level).
    pub depth: usize,
    /// What contains it, when the server says.
    pub container: Option<String>,
    /// Where its name is.
    #[serde(flatten)]
    pub loc: Loc,
}

impl Sym {
    pub fn render(&self) -> String {
        let container = self
            .container
            .as_ref()
            .filter(|c| !c.is_empty())
            .map(|c| format!(" (in {c})"))
            .unwrap_or_default();
        format!(
            "{}{} {}{container} — {}:{}:{}",
            "  ".repeat(self.depth),
            self.kind,
            self.name,
            self.loc.path,
            self.loc.line,
            self.loc.column
        )
    }
}

/// Symbols from `DocumentSymbol[]` (hierarchical) or `SymbolInformation[]`: those of `doc`.
pub fn symbols(r: &mut Renderer<'_>, items: &[DocumentSymbolItem], doc: &Path) -> Vec<Sym> {
    fn walk(
        r: &mut Renderer<'_>,
        items: &[DocumentSymbolItem],
        depth: usize,
        doc: &Path,
        out: &mut Vec<Sym>,
    ) {
        for it in items {
            match it {
                DocumentSymbolItem::Flat(s) => flat(r, s, depth, out),
                DocumentSymbolItem::Nested(s) => {
                    // Symbols of a file out of the root (through a symlink) are not listed.
                    if escapes(r.ws, doc) {
                        continue;
                    }
                    let start = s.selection_range.unwrap_or(s.range).start;
                    out.push(Sym {
                        name: s.name.clone(),
                        kind: symbol_kind(s.kind).to_string(),
                        depth,
                        container: None,
                        loc: r.loc(doc, start.line, start.character),
                    });
                }
            }
            walk(r, it.children(), depth + 1, doc, out);
        }
    }
    let mut out = Vec::new();
    walk(r, items, 0, doc, &mut out);
    out
}

/// Symbols from `SymbolInformation[]` or `WorkspaceSymbol[]` (a workspace search).
pub fn workspace_symbols(r: &mut Renderer<'_>, items: &[SymbolInformation]) -> Vec<Sym> {
    let mut out = Vec::new();
    for s in items {
        flat(r, s, 0, &mut out);
    }
    out
}

/// A flat symbol, where its location says; none for a location that is not a file or leads
/// out of the root through a symlink.
fn flat(r: &mut Renderer<'_>, s: &SymbolInformation, depth: usize, out: &mut Vec<Sym>) {
    let Some(path) = uri_to_path(&s.location.uri) else {
        return;
    };
    if escapes(r.ws, &path) {
        return;
    }
    let loc = match s.location.range {
        Some(range) => r.loc(&path, range.start.line, range.start.character),
        None => Loc {
            path: r.display(&path),
            line: 0,
            column: 0,
            text: String::new(),
        },
    };
    out.push(Sym {
        name: s.name.clone(),
        kind: symbol_kind(s.kind).to_string(),
        depth,
        container: s.container_name.clone(),
        loc,
    });
}
