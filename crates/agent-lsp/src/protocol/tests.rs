//! The lenient shapes real servers send, and the errors a shape nobody sends gives.

use super::*;
use agent_rpc::Request;
use serde_json::json;

fn reply<R: Request>(v: Value) -> Result<R::Result, String> {
    agent_rpc::request::reply::<R>(v).map_err(|e| e.to_string())
}

fn range(l: u32, c: u32) -> Value {
    json!({"start": {"line": l, "character": c}, "end": {"line": l, "character": c + 1}})
}

#[test]
fn a_definition_is_null_one_location_or_links() {
    let one = json!({"uri": "file:///a.py", "range": range(1, 2)});
    let link = json!({"targetUri": "file:///b.py", "targetRange": range(0, 0),
                      "targetSelectionRange": range(3, 4)});
    // pyrefly: a bare Location; pyright: Location[]; ty: LocationLink[].
    for (v, n) in [
        (Value::Null, 0),
        (one.clone(), 1),
        (json!([one.clone(), one.clone()]), 2),
        (json!([link.clone()]), 1),
        (json!([]), 0),
    ] {
        assert_eq!(reply::<Definition>(v).unwrap().0.len(), n);
    }
    let l = &reply::<Definition>(json!([link])).unwrap().0[0];
    assert_eq!((l.uri(), l.start()), ("file:///b.py", Position { line: 3, character: 4 }));
    let e = reply::<Definition>(json!([one, {"uri": "file:///c.py"}])).unwrap_err();
    assert!(
        e.contains("textDocument/definition reply is malformed: location 1: missing field `range`"),
        "{e}"
    );
    let e = reply::<References>(json!("file:///a.py")).unwrap_err();
    assert!(e.contains("expected a Location"), "{e}");
}

