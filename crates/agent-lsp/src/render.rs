//! Turning server answers into plain text and plain JSON: `path:line:col: <line text>`.

use crate::text::{Encoding, display_col, lines, uri_to_path};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A checker's finding before rendering: (file, 1-based line, 1-based column, severity, code,
/// message).
pub(crate) type Finding = (PathBuf, u32, u32, String, String, String);

/// A place in a file, for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diag {
    #[serde(flatten)]
    pub loc: Loc,
    pub severity: String,
    pub code: String,
    pub message: String,
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
        let text = self
            .cache
            .entry(path.to_path_buf())
            .or_insert_with(|| crate::text::read_text(path).ok());
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

    pub fn diag(&mut self, path: &Path, d: &Value) -> Diag {
        let (l, c) = pos(d.pointer("/range/start"));
        let severity = match d.get("severity").and_then(Value::as_u64) {
            Some(1) | None => "error",
            Some(2) => "warning",
            Some(3) => "info",
            _ => "hint",
        };
        let code = match d.get("code") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        Diag {
            loc: self.loc(path, l, c),
            severity: severity.to_string(),
            code,
            message: d
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            source: d
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }
    }
}

/// `(line, character)` of an LSP `Position` value.
pub fn pos(p: Option<&Value>) -> (u32, u32) {
    let g = |k: &str| {
        p.and_then(|p| p.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32
    };
    (g("line"), g("character"))
}

/// Every location in a `Location | Location[] | LocationLink[] | null` answer.
pub fn locations(v: &Value) -> Vec<(PathBuf, u32, u32)> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![v],
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for it in items {
        let (uri, start) = if let Some(u) = it.get("targetUri").and_then(Value::as_str) {
            let r = it
                .pointer("/targetSelectionRange/start")
                .or_else(|| it.pointer("/targetRange/start"));
            (u, r)
        } else if let Some(u) = it.get("uri").and_then(Value::as_str) {
            (u, it.pointer("/range/start"))
        } else {
            continue;
        };
        if let Some(p) = uri_to_path(uri) {
            let (l, c) = pos(start);
            if !out.contains(&(p.clone(), l, c)) {
                out.push((p, l, c));
            }
        }
    }
    out
}

/// Hover contents as markdown: `MarkupContent`, `MarkedString` or an array of them.
pub fn hover_text(v: &Value) -> String {
    fn one(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Object(o) => {
                let value = o.get("value").and_then(Value::as_str).unwrap_or("");
                match o.get("language").and_then(Value::as_str) {
                    Some(lang) => format!("```{lang}\n{value}\n```"),
                    None => value.to_string(),
                }
            }
            Value::Array(a) => a
                .iter()
                .map(one)
                .filter(|s| !s.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n\n"),
            _ => String::new(),
        }
    }
    one(v.get("contents").unwrap_or(&Value::Null))
        .trim()
        .to_string()
}

/// The name of an LSP `SymbolKind`.
pub fn symbol_kind(k: u64) -> &'static str {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sym {
    pub name: String,
    pub kind: String,
    pub depth: usize,
    pub container: Option<String>,
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

/// Symbols from `DocumentSymbol[]` (hierarchical), `SymbolInformation[]` or `WorkspaceSymbol[]`.
pub fn symbols(r: &mut Renderer<'_>, v: &Value, doc: Option<&Path>) -> Vec<Sym> {
    fn walk(
        r: &mut Renderer<'_>,
        items: &[Value],
        depth: usize,
        doc: Option<&Path>,
        out: &mut Vec<Sym>,
    ) {
        for it in items {
            let name = it
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let kind = symbol_kind(it.get("kind").and_then(Value::as_u64).unwrap_or(0)).to_string();
            let container = it
                .get("containerName")
                .and_then(Value::as_str)
                .map(str::to_string);
            let (path, start) = if let Some(loc) = it.get("location") {
                let p = loc.get("uri").and_then(Value::as_str).and_then(uri_to_path);
                (p, loc.pointer("/range/start"))
            } else {
                (
                    doc.map(Path::to_path_buf),
                    it.pointer("/selectionRange/start")
                        .or_else(|| it.pointer("/range/start")),
                )
            };
            let Some(path) = path else { continue };
            // Symbols of a file out of the root (through a symlink) are not listed.
            if escapes(r.ws, &path) {
                continue;
            }
            let loc = match start {
                Some(s) => {
                    let (l, c) = pos(Some(s));
                    r.loc(&path, l, c)
                }
                None => Loc {
                    path: r.display(&path),
                    line: 0,
                    column: 0,
                    text: String::new(),
                },
            };
            out.push(Sym {
                name,
                kind,
                depth,
                container,
                loc,
            });
            if let Some(children) = it.get("children").and_then(Value::as_array) {
                walk(r, children, depth + 1, doc, out);
            }
        }
    }
    let mut out = Vec::new();
    if let Some(items) = v.as_array() {
        walk(r, items, 0, doc, &mut out);
    }
    out
}
