//! Declarations by name: the run's [`SymbolLocator`] (where a named function is defined, asked
//! for by type by another family: the debugger) and `lsp`'s name-only addressing
//! (`tools/by_name.rs`) share one resolver: the language servers' workspace symbol search,
//! refined by the file's document symbols (the name's line and column, the definition's last
//! line), or one file's document symbols with their container chain.

use crate::error::LspError;
use crate::protocol::{
    DocumentParams, DocumentSymbolItem, DocumentSymbols, SymbolInformation, SymbolKind,
    WorkspaceSymbolParams, WorkspaceSymbols,
};
use crate::render::escapes;
use crate::state::State;
use crate::text::{lines, path_to_uri, uri_to_path};
use crate::tools::arg_err;
use crate::tools::asking;
use crate::tools::symbols;
use agent_tier::BoxFuture;
use agent_tier::locate::{Located, SymbolLocator, SymbolPlace};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Symbol kinds a function breakpoint can name: method, constructor, function.
const CALLABLE: [SymbolKind; 3] = [6, 9, 12];

/// Which symbol kinds a search by name keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kinds {
    /// Functions, methods and constructors (a breakpoint's place).
    Callable,
    /// Every declaration (an address for `lsp` and `lsp_rename`).
    Any,
}

impl Kinds {
    fn keeps(self, kind: SymbolKind) -> bool {
        self == Kinds::Any || CALLABLE.contains(&kind)
    }
}

/// One declaration found by name.
#[derive(Debug, Clone)]
pub(super) struct Decl {
    /// The name as the server reported it.
    pub name: String,
    pub kind: SymbolKind,
    /// What contains it (a class, a module), when known.
    pub container: Option<String>,
    /// The absolute file, inside the root.
    pub path: PathBuf,
    /// The name's line, 1-based.
    pub line: u32,
    /// The definition's last line, 1-based, when known.
    pub end_line: Option<u32>,
    /// The name's byte offset on its line, when known.
    pub byte: Option<usize>,
}

/// What a search by name found.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub decls: Vec<Decl>,
    /// The answering servers' ids.
    pub by: String,
    /// An answering server was still indexing.
    pub partial: bool,
    /// Matches outside the root (libraries, symlinks out).
    pub outside_root: usize,
}

/// The locator over this run's language servers.
pub struct Locator(pub Arc<State>);

impl SymbolLocator for Locator {
    fn locate<'a>(
        &'a self,
        name: &'a str,
        near: Option<&'a Path>,
    ) -> BoxFuture<'a, Result<Located, Box<dyn std::error::Error + Send + Sync>>> {
        Box::pin(async move { Ok(definitions_named(&self.0, name, near).await?) })
    }
}

/// `Greeter.greet` → (`Some("Greeter")`, `greet`); `pkg::helper` → (`Some("pkg")`, `helper`).
pub(super) fn split_name(name: &str) -> (Option<&str>, &str) {
    let cut = name
        .rfind("::")
        .map(|i| (i, 2))
        .or_else(|| name.rfind('.').map(|i| (i, 1)));
    match cut {
        Some((i, w)) if i > 0 && i + w < name.len() => (Some(&name[..i]), &name[i + w..]),
        _ => (None, name),
    }
}

/// A reported symbol name without its signature (`add(int a, int b)` → `add`); a name that
/// starts with a receiver (`(*T).Method`) is kept whole.
fn head(reported: &str) -> &str {
    match reported.split('(').next().map(str::trim) {
        Some(h) if !h.is_empty() => h,
        _ => reported.trim(),
    }
}

/// The bare name: without a signature or the receiver some servers put in front
/// (`(*T).Method`, `T.method` → `Method`, `method`).
fn bare(reported: &str) -> &str {
    let head = head(reported);
    head.rsplit(['.', ':']).next().unwrap_or(head).trim()
}

/// The module names a file's top-level declarations may be qualified with: its stem (`lib` of
/// `lib.py`), its folder (a Rust `mod.rs`, a Python `__init__.py`) and a Go file's package.
fn modules(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = [path.file_stem(), path.parent().and_then(Path::file_name)]
        .into_iter()
        .flatten()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    // The package line is matched, never quoted: the file's own folder is the root it is read
    // below (a Go file outside the workspace, in the module cache, qualifies its names too).
    if path.extension().is_some_and(|e| e == "go")
        && let Some(folder) = path.parent()
        && let Ok(text) = crate::text::read_text(folder, path)
        && let Some(package) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("package "))
            .and_then(|rest| rest.split_whitespace().next())
    {
        names.push(package.to_string());
    }
    names
}

