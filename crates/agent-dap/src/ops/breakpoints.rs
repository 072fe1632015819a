//! `breakpoints`: replace a file's breakpoints, or the function breakpoints — kept for every
//! later session, and set in the live one at once.

use super::rows::{breakpoint_rows, function_rows};
use crate::DapError;
use crate::args::BreakpointOptions;
use crate::breakpoints::{
    FileBreakpoints, FunctionBreakpoints, Placed, anchors_of, place, placed_in, placed_results,
    set_breakpoints_args, set_function_breakpoints_args,
};
use crate::protocol::{SetBreakpoints, SetFunctionBreakpoints};
use crate::report::{
    FileBreakpointsSet, FileLines, FileSet, FunctionBreakpointsSet, FunctionNames, FunctionSet,
};
use crate::session::Session;
use crate::supervisor::Supervisor;
use agent_tier::workspace::confine_existing;

pub(super) async fn run(
    sup: &Supervisor,
    file: &str,
    mut lines: Vec<u32>,
    options: BreakpointOptions,
) -> Result<FileBreakpointsSet, DapError> {
    let path = confine_existing(&sup.root, "path", file)?;
    lines.sort_unstable();
    lines.dedup();
    let anchors = anchors_of(&sup.root, &path, &lines);
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
                    anchors: anchors.clone(),
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
        return Ok(FileBreakpointsSet::Kept(FileLines {
            file: shown,
            lines,
            pending: true,
        }));
    };
    let own = FileBreakpoints {
        lines: lines.clone(),
        options: options.clone(),
        anchors,
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
        return Ok(FileBreakpointsSet::Cleared(FileLines {
            file: shown,
            lines,
            pending: false,
        }));
    }
    let mut answers = body.breakpoints.0;
    answers.truncate(lines.len());
    Ok(FileBreakpointsSet::Set(FileSet {
        file: shown,
        breakpoints: breakpoint_rows(sup, &path, &lines, &answers),
        pending: false,
        unsupported: unsupported(&s, &options),
    }))
}

/// Replace the function breakpoints: by the adapter's `setFunctionBreakpoints`, or placed by
/// the language servers' definitions when the live adapter has none.
pub(super) async fn functions(
    sup: &Supervisor,
    names: Vec<String>,
    options: BreakpointOptions,
) -> Result<FunctionBreakpointsSet, DapError> {
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
        return Ok(FunctionBreakpointsSet::Names(FunctionNames {
            functions: names,
            pending: true,
        }));
    };
    if !s.capabilities().supports_function_breakpoints {
        return placed_functions(sup, &s, &set).await;
    }
    let body = s
        .call::<SetFunctionBreakpoints>(&set_function_breakpoints_args(&set))
        .await?;
    if names.is_empty() {
        return Ok(cleared());
    }
    Ok(FunctionBreakpointsSet::Set(FunctionSet {
        function_breakpoints: function_rows(sup, &names, &body.breakpoints.0),
        pending: false,
        placed: false,
        adapter: s.adapter.name(),
        unsupported: unsupported(&s, &options),
    }))
}

/// The function breakpoints cleared in the live session.
fn cleared() -> FunctionBreakpointsSet {
    FunctionBreakpointsSet::Names(FunctionNames {
        functions: Vec::new(),
        pending: false,
    })
}

/// Function breakpoints for a live adapter without them: each name placed on the first line of
/// its one definition's body; every file whose placed lines change is set again (with its own
/// lines first).
async fn placed_functions(
    sup: &Supervisor,
    s: &Session,
    set: &FunctionBreakpoints,
) -> Result<FunctionBreakpointsSet, DapError> {
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
        return Ok(cleared());
    }
    let results = placed_results(&set.names, &placement, &answers);
    Ok(FunctionBreakpointsSet::Set(FunctionSet {
        function_breakpoints: function_rows(sup, &set.names, &results),
        pending: false,
        placed: true,
        adapter: s.adapter.name(),
        unsupported: unsupported(s, &set.options),
    }))
}

/// The options asked for that the live adapter does not advertise.
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
