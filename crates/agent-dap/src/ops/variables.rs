//! `variables`: the children of a reference handed out since the last stop, at most
//! `MAX_CHILDREN`, each value capped.

use super::inspect::{require_stopped, variables};
use super::limits::MAX_CHILDREN;
use super::render::variable_row;
use crate::DapError;
use crate::args::Op;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor, reference: i64) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Variables.name())?;
    {
        let known = s.known();
        if !known.refs.contains(&reference) {
            let list = known
                .refs
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(DapError::Unknown {
                what: format!(
                    "unknown reference {reference}; references are valid until the program moves and come from `scopes`, `variables` or `evaluate`. Known now: {}",
                    if list.is_empty() {
                        "none (call `scopes` first)".to_string()
                    } else {
                        list
                    }
                ),
            });
        }
    }
    let vars = variables(&s, reference).await?;
    let mut text = format!("{} variable(s) in reference {reference}:", vars.len());
    let mut rows = Vec::new();
    for v in vars.iter().take(MAX_CHILDREN) {
        let (line, row) = variable_row(&s, v);
        let _ = write!(text, "\n- {line}");
        rows.push(row);
    }
    if vars.len() > MAX_CHILDREN {
        let _ = write!(text, "\n… {} more not shown", vars.len() - MAX_CHILDREN);
    }
    Ok(ToolOutput::text(text).with_structured(json!({
        "reference": reference, "variables": rows, "not_shown": vars.len().saturating_sub(MAX_CHILDREN),
    })))
}
