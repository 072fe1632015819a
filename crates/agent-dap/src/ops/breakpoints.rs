//! `breakpoints`: replace a file's breakpoints — kept for every later session, and set in the
//! live one at once.

use super::render::breakpoint_lines;
use crate::DapError;
use crate::session::{breakpoint_list, set_breakpoints_args};
use crate::state::lock;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use agent_tier::workspace::confine_existing;
use serde_json::json;

pub(super) async fn run(
    sup: &Supervisor,
    file: &str,
    mut lines: Vec<u32>,
) -> Result<ToolOutput, DapError> {
    let path = confine_existing(&sup.root, "file", file)?;
    lines.sort_unstable();
    lines.dedup();
    {
        let mut map = lock(&sup.breakpoints);
        if lines.is_empty() {
            map.remove(&path);
        } else {
            map.insert(path.clone(), lines.clone());
        }
    }
    let shown = sup.shown(&path);
    let session = match sup.current().await {
        Some(s) if s.check_live().is_ok() => Some(s),
        _ => None,
    };
    let Some(s) = session else {
        let text = if lines.is_empty() {
            format!("cleared the breakpoints of {shown}; no session is running")
        } else {
            format!(
                "{} breakpoint(s) in {shown} (lines {}) will be set when the session launches",
                lines.len(),
                lines
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Ok(ToolOutput::text(text)
            .with_structured(json!({"file": shown, "lines": lines, "pending": true})));
    };
    let body = s
        .request("setBreakpoints", set_breakpoints_args(&path, &lines))
        .await?;
    if lines.is_empty() {
        return Ok(
            ToolOutput::text(format!("cleared the breakpoints of {shown}"))
                .with_structured(json!({"file": shown, "lines": [], "pending": false})),
        );
    }
    let (list, rows) = breakpoint_lines(sup, &path, &lines, &breakpoint_list(&body));
    Ok(ToolOutput::text(format!("breakpoints in {shown}:{list}"))
        .with_structured(json!({"file": shown, "breakpoints": rows, "pending": false})))
}
