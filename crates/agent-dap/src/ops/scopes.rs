//! `scopes`: a frame's scopes (locals, globals, registers…), each with a reference.

use super::inspect::{check_frame, listed, require_stopped};
use crate::DapError;
use crate::args::Op;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::{Value, json};
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor, frame: i64) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Scopes.name())?;
    check_frame(sup, &s, frame).await?;
    let scopes = listed(&s, "scopes", json!({"frameId": frame}), "scopes").await?;
    let mut text = format!("scopes of frame {frame}:");
    let mut rows = Vec::new();
    let mut known = s.known();
    for sc in &scopes {
        let name = sc.get("name").and_then(Value::as_str).unwrap_or("?");
        let r = sc
            .get("variablesReference")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if r > 0 {
            known.refs.insert(r);
        }
        let count = sc
            .get("namedVariables")
            .and_then(Value::as_i64)
            .map(|n| format!(", {n} variable(s)"))
            .unwrap_or_default();
        let expensive = if sc.get("expensive").and_then(Value::as_bool) == Some(true) {
            ", expensive"
        } else {
            ""
        };
        let _ = write!(text, "\n- {name}: reference {r}{count}{expensive}");
        rows.push(json!({"name": name, "reference": r}));
    }
    Ok(ToolOutput::text(text).with_structured(json!({"frame_id": frame, "scopes": rows})))
}
