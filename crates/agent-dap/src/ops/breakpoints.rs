//! `breakpoints`: replace a file's breakpoints, or the function breakpoints — kept for every
//! later session, and set in the live one at once.

use super::render::{breakpoint_lines, function_lines};
use crate::DapError;
use crate::args::BreakpointOptions;
use crate::breakpoints::{
    FileBreakpoints, FunctionBreakpoints, Placed, place, placed_in, placed_results,
    set_breakpoints_args, set_function_breakpoints_args,
};
use crate::protocol::{SetBreakpoints, SetFunctionBreakpoints};
use crate::session::Session;
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
    let path = confine_existing(&sup.root, "path", file)?;
    lines.sort_unstable();
    lines.dedup();
    {
        let mut map = sup.breakpoints.lock();
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
    let own = FileBreakpoints {
        lines: lines.clone(),
        options: options.clone(),
    };
    let placed = sup.placed.lock().clone();
    let function_options = sup.functions.lock().options.clone();
    let body = s
        .call::<SetBreakpoints>(&set_breakpoints_args(
            &path,
            Some(&own),
            &placed_in(&placed, &path),
            &function_options,
        ))
        .await?;
    if lines.is_empty() {
        return Ok(
            ToolOutput::text(format!("cleared the breakpoints of {shown}"))
                .with_structured(json!({"file": shown, "lines": [], "pending": false})),
        );
    }
    let mut answers = body.breakpoints.0;
    answers.truncate(lines.len());
    let (list, rows) = breakpoint_lines(sup, &path, &lines, &answers);
    let note = unsupported_note(&s, &options);
    Ok(
        ToolOutput::text(format!("breakpoints in {shown}:{list}{note}"))
            .with_structured(json!({"file": shown, "breakpoints": rows, "pending": false})),
    )
}

/// Replace the function breakpoints: by the adapter's `setFunctionBreakpoints`, or placed by
/// the language servers' definitions when the live adapter has none.
pub(super) async fn functions(
    sup: &Supervisor,
    names: Vec<String>,
    options: BreakpointOptions,
) -> Result<ToolOutput, DapError> {
    let session = match sup.current().await {
        Some(s) if s.check_live().is_ok() => Some(s),
        _ => None,
    };
    let set = FunctionBreakpoints {
        names: names.clone(),
        options: options.clone(),
    };
    *sup.functions.lock() = set.clone();
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
    if !s.capabilities().supports_function_breakpoints {
        return placed_functions(sup, &s, &set).await;
    }
    let body = s
        .call::<SetFunctionBreakpoints>(&set_function_breakpoints_args(&set))
        .await?;
    if names.is_empty() {
        return Ok(ToolOutput::text("cleared the function breakpoints")
            .with_structured(json!({"functions": [], "pending": false})));
    }
    let (list, rows) = function_lines(sup, &names, &body.breakpoints.0);
    let note = unsupported_note(&s, &options);
    Ok(
        ToolOutput::text(format!("function breakpoints:{list}{note}"))
            .with_structured(json!({"function_breakpoints": rows, "pending": false})),
    )
}

/// Function breakpoints for a live adapter without them: each name placed on the first line of
/// its one definition's body; every file whose placed lines change is set again (with its own
/// lines first).
async fn placed_functions(
    sup: &Supervisor,
    s: &Session,
    set: &FunctionBreakpoints,
) -> Result<ToolOutput, DapError> {
    let near = Some(sup.root.join(&s.target)).filter(|p| p.is_file());
    let locator = sup.locator();
    let placement = place(
        locator.as_deref(),
        near.as_deref(),
        &sup.root,
        &set.names,
        s.adapter.name(),
    )
    .await;
    let before: Vec<Placed> = std::mem::replace(&mut *sup.placed.lock(), placement.placed.clone());
    let mut files: Vec<_> = before.iter().map(|p| p.path.clone()).collect();
    for p in &placement.placed {
        if !files.contains(&p.path) {
            files.push(p.path.clone());
        }
    }
    let own_sets = sup.breakpoints.lock().clone();
    let mut answers = Vec::new();
    for file in files {
        let own = own_sets.get(&file);
        let here = placed_in(&placement.placed, &file);
        let mut list = s
            .call::<SetBreakpoints>(&set_breakpoints_args(&file, own, &here, &set.options))
            .await?
            .breakpoints
            .0;
        let theirs = list.split_off(own.map_or(0, |o| o.lines.len()).min(list.len()));
        answers.extend(here.into_iter().cloned().zip(theirs));
    }
    if set.names.is_empty() {
        return Ok(ToolOutput::text("cleared the function breakpoints")
            .with_structured(json!({"functions": [], "pending": false})));
    }
    let results = placed_results(&set.names, &placement, &answers);
    let (list, rows) = function_lines(sup, &set.names, &results);
    let note = unsupported_note(s, &set.options);
    Ok(ToolOutput::text(format!(
        "function breakpoints (the {} adapter has none: placed by the language server's definitions):{list}{note}",
        s.adapter.name()
    ))
    .with_structured(json!({"function_breakpoints": rows, "pending": false, "placed": true})))
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
    let caps = s.capabilities();
    let mut out = Vec::new();
    if options.condition.is_some() && !caps.supports_conditional_breakpoints {
        out.push("condition");
    }
    if options.hit_count.is_some() && !caps.supports_hit_conditional_breakpoints {
        out.push("hit_count");
    }
    if options.log_message.is_some() && !caps.supports_log_points {
        out.push("log_message");
    }
    out
}
