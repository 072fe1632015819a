//! `breakpoints`: replace a file's breakpoints, or the function breakpoints — kept for every
//! later session, and set in the live one at once.

use super::render::{breakpoint_lines, function_lines};
use crate::DapError;
use crate::args::BreakpointOptions;
use crate::session::{
    FileBreakpoints, FunctionBreakpoints, Session, breakpoint_list, set_breakpoints_args,
    set_function_breakpoints_args,
};
use crate::state::lock;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use agent_tier::workspace::confine_existing;
use serde_json::json;

pub(super) async fn run(
    sup: &Supervisor,
    file: &str,
    mut lines: Vec<u32>,
    options: BreakpointOptions,
) -> Result<ToolOutput, DapError> {
    let path = confine_existing(&sup.root, "file", file)?;
    lines.sort_unstable();
    lines.dedup();
    {
        let mut map = lock(&sup.breakpoints);
        if lines.is_empty() {
            map.remove(&path);
        } else {
            map.insert(
                path.clone(),
                FileBreakpoints {
                    lines: lines.clone(),
                    options: options.clone(),
                },
            );
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
        .request(
            "setBreakpoints",
            set_breakpoints_args(&path, &lines, &options),
        )
        .await?;
    if lines.is_empty() {
        return Ok(
            ToolOutput::text(format!("cleared the breakpoints of {shown}"))
                .with_structured(json!({"file": shown, "lines": [], "pending": false})),
        );
    }
    let (list, rows) = breakpoint_lines(sup, &path, &lines, &breakpoint_list(&body));
    let note = unsupported_note(&s, &options);
    Ok(
        ToolOutput::text(format!("breakpoints in {shown}:{list}{note}"))
            .with_structured(json!({"file": shown, "breakpoints": rows, "pending": false})),
    )
}

/// Replace the function breakpoints (resolved by the adapter's `setFunctionBreakpoints`).
pub(super) async fn functions(
    sup: &Supervisor,
    names: Vec<String>,
    options: BreakpointOptions,
) -> Result<ToolOutput, DapError> {
    let session = match sup.current().await {
        Some(s) if s.check_live().is_ok() => Some(s),
        _ => None,
    };
    if let Some(s) = &session
        && !s.supports("supportsFunctionBreakpoints")
    {
        return Err(DapError::Unsupported {
            adapter: s.adapter.name(),
            what: "function breakpoints",
            instead: "set `file` and `lines` instead",
        });
    }
    let set = FunctionBreakpoints {
        names: names.clone(),
        options: options.clone(),
    };
    *lock(&sup.functions) = set.clone();
    let Some(s) = session else {
        let text = if names.is_empty() {
            "cleared the function breakpoints; no session is running".to_string()
        } else {
            format!(
                "function breakpoint(s) {} will be set when the session launches",
                names.join(", ")
            )
        };
        return Ok(
            ToolOutput::text(text).with_structured(json!({"functions": names, "pending": true}))
        );
    };
    let body = s
        .request(
            "setFunctionBreakpoints",
            set_function_breakpoints_args(&set),
        )
        .await?;
    if names.is_empty() {
        return Ok(ToolOutput::text("cleared the function breakpoints")
            .with_structured(json!({"functions": [], "pending": false})));
    }
    let (list, rows) = function_lines(sup, &names, &breakpoint_list(&body));
    let note = unsupported_note(&s, &options);
    Ok(
        ToolOutput::text(format!("function breakpoints:{list}{note}"))
            .with_structured(json!({"function_breakpoints": rows, "pending": false})),
    )
}

/// The options asked for that the live adapter does not advertise.
/// The line a breakpoint result ends with when the adapter cannot honour some options.
fn unsupported_note(s: &Session, options: &BreakpointOptions) -> String {
    let unsupported = unsupported(s, options);
    if unsupported.is_empty() {
        String::new()
    } else {
        format!(
            "\nthis adapter does not support {}; it is ignored",
            unsupported.join(", ")
        )
    }
}

fn unsupported(s: &Session, options: &BreakpointOptions) -> Vec<&'static str> {
    let caps = lock(&s.capabilities);
    let has = |cap: &str| caps.get(cap).and_then(serde_json::Value::as_bool) == Some(true);
    let mut out = Vec::new();
    if options.condition.is_some() && !has("supportsConditionalBreakpoints") {
        out.push("condition");
    }
    if options.hit_count.is_some() && !has("supportsHitConditionalBreakpoints") {
        out.push("hit_count");
    }
    if options.log_message.is_some() && !has("supportsLogPoints") {
        out.push("log_message");
    }
    out
}
