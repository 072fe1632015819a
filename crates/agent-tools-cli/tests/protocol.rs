//! Every protocol revision `rmcp` knows is negotiated: each `initialize` revision is answered
//! with itself, an unknown one with a revision the host speaks, and the 2026-07-28 revision
//! (no `initialize`; each request carries its version and capabilities in `_meta`) is served too;
//! approvals reach the operator through elicitation.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::json;

#[test]
fn every_initialize_revision_is_answered_with_itself() {
    let dir = tempfile::tempdir().unwrap();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = Client::start(dir.path(), &[]);
        let init = c.rpc(
            1,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        let list = c.rpc(2, "tools/list", json!({}));
        assert!(
            list["result"]["tools"].as_array().unwrap().len() > 3,
            "{list}"
        );
    }
    let mut c = Client::start(dir.path(), &[]);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let agreed = init["result"]["protocolVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(agreed.as_str() >= "2025-11-25", "{init}");
}

#[test]
fn the_stateless_revision_is_served_per_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut c = Client::start(dir.path(), &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    });
    let read = c.rpc(
        1,
        "tools/call",
        json!({"name": "read", "arguments": {"path": "a.txt"}, "_meta": meta}),
    );
    assert_eq!(read["result"]["isError"], false, "{read}");
    assert_eq!(read["result"]["resultType"], "complete", "{read}");
    assert!(
        read["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("1| alpha"),
        "{read}"
    );
    #[cfg(feature = "ask")]
    {
        // A server may not send requests on this revision: asking a person fails closed at once.
        let ask = c.rpc(
            2,
            "tools/call",
            json!({"name": "ask_user", "arguments": {"question": "Proceed?", "options": [{"label": "yes"}, {"label": "no"}]}, "_meta": meta}),
        );
        assert_eq!(ask["result"]["isError"], true, "{ask}");
    }
}

/// `--approval write` under `serve`: the operator is asked through MCP elicitation; approve runs
/// the call, decline refuses it and nothing is written.
#[cfg(feature = "ask")]
#[test]
fn approvals_go_through_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &["--approval", "write"]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    for (id, answer, file) in [(2, "decline", "no.txt"), (3, "approve", "yes.txt")] {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "write", "arguments": {"path": file, "content": "x"}}}));
        let req = c.until_method("elicitation/create");
        assert!(
            req["params"]["message"]
                .as_str()
                .unwrap()
                .contains("`write`"),
            "{req}"
        );
        c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept", "content": {"choice": answer}}}));
        let (resp, _) = c.until(id);
        assert_eq!(resp["result"]["isError"], answer == "decline", "{resp}");
        assert_eq!(
            dir.path().join(file).exists(),
            answer == "approve",
            "{resp}"
        );
    }
}