/// Whether the qualifier `q` names the end of the container chain `chain` (dot-separated,
/// possibly empty), the file's module in front allowed (`lib.make_greeter`, `extra::f`).
fn qualifies(chain: &str, q: &str, path: Option<&Path>) -> bool {
    let q = q.replace("::", ".");
    let q = q.strip_prefix("crate.").unwrap_or(&q);
    let chain = chain.replace("::", ".").replace('/', ".");
    let ends = |s: &str| !s.is_empty() && (s == q || s.ends_with(&format!(".{q}")));
    ends(&chain)
        || path.is_some_and(|p| {
            modules(p).iter().any(|m| {
                ends(&if chain.is_empty() {
                    m.clone()
                } else {
                    format!("{m}.{chain}")
                })
            })
        })
}

/// Whether a reported symbol is the asked one: same bare name, and for a qualified name, a
/// container (or the reported name's own prefix, or the file's module) that ends with the
/// qualifier.
fn matches(
    item: &SymbolInformation,
    qualifier: Option<&str>,
    last: &str,
    path: Option<&Path>,
) -> bool {
    let reported = item.name.as_str();
    if bare(reported) != last {
        return false;
    }
    let Some(q) = qualifier else { return true };
    // A container that is an import path (gopls: `example.com/fixture`) is the module itself.
    let container = item
        .container_name
        .as_deref()
        .filter(|c| !c.contains('/'))
        .unwrap_or_default();
    let h = head(reported);
    let prefix = h
        .strip_suffix(last)
        .unwrap_or("")
        .trim_end_matches(['.', ':'])
        .trim_matches(['(', ')', '*', '&']);
    qualifies(container, q, path) || qualifies(prefix, q, None)
}

