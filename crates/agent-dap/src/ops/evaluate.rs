//! `evaluate`: an expression in a frame's own scope (default: the top frame).

use super::inspect::{check_frame, require_stopped, top_frame};
use super::render::variable_row;
use crate::DapError;
use crate::args::Op;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::{Value, json};

pub(super) async fn run(
    sup: &Supervisor,
    expression: &str,
    frame_id: Option<i64>,
) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Evaluate.name())?;
    let frame = match frame_id {
        Some(f) => {
            check_frame(sup, &s, f).await?;
            f
        }
        None => top_frame(sup, &s).await?,
    };
    let context = s.adapter.adapter().evaluate_context();
    let body = s
        .request(
            "evaluate",
            json!({"expression": expression, "frameId": frame, "context": context}),
        )
        .await?;
    let result = body.get("result").and_then(Value::as_str).unwrap_or("");
    let row = json!({
        "name": expression,
        "value": result,
        "type": body.get("type"),
        "variablesReference": body.get("variablesReference"),
    });
    let (line, structured) = variable_row(&s, &row);
    Ok(ToolOutput::text(format!("in frame {frame}: {line}")).with_structured(structured))
}
