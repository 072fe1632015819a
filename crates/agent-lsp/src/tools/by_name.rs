//! Name-only addressing: `symbol` without `line` is resolved to its one declaration — in
//! `path` (the file's document symbols), or without `path` (or when `path` does not declare it)
//! in the workspace (workspace symbols) — through the same resolver as the run's
//! [`Locator`](super::Locator). A name matching several declarations is refused with the
//! candidates and the exact next call; nothing is guessed, for a read or a write.

use super::locate::{Decl, Found, Kinds};
use crate::address;
use crate::error::LspError;
use crate::state::State;
use crate::text::lines;
use crate::tools::{At, Named};
use crate::tools::{arg_err, locate};

/// At most this many candidates are listed in an ambiguity error.
const SHOWN: usize = 20;

/// A name resolved to one declaration: the address to use, and the one line that says how.
pub(super) struct ByName {
    pub at: At,
    pub how: String,
}

/// The call to make next for one candidate: `{"operation": …, "path": …, "line": …, "symbol": …}`.
pub(super) type NextCall<'a> = &'a (dyn Fn(&str, u32, &str) -> String + Sync);

/// `"path": "…", "line": N, "symbol": "…"` as a model writes them.
pub(super) fn address_fields(path: &str, line: u32, symbol: &str) -> String {
    format!(
        "\"path\": {}, \"line\": {line}, \"symbol\": {}",
        quoted(path),
        quoted(symbol)
    )
}

/// `text` as a JSON string, quotes and escapes included.
pub(super) fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Resolve `n` to the declaration it names. `op`: the tool or operation (for messages);
/// `for_write`: a unique answer from a server still indexing is not trusted either;
/// `next`: the exact call that addresses one candidate.
pub(super) async fn by_name(
    st: &State,
    op: &str,
    n: &Named,
    for_write: bool,
    next: NextCall<'_>,
) -> Result<ByName, LspError> {
    let symbol = n.symbol.as_str();
    let (_, last) = locate::split_name(symbol);
    if last.is_empty() || !last.chars().all(address::is_ident) {
        return Err(arg_err(format!(
            "`{symbol}` is not a name; without `line`, `symbol` is a declared name (`name`, `Class.method`, `mod::Type`) — or give `path` and `line` with a substring of that line"
        )));
    }
    // In the file first; a name the file does not declare is looked for in the workspace.
    let mut not_in = None;
    if let Some(file) = &n.file {
        let (path, display, text) = st.read_file(file)?;
        let found = locate::declarations_in_file(st, symbol, &path, &text, Kinds::Any).await?;
        if !found.decls.is_empty() {
            let scope = format!("`{display}`");
            return one(st, op, symbol, found, &scope, for_write, next);
        }
        not_in = Some((path, display));
    }
    let near = not_in.as_ref().map(|(p, _)| p.as_path());
    let found = locate::declarations_named(st, symbol, near, Kinds::Any).await?;
    if found.decls.is_empty() {
        let (where_, hint) = match &not_in {
            Some((_, d)) => (
                format!("`{d}` or the workspace"),
                format!(
                    "; if `{d}` only uses it, give `line` of a use (`symbol` a substring of that line)"
                ),
            ),
            None => ("the workspace".to_string(), String::new()),
        };
        let mut why = Vec::new();
        if found.outside_root > 0 {
            why.push(format!(
                "{} match(es) outside the workspace root (a library) are not addressed by name",
                found.outside_root
            ));
        }
        if found.partial {
            why.push("the server was still indexing; ask again shortly".to_string());
        }
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        };
        return Err(arg_err(format!(
            "no declaration named `{symbol}` in {where_} ({}){why}; list similar names with {{\"operation\": \"symbols\", \"query\": {}}}{hint}",
            found.by,
            quoted(last)
        )));
    }
    let scope = match &not_in {
        Some((_, d)) => format!("the workspace; `{d}` declares none"),
        None => "the workspace".to_string(),
    };
    one(st, op, symbol, found, &scope, for_write, next)
}

/// The one declaration of `found`, or the refusal that lists them.
fn one(
    st: &State,
    op: &str,
    symbol: &str,
    found: Found,
    scope: &str,
    for_write: bool,
    next: NextCall<'_>,
) -> Result<ByName, LspError> {
    let (_, last) = locate::split_name(symbol);
    let show = |d: &Decl| {
        let container = d
            .container
            .as_deref()
            .map(|c| format!(" (in {c})"))
            .unwrap_or_default();
        format!(
            "{}:{} {} {}{container}",
            agent_tier::workspace::display_path(st.ws(), &d.path),
            d.line,
            crate::render::symbol_kind(d.kind),
            d.name
        )
    };
    let mut found = found;
    found
        .decls
        .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    let [d] = found.decls.as_slice() else {
        let n = found.decls.len();
        let mut text = vec![format!(
            "`{symbol}` names {n} declarations in {scope} ({}); `{op}` never acts on a guess:",
            found.by
        )];
        text.extend(
            found
                .decls
                .iter()
                .take(SHOWN)
                .map(|d| format!("- {}", show(d))),
        );
        if n > SHOWN {
            text.push(format!("- … and {} more", n - SHOWN));
        }
        let first = &found.decls[0];
        // Qualifying helps when every candidate has its own container.
        let containers: Vec<&str> = found
            .decls
            .iter()
            .filter_map(|d| d.container.as_deref().map(head_segment))
            .collect();
        let distinct = containers.len() == n
            && containers
                .iter()
                .enumerate()
                .all(|(i, c)| !containers[..i].contains(c));
        let qualify = if distinct {
            format!(", or qualify the name (`{}.{last}`)", containers[0])
        } else {
            String::new()
        };
        text.push(format!(
            "call again with `path` and `line` of the one you mean, e.g. {}{qualify}",
            next(
                &agent_tier::workspace::display_path(st.ws(), &first.path),
                first.line,
                last
            )
        ));
        return Err(arg_err(text.join("\n")));
    };
    if for_write && found.partial {
        return Err(arg_err(format!(
            "`{symbol}` was found once, at {}, but {} was still indexing, so another declaration may not be listed yet; nothing was written — call again shortly, or with `path` and `line`: {}",
            show(d),
            found.by,
            next(
                &agent_tier::workspace::display_path(st.ws(), &d.path),
                d.line,
                last
            )
        )));
    }
    let display = agent_tier::workspace::display_path(st.ws(), &d.path);
    // Which occurrence of the name on its line is the declaration's.
    let occurrence = match (crate::text::read_text(st.ws(), &d.path), d.byte) {
        (Ok(text), Some(byte)) => lines(&text)
            .get(d.line as usize - 1)
            .and_then(|l| {
                address::whole_matches(l, last)
                    .iter()
                    .position(|&b| b == byte)
            })
            .map(|i| i as u32 + 1),
        _ => None,
    };
    let so_far = if found.partial {
        "; the server was still indexing, so it is the only one found so far"
    } else {
        ""
    };
    Ok(ByName {
        how: format!(
            "resolved `{symbol}` to {display}:{} {} {} (the only declaration in {scope}{so_far})",
            d.line,
            crate::render::symbol_kind(d.kind),
            d.name
        ),
        at: At {
            file: display,
            line: d.line,
            symbol: last.to_string(),
            occurrence,
            exact: occurrence.is_some(),
        },
    })
}

/// The last segment of a container (`lib.Greeter` → `Greeter`), to suggest a qualified name.
fn head_segment(container: &str) -> &str {
    container
        .rsplit(['.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(container)
}
