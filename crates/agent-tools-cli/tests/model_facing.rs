//! What a model sees of the host: the routing instructions and the tools' annotations, which
//! follow what each tool does rather than its tier alone.

#![allow(clippy::unwrap_used)]

mod common;

use common::Client;
use serde_json::{Value, json};

#[test]
fn instructions_route_and_annotations_follow_effects() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &["--vibe"]);
    let init = c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let text = init["result"]["instructions"].as_str().unwrap();
    for route in [
        "read (numbered lines",
        "ast_grep",
        "lsp with line + symbol",
        "apply_patch",
        "ask_user is the only way",
        "Diagnostics appended to a write are information",
    ] {
        assert!(text.contains(route), "{route} missing from:\n{text}");
    }
    // About 200 tokens at most (4 characters a token).
    assert!(text.len() <= 1000, "{} characters", text.len());

    let list = c.rpc(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let hints = |name: &str| -> Value {
        tools.iter().find(|t| t["name"] == name).unwrap()["annotations"].clone()
    };
    let h = |name: &str, key: &str| hints(name)[key].as_bool().unwrap();
    assert!(h("read", "readOnlyHint") && h("read", "idempotentHint"));
    assert!(h("ast_grep", "idempotentHint"));
    // They start and stop processes although they are read-tier.
    assert!(!h("vibe_spawn", "readOnlyHint") && h("vibe_spawn", "openWorldHint"));
    assert!(!h("vibe_kill", "readOnlyHint") && h("vibe_kill", "destructiveHint"));
    assert!(h("vibe_list", "readOnlyHint"));
    // `%pip` and `!cmd` reach the network.
    assert!(h("eval", "openWorldHint") && h("debug", "openWorldHint"));
    assert!(h("write", "destructiveHint") && !h("write", "readOnlyHint"));
}
