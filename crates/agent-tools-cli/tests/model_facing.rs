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
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let text = init["result"]["instructions"].as_str().unwrap();
    for route in [
        "Look at a file: read",
        "ast_grep",
        "by meaning (definitions, references, types): lsp",
        "apply_patch",
        "ask_user, never a chat message",
        "Diagnostics after a write are information",
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

/// The first calls a model naturally makes, each as it would write it: every one succeeds, or
/// fails for a reason that is not the spelling of its arguments.
#[test]
fn natural_first_calls_succeed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "print(1)\nx = 2\n").unwrap();
    std::fs::write(dir.path().join("b.js"), "print(3);\n").unwrap();
    let call = |tool: &str, args: Value| {
        let out = std::process::Command::new(common::BIN)
            .args(["call", tool, &args.to_string(), "--root"])
            .arg(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let cases = [
        ("read", json!({"file": "a.py", "offset": 2}), "2| x = 2"),
        ("lsp", json!({"op": "status"}), ""),
        ("lsp", json!({"operation": "status", "path": "a.py"}), ""),
        ("debug", json!({"operation": "adapters"}), "debugpy"),
        // A directory without `language`: every language present that accepts the pattern.
        (
            "ast_grep",
            json!({"pattern": "print($X)"}),
            "2 matches in 2 files",
        ),
        (
            "ast_grep",
            json!({"pattern": "print($X)", "path": "*.py"}),
            "1 match in 1 file",
        ),
        (
            "eval",
            json!({"code": "1 + 1", "label": "add two numbers"}),
            "`description` has 3 word(s)",
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 2\n+x = 3\n*** End Patch\n"}),
            "patched 1 file(s): a.py",
        ),
    ];
    for (tool, args, expect) in cases {
        let (code, text) = call(tool, args.clone());
        assert_eq!(code, Some(0), "{tool} {args}: {text}");
        assert!(text.contains(expect), "{tool} {args}: {text}");
    }
    // A bare question is a valid call: with nobody at a terminal it fails closed, not on its
    // arguments.
    let (code, text) = call("ask_user", json!({"question": "Which database?"}));
    assert_eq!(code, Some(1), "{text}");
    assert!(!text.contains("invalid arguments"), "{text}");
}
