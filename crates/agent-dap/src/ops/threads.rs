//! `threads`: the debuggee's thread ids and names.

use crate::DapError;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::{Value, json};
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    let body = s.request("threads", json!({})).await?;
    let threads = body
        .get("threads")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut text = format!("{} thread(s):", threads.len());
    for t in &threads {
        let _ = write!(
            text,
            "\n- {}: {}",
            t.get("id").and_then(Value::as_i64).unwrap_or(0),
            t.get("name").and_then(Value::as_str).unwrap_or("")
        );
    }
    Ok(ToolOutput::text(text).with_structured(json!({"threads": threads})))
}
