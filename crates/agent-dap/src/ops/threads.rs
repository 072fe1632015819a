//! `threads`: the debuggee's thread ids and names.

use super::inspect::threads;
use crate::DapError;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    let threads = threads(&s).await?;
    let mut text = format!("{} thread(s):", threads.len());
    let mut rows = Vec::new();
    for t in &threads {
        let _ = write!(text, "\n- {}: {}", t.id, t.name);
        rows.push(json!({"id": t.id, "name": t.name}));
    }
    Ok(ToolOutput::text(text).with_structured(json!({"threads": rows})))
}
