//! The lenient shapes real servers send, as they send them, and the errors a shape nobody sends
//! gives.

use super::*;
use agent_rpc::{Malformed, Notification, Request};

/// `R`'s reply read from its wire text.
fn reply<R: Request>(wire: &str) -> Result<R::Result, Malformed> {
    let payload = serde_json::from_str(wire).expect("the test's reply is JSON");
    agent_rpc::request::reply::<R>(payload)
}

/// `N`'s params read from their wire text.
fn notification<N: Notification>(wire: &str) -> Result<N::Params, Malformed> {
    let payload = serde_json::from_str(wire).expect("the test's params are JSON");
    agent_rpc::request::notification::<N>(payload)
}

/// The params of the server's request `R`, from their wire text.
fn request<R: Request>(wire: &str) -> Result<R::Params, Malformed>
where
    R::Params: DeserializeOwned,
{
    incoming::<R>(serde_json::from_str(wire).expect("the test's params are JSON"))
}

/// The error's text.
fn says<T: std::fmt::Debug>(r: Result<T, Malformed>) -> String {
    r.expect_err("a malformed message").to_string()
}

const RANGE: &str = r#"{"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 3}}"#;

#[test]
fn a_definition_is_null_one_location_or_links() {
    let one = format!(r#"{{"uri": "file:///a.py", "range": {RANGE}}}"#);
    let link = r#"{"targetUri": "file:///b.py",
        "targetRange": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
        "targetSelectionRange": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 9}}}"#;
    // pyrefly: a bare Location; pyright: Location[]; ty: LocationLink[].
    for (wire, n) in [
        ("null".to_string(), 0),
        (one.clone(), 1),
        (format!("[{one}, {one}]"), 2),
        (format!("[{link}]"), 1),
        ("[]".to_string(), 0),
    ] {
        assert_eq!(reply::<Definition>(&wire).unwrap().0.len(), n, "{wire}");
    }
    let l = &reply::<Definition>(&format!("[{link}]")).unwrap().0[0];
    assert_eq!(
        (l.uri(), l.start()),
        (
            "file:///b.py",
            Position {
                line: 3,
                character: 4
            }
        )
    );
    let e = says(reply::<Definition>(&format!(
        r#"[{one}, {{"uri": "file:///c.py"}}]"#
    )));
    assert!(
        e.contains("textDocument/definition reply is malformed: location 1: missing field `range`"),
        "{e}"
    );
    let e = says(reply::<References>(r#""file:///a.py""#));
    assert!(e.contains("expected a Location"), "{e}");
}

#[test]
fn hover_contents_of_every_shape() {
    for wire in [
        "null",
        r#"{"contents": "plain"}"#,
        r#"{"contents": {"kind": "markdown", "value": "**md**"}}"#,
        r#"{"contents": {"language": "python", "value": "def f()"}}"#,
        r#"{"contents": ["a", {"language": "c", "value": "int x"}]}"#,
        r#"{"contents": null}"#,
        r#"{"contents": [], "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}"#,
    ] {
        reply::<HoverRequest>(wire).unwrap_or_else(|e| panic!("{wire}: {e}"));
    }
    let e = says(reply::<HoverRequest>(r#"{"contents": 7}"#));
    assert!(e.contains("textDocument/hover reply is malformed"), "{e}");
}

#[test]
fn document_symbols_hierarchical_or_flat() {
    let nested = format!(
        r#"[{{"name": "C", "kind": 5, "range": {RANGE}, "selectionRange": {RANGE},
            "children": [{{"name": "m", "kind": 6, "range": {RANGE}}}]}}]"#
    );
    let got = reply::<DocumentSymbols>(&nested).unwrap();
    assert_eq!(got[0].children()[0].name(), "m");
    assert_eq!(
        got[0].name_start(),
        Some(Position {
            line: 1,
            character: 2
        })
    );
    let flat = format!(
        r#"[{{"name": "f", "kind": 12, "containerName": "mod",
            "location": {{"uri": "file:///a.py", "range": {RANGE}}}}}]"#
    );
    let got = reply::<DocumentSymbols>(&flat).unwrap();
    assert_eq!(
        (got[0].container(), got[0].whole_range()),
        (Some("mod"), None)
    );
    assert!(reply::<DocumentSymbols>("null").unwrap().is_empty());
    // A WorkspaceSymbol may have a location without a range.
    let ws = reply::<WorkspaceSymbols>(
        r#"[{"name": "f", "kind": 12, "location": {"uri": "file:///a.py"}}]"#,
    )
    .unwrap();
    assert_eq!(ws[0].location.range, None);
    let e = says(reply::<DocumentSymbols>(&format!(
        r#"[{{"name": "f", "range": {RANGE}}}]"#
    )));
    assert!(e.contains("missing field `kind`"), "{e}");
    let e = says(reply::<DocumentSymbols>(r#"[{"name": "f", "kind": 12}]"#));
    assert!(e.contains("missing field `range` (or `location`)"), "{e}");
}

#[test]
fn a_workspace_edit_in_either_form() {
    let edits = |text: &str| format!(r#"[{{"range": {RANGE}, "newText": "{text}"}}]"#);
    let changes = format!(
        r#"{{"changes": {{"file:///z.py": {}, "file:///a.py": {}}}}}"#,
        edits("z"),
        edits("a")
    );
    let got = reply::<Rename>(&changes).unwrap().unwrap();
    // serde_json keeps an object's order only with `preserve_order`; either way the edit is
    // planned in the order the reply was read in.
    assert_eq!(got.changes.iter().flatten().count(), 2);
    let ops = format!(
        r#"{{"documentChanges": [
            {{"textDocument": {{"uri": "file:///a.py", "version": 3}}, "edits": {}}},
            {{"kind": "rename", "oldUri": "file:///a.py", "newUri": "file:///b.py", "options": {{"overwrite": true}}}},
            {{"kind": "create", "uri": "file:///c.py"}},
            {{"kind": "delete", "uri": "file:///d.py"}}
        ]}}"#,
        edits("x")
    );
    let ops = reply::<Rename>(&ops)
        .unwrap()
        .unwrap()
        .document_changes
        .unwrap();
    assert!(matches!(&ops[0], DocumentChange::Edit(e) if e.edits[0].new_text == "x"));
    assert!(
        matches!(&ops[1], DocumentChange::File(f @ FileOperation::Rename { .. }) if f.overwrites())
    );
    assert!(reply::<Rename>("null").unwrap().is_none());
    let e = says(reply::<Rename>(
        r#"{"documentChanges": [{"kind": "move", "uri": "file:///a"}]}"#,
    ));
    assert!(e.contains("unknown file operation `move`"), "{e}");
    let e = says(reply::<Rename>(
        r#"{"documentChanges": [{"kind": "rename", "oldUri": "file:///a"}]}"#,
    ));
    assert!(e.contains("missing field `newUri`"), "{e}");
}