/// In a `documentSymbol` answer, every declaration named `last` (of `kinds`) whose container
/// chain (the hierarchy's names, or a flat answer's `containerName`) ends with `qualifier`.
fn in_document(
    doc: &[DocumentSymbolItem],
    path: &Path,
    qualifier: Option<&str>,
    last: &str,
    kinds: Kinds,
) -> Vec<(Decl, u32)> {
    fn walk(
        items: &[DocumentSymbolItem],
        chain: &mut Vec<String>,
        path: &Path,
        want: (Option<&str>, &str, Kinds),
        out: &mut Vec<(Decl, u32)>,
    ) {
        let (qualifier, last, kinds) = want;
        for it in items {
            let (kind, name) = (it.kind(), it.name());
            let container = match it.container() {
                Some(c) => c.to_string(),
                None => chain.join("."),
            };
            // A reported name may carry its own qualifier (gopls: `(Greeter).Greet`).
            let h = head(name);
            let own = h
                .strip_suffix(last)
                .unwrap_or_default()
                .trim_end_matches(['.', ':'])
                .trim_matches(['(', ')', '*', '&']);
            let chain_own = match (container.as_str(), own) {
                (c, "") => c.to_string(),
                ("", o) => o.to_string(),
                (c, o) => format!("{c}.{o}"),
            };
            if bare(name) == last
                && kinds.keeps(kind)
                && qualifier.is_none_or(|q| qualifies(&chain_own, q, Some(path)))
                && let Some(start) = it.name_start()
            {
                out.push((
                    Decl {
                        name: name.to_string(),
                        kind,
                        container: Some(container).filter(|c| !c.is_empty()),
                        path: path.to_path_buf(),
                        line: start.line + 1,
                        end_line: it.whole_range().map(|r| r.end.line + 1),
                        byte: None,
                    },
                    start.character,
                ));
            }
            if !it.children().is_empty() {
                chain.push(head(name).to_string());
                walk(it.children(), chain, path, want, out);
                chain.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(
        doc,
        &mut Vec::new(),
        path,
        (qualifier, last, kinds),
        &mut out,
    );
    out
}

/// The byte offset on `decl`'s line of a column in the server's units.
fn byte_at(text: &str, line: u32, character: u32, enc: crate::text::Encoding) -> Option<usize> {
    lines(text)
        .get(line.checked_sub(1)? as usize)
        .map(|l| crate::text::byte_of_units(l, character, enc))
}

/// In a `documentSymbol` answer, the symbol named `last` (of `kinds`) whose range holds `line`:
/// its name's line and column and, from a `DocumentSymbol` (which has the whole definition's
/// range), its last line. A flat `SymbolInformation` answer's range may be only the name: no
/// last line.
fn refine(
    doc: &[DocumentSymbolItem],
    last: &str,
    line: u32,
    kinds: Kinds,
) -> Option<(u32, Option<u32>, u32)> {
    let mut best = None;
    for it in doc {
        if let (true, Some(range), Some(at)) = (
            kinds.keeps(it.kind()) && bare(it.name()) == last,
            it.range(),
            it.name_start(),
        ) && range.start.line < line
            && line <= range.end.line + 1
        {
            let end = it.whole_range().map(|r| r.end.line + 1);
            best = Some((at.line + 1, end, at.character));
        }
        if let Some(found) = refine(it.children(), last, line, kinds) {
            best = Some(found);
        }
    }
    best
}

/// The callable definitions named `name`, searched by the server for `near` (or by every
/// server the workspace calls for).
pub(super) async fn definitions_named(
    st: &State,
    name: &str,
    near: Option<&Path>,
) -> Result<Located, LspError> {
    let found = declarations_named(st, name, near, Kinds::Callable).await?;
    Ok(Located {
        places: found
            .decls
            .into_iter()
            .map(|d| SymbolPlace {
                name: d.name,
                kind: crate::render::symbol_kind(d.kind).to_string(),
                container: d.container,
                path: d.path,
                line: d.line,
                end_line: d.end_line,
            })
            .collect(),
        by: found.by,
        partial: found.partial,
        outside_root: found.outside_root,
    })
}

/// The declarations (of `kinds`) named `name` in the workspace, searched by the server for
/// `near` (or by every server the workspace calls for).
pub(super) async fn declarations_named(
    st: &State,
    name: &str,
    near: Option<&Path>,
    kinds: Kinds,
) -> Result<Found, LspError> {
    let (qualifier, last) = split_name(name.trim());
    let near = near.filter(|p| p.is_file() && !escapes(st.ws(), p));
    let (servers, _) = symbols::search_servers(st, near).await?;
    let mut found = Found::default();
    let mut ids = Vec::new();
    for srv in servers {
        let ready = srv.wait_ready(st.sup.cfg.ready_timeout).await;
        let query = WorkspaceSymbolParams {
            query: last.to_string(),
        };
        let (v, partial) = asking::ask::<WorkspaceSymbols>(st, &srv, &query).await?;
        found.partial |= partial || !ready;
        ids.push(srv.spec.id.clone());
        for item in v.iter() {
            let kind = item.kind;
            let Some(path) = uri_to_path(&item.location.uri) else {
                continue;
            };
            if !kinds.keeps(kind) || !matches(item, qualifier, last, Some(&path)) {
                continue;
            }
            if !path.starts_with(st.ws()) || escapes(st.ws(), &path) || !path.is_file() {
                found.outside_root += 1;
                continue;
            }
            let Some(range) = item.location.range else {
                // A WorkspaceSymbol without a range: the file's symbols say where.
                continue;
            };
            let start = range.start.line + 1;
            let end = Some(range.end.line + 1).filter(|e| *e > start);
            let character = range.start.character;
            let text = crate::text::read_text(st.ws(), &path).ok();
            let refined = match &text {
                Some(text) if srv.supports::<DocumentSymbols>() => {
                    srv.sync(&path, text, false).await?;
                    let doc = DocumentParams::new(path_to_uri(&path));
                    let (doc, _) = asking::ask::<DocumentSymbols>(st, &srv, &doc).await?;
                    refine(&doc, last, start, kinds)
                }
                _ => None,
            };
            let (line, end_line, character) = refined.unwrap_or((start, end, character));
            let decl = Decl {
                name: item.name.clone(),
                kind,
                container: item.container_name.clone().filter(|c| !c.is_empty()),
                byte: text
                    .as_deref()
                    .and_then(|t| byte_at(t, line, character, srv.encoding())),
                path,
                line,
                end_line,
            };
            if !found
                .decls
                .iter()
                .any(|p| p.path == decl.path && p.line == decl.line)
            {
                found.decls.push(decl);
            }
        }
    }
    found.by = ids.join(", ");
    Ok(found)
}

/// The declarations (of `kinds`) named `name` in one file, by its server's document
/// symbols; the file's server id comes with them.
pub(super) async fn declarations_in_file(
    st: &State,
    name: &str,
    path: &Path,
    text: &str,
    kinds: Kinds,
) -> Result<Found, LspError> {
    let (qualifier, last) = split_name(name.trim());
    let srv = st.sup.server_for(path).await?;
    srv.sync(path, text, false).await?;
    let ready = srv.wait_ready(st.sup.cfg.ready_timeout).await;
    if !srv.supports::<DocumentSymbols>() {
        return Err(arg_err(format!(
            "{} does not list a file's symbols, so `symbol` cannot be found by name; give `line` too",
            srv.spec.id
        )));
    }
    let (doc, partial) =
        asking::ask::<DocumentSymbols>(st, &srv, &DocumentParams::new(path_to_uri(path))).await?;
    let enc = srv.encoding();
    let mut decls: Vec<Decl> = Vec::new();
    for (mut d, character) in in_document(&doc, path, qualifier, last, kinds) {
        d.byte = byte_at(text, d.line, character, enc);
        if !decls.iter().any(|p| p.line == d.line && p.byte == d.byte) {
            decls.push(d);
        }
    }
    Ok(Found {
        decls,
        by: srv.spec.id.clone(),
        partial: partial || !ready,
        outside_root: 0,
    })
}

#[cfg(test)]
mod tests;
