//! `scopes`: a frame's scopes (locals, globals, registers…), each with a reference.

use super::inspect::{check_frame, require_stopped, scopes};
use crate::DapError;
use crate::args::Op;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor, frame: i64) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Scopes.name())?;
    check_frame(sup, &s, frame).await?;
    let scopes = scopes(&s, frame).await?;
    let mut text = format!("scopes of frame {frame}:");
    let mut rows = Vec::new();
    for sc in &scopes {
        let name = &sc.name;
        let r = sc.variables_reference;
        let count = sc
            .named_variables
            .map(|n| format!(", {n} variable(s)"))
            .unwrap_or_default();
        let expensive = if sc.expensive { ", expensive" } else { "" };
        let _ = write!(text, "\n- {name}: reference {r}{count}{expensive}");
        rows.push(json!({"name": name, "reference": r}));
    }
    Ok(ToolOutput::text(text).with_structured(json!({"frame_id": frame, "scopes": rows})))
}