#[test]
fn diagnostics_keep_what_they_do_not_declare() {
    let d = format!(
        r#"{{"range": {RANGE}, "severity": 2, "code": "E1", "message": "m",
            "data": {{"fix": 1}}, "tags": [1]}}"#
    );
    let p = notification::<PublishDiagnostics>(&format!(
        r#"{{"uri": "file:///a.py", "version": null, "diagnostics": [{d}]}}"#
    ))
    .unwrap();
    assert_eq!(p.version, None);
    // Sent back with a code action as it came.
    assert_eq!(
        serde_json::to_value(&p.diagnostics[0]).unwrap(),
        serde_json::from_str::<Value>(&d).unwrap()
    );
    let pulled = reply::<DocumentDiagnostic>(&format!(
        r#"{{"kind": "full", "items": [{d}], "resultId": "1"}}"#
    ))
    .unwrap();
    assert!(matches!(pulled, DocumentDiagnosticReport::Full { items } if items.len() == 1));
    assert_eq!(
        reply::<DocumentDiagnostic>(r#"{"kind": "unchanged", "resultId": "1"}"#).unwrap(),
        DocumentDiagnosticReport::Unchanged {}
    );
}

#[test]
fn capabilities_are_read_leniently() {
    let caps = reply::<Initialize>(
        r#"{"capabilities": {
            "positionEncoding": "utf-8",
            "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": true}},
            "hoverProvider": true, "definitionProvider": {"workDoneProgress": true},
            "referencesProvider": false, "renameProvider": {"prepareProvider": true},
            "executeCommandProvider": {"commands": ["typescript.tsserverRequest"]},
            "diagnosticProvider": null, "somethingNew": {"x": 1}
        }}"#,
    )
    .unwrap();
    let c = &caps.capabilities;
    assert!(c.save_includes_text() && c.prepares_rename());
    assert!(c.runs_command(TSSERVER_REQUEST));
    assert_eq!(HoverRequest::offered(c), Some(true));
    assert_eq!(Definition::offered(c), Some(true));
    assert_eq!(References::offered(c), Some(false));
    assert_eq!(DocumentDiagnostic::offered(c), None);
    let kind_only =
        reply::<Initialize>(r#"{"capabilities": {"textDocumentSync": 2, "renameProvider": true}}"#)
            .unwrap()
            .capabilities;
    assert!(!kind_only.save_includes_text() && !kind_only.prepares_rename());
}

#[test]
fn progress_tokens_and_server_requests() {
    let p = notification::<Progress>(
        r#"{"token": 7, "value": {"kind": "begin", "title": "Indexing"}}"#,
    )
    .unwrap();
    assert_eq!(
        (p.token.key(), p.value),
        ("7".to_string(), WorkDoneProgress::Begin {})
    );
    let c = request::<Configuration>(r#"{"items": [{"section": "python.analysis"}, {}]}"#).unwrap();
    assert_eq!(c.items[0].section.as_deref(), Some("python.analysis"));
    assert!(request::<WorkspaceFolders>("null").is_ok());
    let e = request::<RegisterCapability>(r#"{"registrations": [{"id": "1"}]}"#).unwrap_err();
    assert_eq!(e.method, "client/registerCapability");
    assert!(e.to_string().contains("missing field `method`"), "{e}");
}