#[test]
fn hover_contents_of_every_shape() {
    for v in [
        json!(null),
        json!({"contents": "plain"}),
        json!({"contents": {"kind": "markdown", "value": "**md**"}}),
        json!({"contents": {"language": "python", "value": "def f()"}}),
        json!({"contents": ["a", {"language": "c", "value": "int x"}]}),
        json!({"contents": null}),
        json!({"contents": [], "range": range(0, 0)}),
    ] {
        reply::<HoverRequest>(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
    }
    let e = reply::<HoverRequest>(json!({"contents": 7})).unwrap_err();
    assert!(e.contains("textDocument/hover reply is malformed"), "{e}");
}

#[test]
fn document_symbols_hierarchical_or_flat() {
    let nested = json!([{"name": "C", "kind": 5, "range": range(0, 0), "selectionRange": range(0, 6),
        "children": [{"name": "m", "kind": 6, "range": range(1, 0), "selectionRange": range(1, 8)}]}]);
    let got = reply::<DocumentSymbols>(nested).unwrap();
    assert_eq!(got[0].children()[0].name(), "m");
    assert_eq!(got[0].name_start(), Some(Position { line: 0, character: 6 }));
    let flat = json!([{"name": "f", "kind": 12, "containerName": "mod",
        "location": {"uri": "file:///a.py", "range": range(2, 4)}}]);
    let got = reply::<DocumentSymbols>(flat).unwrap();
    assert_eq!((got[0].container(), got[0].whole_range()), (Some("mod"), None));
    assert!(reply::<DocumentSymbols>(Value::Null).unwrap().is_empty());
    // A WorkspaceSymbol may have a location without a range.
    let ws = reply::<WorkspaceSymbols>(json!([{"name": "f", "kind": 12, "location": {"uri": "file:///a.py"}}]))
        .unwrap();
    assert_eq!(ws[0].location.range, None);
    let e = reply::<DocumentSymbols>(json!([{"name": "f", "range": range(0, 0)}])).unwrap_err();
    assert!(e.contains("missing field `kind`"), "{e}");
}

#[test]
fn a_workspace_edit_keeps_the_servers_order() {
    let edit = |uri: &str| json!([{"range": range(0, 0), "newText": uri}]);
    let v = json!({"changes": {"file:///z.py": edit("z"), "file:///a.py": edit("a")}});
    let got = reply::<Rename>(v).unwrap().unwrap();
    let order: Vec<&str> = got
        .changes
        .iter()
        .flatten()
        .map(|(u, _)| u.as_str())
        .collect();
    // serde_json keeps an object's order only with `preserve_order`; either way it is the
    // order the reply was read in.
    assert_eq!(order.len(), 2);
    let ops = json!({"documentChanges": [
        {"textDocument": {"uri": "file:///a.py", "version": 3}, "edits": edit("x")},
        {"kind": "rename", "oldUri": "file:///a.py", "newUri": "file:///b.py", "options": {"overwrite": true}},
        {"kind": "create", "uri": "file:///c.py"},
        {"kind": "delete", "uri": "file:///d.py"},
    ]});
    let got = reply::<Rename>(ops).unwrap().unwrap();
    let ops = got.document_changes.unwrap();
    assert!(matches!(&ops[0], DocumentChange::Edit(e) if e.edits[0].new_text == "x"));
    assert!(matches!(&ops[1], DocumentChange::File(f @ FileOperation::Rename { .. }) if f.overwrites()));
    assert!(reply::<Rename>(Value::Null).unwrap().is_none());
    let e = reply::<Rename>(json!({"documentChanges": [{"kind": "move", "uri": "file:///a"}]}))
        .unwrap_err();
    assert!(e.contains("unknown variant `move`"), "{e}");
}

#[test]
fn diagnostics_keep_what_they_do_not_declare() {
    let d = json!({"range": range(0, 1), "severity": 2, "code": "E1", "message": "m",
        "data": {"fix": 1}, "tags": [1]});
    let p: PublishDiagnosticsParams = agent_rpc::request::notification::<PublishDiagnostics>(
        json!({"uri": "file:///a.py", "version": null, "diagnostics": [d.clone()]}),
    )
    .unwrap();
    assert_eq!(p.version, None);
    // Sent back with a code action as it came.
    assert_eq!(serde_json::to_value(&p.diagnostics[0]).unwrap(), d);
    let pulled = reply::<DocumentDiagnostic>(json!({"kind": "full", "items": [d], "resultId": "1"}))
        .unwrap();
    assert!(matches!(pulled, DocumentDiagnosticReport::Full { items } if items.len() == 1));
    assert_eq!(
        reply::<DocumentDiagnostic>(json!({"kind": "unchanged", "resultId": "1"})).unwrap(),
        DocumentDiagnosticReport::Unchanged {}
    );
}

#[test]
fn capabilities_are_read_leniently() {
    let caps: InitializeResult = serde_json::from_value(json!({"capabilities": {
        "positionEncoding": "utf-8",
        "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": true}},
        "hoverProvider": true, "definitionProvider": {"workDoneProgress": true},
        "referencesProvider": false, "renameProvider": {"prepareProvider": true},
        "executeCommandProvider": {"commands": ["typescript.tsserverRequest"]},
        "diagnosticProvider": null, "somethingNew": {"x": 1}
    }}))
    .unwrap();
    let c = &caps.capabilities;
    assert!(c.save_includes_text() && c.prepares_rename());
    assert!(c.runs_command(TSSERVER_REQUEST));
    assert_eq!(HoverRequest::offered(c), Some(true));
    assert_eq!(Definition::offered(c), Some(true));
    assert_eq!(References::offered(c), Some(false));
    assert_eq!(DocumentDiagnostic::offered(c), None);
    let kind_only: ServerCapabilities =
        serde_json::from_value(json!({"textDocumentSync": 2, "renameProvider": true})).unwrap();
    assert!(!kind_only.save_includes_text() && !kind_only.prepares_rename());
}

#[test]
fn progress_tokens_and_server_requests() {
    let p = agent_rpc::request::notification::<Progress>(
        json!({"token": 7, "value": {"kind": "begin", "title": "Indexing"}}),
    )
    .unwrap();
    assert_eq!((p.token.key(), p.value), ("7".to_string(), WorkDoneProgress::Begin {}));
    let c = incoming::<Configuration>(json!({"items": [{"section": "python.analysis"}, {}]})).unwrap();
    assert_eq!(c.items[0].section.as_deref(), Some("python.analysis"));
    assert!(incoming::<WorkspaceFolders>(Value::Null).is_ok());
    let e = incoming::<RegisterCapability>(json!({"registrations": [{"id": "1"}]})).unwrap_err();
    assert_eq!(e.method, "client/registerCapability");
    assert!(e.to_string().contains("missing field `method`"), "{e}");
}
