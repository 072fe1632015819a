//! The run's [`SymbolLocator`]: where a named function is defined, by the language servers'
//! workspace symbol search, refined by the file's document symbols (the name's line and the
//! definition's last line). Another family (the debugger) asks for it by type.

use super::*;
use crate::text::uri_to_path;
use agent_tier::BoxFuture;
use agent_tier::locate::{Located, SymbolLocator, SymbolPlace};

/// Symbol kinds a function breakpoint can name: method, constructor, function.
const CALLABLE: [u64; 3] = [6, 9, 12];

/// The locator over this run's language servers.
pub struct Locator(pub Arc<State>);

impl SymbolLocator for Locator {
    fn locate<'a>(
        &'a self,
        name: &'a str,
        near: Option<&'a Path>,
    ) -> BoxFuture<'a, Result<Located, String>> {
        Box::pin(async move {
            self.0
                .definitions_named(name, near)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// `Greeter.greet` → (`Some("Greeter")`, `greet`); `pkg::helper` → (`Some("pkg")`, `helper`).
fn split_name(name: &str) -> (Option<&str>, &str) {
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

/// Whether a reported symbol is the asked one: same bare name, and for a qualified name, a
/// container (or the reported name's own prefix) that ends with the qualifier.
fn matches(item: &Value, qualifier: Option<&str>, last: &str) -> bool {
    let reported = item.get("name").and_then(Value::as_str).unwrap_or("");
    if bare(reported) != last {
        return false;
    }
    let Some(q) = qualifier else { return true };
    let q = q.replace("::", ".");
    let container = item
        .get("containerName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .replace("::", ".");
    let h = head(reported);
    let prefix = h[..h.len() - last.len()]
        .trim_end_matches(['.', ':'])
        .trim_matches(['(', ')', '*', '&'])
        .replace("::", ".");
    let ends = |s: &str| !s.is_empty() && (s == q || s.ends_with(&format!(".{q}")));
    ends(&container) || ends(&prefix)
}

fn line_of(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .and_then(|l| u32::try_from(l).ok())
        .map(|l| l + 1)
}

/// In a `documentSymbol` answer, the callable symbol named `last` whose range holds `line`:
/// its name's line and, from a `DocumentSymbol` (which has the whole definition's range), its
/// last line. A flat `SymbolInformation` answer's range may be only the name: no last line.
fn refine(doc: &Value, last: &str, line: u32) -> Option<(u32, Option<u32>)> {
    let items = doc.as_array()?;
    let mut best = None;
    for it in items {
        let kind = it.get("kind").and_then(Value::as_u64).unwrap_or(0);
        let name = it.get("name").and_then(Value::as_str).unwrap_or("");
        let whole = it.get("range");
        let range = whole.or_else(|| it.pointer("/location/range"));
        let start = line_of(range.and_then(|r| r.pointer("/start/line")));
        let end = line_of(range.and_then(|r| r.pointer("/end/line")));
        let at = line_of(
            it.pointer("/selectionRange/start/line")
                .or_else(|| range.and_then(|r| r.pointer("/start/line"))),
        );
        if let (true, Some(s), Some(e), Some(at)) = (
            CALLABLE.contains(&kind) && bare(name) == last,
            start,
            end,
            at,
        ) && s <= line
            && line <= e
        {
            best = Some((at, whole.map(|_| e)));
        }
        if let Some(children) = it.get("children")
            && let Some(found) = refine(children, last, line)
        {
            best = Some(found);
        }
    }
    best
}

impl State {
    /// The callable definitions named `name`, searched by the server for `near` (or by every
    /// server the workspace calls for).
    pub(super) async fn definitions_named(
        &self,
        name: &str,
        near: Option<&Path>,
    ) -> Result<Located, LspError> {
        let (qualifier, last) = split_name(name.trim());
        let near = near.filter(|p| p.is_file() && !escapes(self.ws(), p));
        let (servers, _) = self.search_servers(near).await?;
        let mut found = Located::default();
        let mut ids = Vec::new();
        for srv in servers {
            let ready = srv.wait_ready(self.sup.cfg.ready_timeout).await;
            let (v, partial) = self
                .ask(&srv, "workspace/symbol", json!({"query": last}))
                .await?;
            found.partial |= partial || !ready;
            ids.push(srv.spec.id.clone());
            for item in v.as_array().map(Vec::as_slice).unwrap_or_default() {
                let kind = item.get("kind").and_then(Value::as_u64).unwrap_or(0);
                if !CALLABLE.contains(&kind) || !matches(item, qualifier, last) {
                    continue;
                }
                let Some(path) = item
                    .pointer("/location/uri")
                    .and_then(Value::as_str)
                    .and_then(uri_to_path)
                else {
                    continue;
                };
                if !path.starts_with(self.ws()) || escapes(self.ws(), &path) || !path.is_file() {
                    found.outside_root += 1;
                    continue;
                }
                let range = item.pointer("/location/range");
                let Some(start) = line_of(range.and_then(|r| r.pointer("/start/line"))) else {
                    // A WorkspaceSymbol without a range: the file's symbols say where.
                    continue;
                };
                let end =
                    line_of(range.and_then(|r| r.pointer("/end/line"))).filter(|e| *e > start);
                let refined = match crate::text::read_text(&path) {
                    Ok(text)
                        if srv
                            .supports("documentSymbolProvider", "textDocument/documentSymbol") =>
                    {
                        srv.sync(&path, &text, false).await?;
                        let (doc, _) = self
                            .ask(
                                &srv,
                                "textDocument/documentSymbol",
                                json!({"textDocument": {"uri": path_to_uri(&path)}}),
                            )
                            .await?;
                        refine(&doc, last, start)
                    }
                    _ => None,
                };
                let (line, end_line) = refined.unwrap_or((start, end));
                let place = SymbolPlace {
                    name: item
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or(last)
                        .to_string(),
                    kind: crate::render::symbol_kind(kind).to_string(),
                    container: item
                        .get("containerName")
                        .and_then(Value::as_str)
                        .filter(|c| !c.is_empty())
                        .map(str::to_string),
                    path,
                    line,
                    end_line,
                };
                if !found
                    .places
                    .iter()
                    .any(|p| p.path == place.path && p.line == place.line)
                {
                    found.places.push(place);
                }
            }
        }
        found.by = ids.join(", ");
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_on_their_last_separator() {
        assert_eq!(split_name("add"), (None, "add"));
        assert_eq!(split_name("Greeter.greet"), (Some("Greeter"), "greet"));
        assert_eq!(split_name("a::b::helper"), (Some("a::b"), "helper"));
        assert_eq!(split_name(".x"), (None, ".x"));
    }

    #[test]
    fn reported_names_match_by_bare_name_and_container() {
        let item = |name: &str, container: &str| json!({"name": name, "containerName": container});
        assert!(matches(&item("add(int a, int b)", ""), None, "add"));
        assert!(matches(&item("greet", "Greeter"), Some("Greeter"), "greet"));
        assert!(matches(
            &item("greet", "mod.Greeter"),
            Some("Greeter"),
            "greet"
        ));
        assert!(matches(
            &item("(*Server).Start", "main"),
            Some("Server"),
            "Start"
        ));
        assert!(matches(
            &item("Greeter.greet", ""),
            Some("Greeter"),
            "greet"
        ));
        assert!(!matches(&item("greet", "Other"), Some("Greeter"), "greet"));
        assert!(!matches(&item("greeting", ""), None, "greet"));
        assert!(!matches(
            &item("greet", "MyGreeter"),
            Some("Greeter"),
            "greet"
        ));
    }

    #[test]
    fn document_symbols_give_the_name_line_and_the_last_line() {
        let doc = json!([{"name": "Greeter", "kind": 5,
            "range": {"start": {"line": 0}, "end": {"line": 9}},
            "selectionRange": {"start": {"line": 0}},
            "children": [{"name": "greet", "kind": 6,
                "range": {"start": {"line": 2}, "end": {"line": 5}},
                "selectionRange": {"start": {"line": 3}}}]}]);
        assert_eq!(refine(&doc, "greet", 3), Some((4, Some(6))));
        let flat = json!([{"name": "add", "kind": 12,
            "location": {"uri": "file:///a.dart", "range": {"start": {"line": 4}, "end": {"line": 4}}}}]);
        assert_eq!(
            refine(&flat, "add", 5),
            Some((5, None)),
            "a name range is not the definition's end"
        );
        assert_eq!(refine(&doc, "greet", 9), None);
        assert_eq!(refine(&doc, "Greeter", 1), None, "a class is not callable");
    }
}
