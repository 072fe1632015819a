//! Progress over MCP: a tool's own messages become `notifications/progress` (with the client's
//! token and an increasing `progress`) while the call runs, before its result.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};

#[test]
fn eval_reports_its_output_so_far_before_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path(), &[]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "eval",
            "arguments": {
                "description": "print two lines with a pause",
                "code": "import time\nprint('first')\ntime.sleep(1.5)\nprint('second')",
            },
            "_meta": {"progressToken": "cell"},
        }}),
    );
    let (resp, notes) = c.until(2);
    let text = resp["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert_eq!(resp["result"]["isError"], false, "{resp}");
    assert!(text.contains("first") && text.contains("second"), "{text}");
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        progress
            .iter()
            .all(|n| n["params"]["progressToken"] == "cell"),
        "{progress:#?}"
    );
    let steps: Vec<f64> = progress
        .iter()
        .filter_map(|n| n["params"]["progress"].as_f64())
        .collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {steps:?}"
    );
    // While the cell slept, the client already had its first line.
    assert!(
        progress.iter().any(|n| {
            let m = n["params"]["message"].as_str().unwrap_or("");
            m.contains("first") && !m.contains("second")
        }),
        "{progress:#?}"
    );
}
