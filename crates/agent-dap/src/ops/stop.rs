//! The stop snapshot: what a model needs to see of a stop in one answer — why it stopped (an
//! exception with its message), `file:line` with the source around it, the top frames, and the
//! top frame's locals. `stack`, `scopes` and `variables` go deeper from the ids it hands out.
//! Also where the debuggee went after it moved ([`after_move`]): that stop, its exit, or that it
//! still runs. How it reads is `report::stop`'s.

use super::inspect::{first_thread, frame_text, frames, scopes, variables};
use super::rows::{frame_row, variable_row};
use crate::DapError;
use crate::limits::{MAX_FRAMES, MAX_OUTPUT, STOP_CONTEXT, STOP_FRAMES, STOP_LOCALS, STOP_VALUE};
use crate::protocol::{ExceptionInfo, StackFrame, ThreadArguments, Variable};
use crate::report::{
    AdapterGone, Exited, Listing, Locals, Moved, Raised, Running, Snapshot, SourceLine, Unseen,
};
use crate::session::Session;
use crate::state::{Run, State};
use crate::supervisor::Supervisor;
use agent_tier::display::clip_chars;
use std::path::Path;
use std::time::Duration;

/// Characters of one source line shown.
const SOURCE_LINE: usize = 200;

/// Characters of an exception's message shown.
const EXCEPTION_MESSAGE: usize = 1000;

/// The snapshot of a stop of `thread` (default: the first thread) for `reason`.
pub(super) async fn snapshot(
    sup: &Supervisor,
    s: &Session,
    thread: Option<i64>,
    reason: &str,
    description: Option<&str>,
) -> Moved {
    let description = description
        .filter(|d| !d.is_empty() && *d != reason)
        .map(|d| format!(", {d}"))
        .unwrap_or_default();
    let unseen = |thread_id: Option<i64>, why: String| {
        Moved::Unseen(Unseen {
            reason: reason.to_string(),
            description: description.clone(),
            thread_id,
            why,
        })
    };
    let thread = match thread {
        Some(t) => Ok(t),
        None => first_thread(s).await,
    };
    let fetched = match thread {
        Ok(t) => frames(sup, s, t, STOP_FRAMES).await.map(|f| (t, f)),
        Err(e) => Err(e),
    };
    let (thread, (top_frames, total)) = match fetched {
        Ok(f) => f,
        Err(e) => return unseen(None, format!("at an unknown location ({e})")),
    };
    let Some(top) = top_frames.first().cloned() else {
        return unseen(
            Some(thread),
            format!("in thread {thread}, which has no frames"),
        );
    };
    let at = format!("{} in thread {thread}", frame_text(sup, &top));
    let exception = if reason == "exception" {
        exception(s, thread).await
    } else {
        None
    };
    // The frame shown: the top one, or (stopped inside a runtime or library, as a panic or
    // an exception raised by a library call is) the first in the workspace.
    let canonical = sup.root.canonicalize().unwrap_or_else(|_| sup.root.clone());
    let in_root = |f: &StackFrame| {
        f.path().is_some_and(|p| {
            Path::new(p).starts_with(&sup.root) || Path::new(p).starts_with(&canonical)
        })
    };
    // Below the frames shown when none of them is (a C++ exception ends in `abort` under
    // libstdc++'s frames): the deeper frames are fetched to find it.
    let deeper =
        if top_frames.iter().any(in_root) || total.is_some_and(|t| t <= top_frames.len() as u64) {
            Vec::new()
        } else {
            frames(sup, s, thread, MAX_FRAMES)
                .await
                .map(|(f, _)| f)
                .unwrap_or_default()
        };
    let (focus_index, focus) = if in_root(&top) {
        (0, top.clone())
    } else {
        top_frames
            .iter()
            .chain(deeper.iter().skip(top_frames.len()))
            .enumerate()
            .find(|(_, f)| in_root(f))
            .map(|(i, f)| (i, f.clone()))
            .unwrap_or((0, top.clone()))
    };
    // The source around the stopped line.
    let listing = match (focus.path(), focus.line) {
        (Some(path), Some(line)) => source_around(Path::new(path), line).map(|source| Listing {
            file: sup.shown(Path::new(path)),
            line,
            source,
            frame_index: focus_index,
        }),
        _ => None,
    };
    // The top frames, and the shown one when it is below them.
    let mut rows: Vec<_> = top_frames
        .iter()
        .enumerate()
        .map(|(i, f)| frame_row(sup, i, f))
        .collect();
    if focus_index >= top_frames.len() {
        rows.push(frame_row(sup, focus_index, &focus));
    }
    let more_frames = total.map_or(0, |t| t.saturating_sub(rows.len() as u64));
    // The shown frame's locals.
    let (locals, locals_unavailable) = match locals(s, focus.id).await {
        Ok(Some((scope, reference, vars))) => {
            let rows = vars
                .iter()
                .take(STOP_LOCALS)
                .map(|v| variable_row(s, v, STOP_VALUE))
                .collect();
            let locals = Locals {
                scope,
                frame: focus.id,
                reference,
                rows,
                not_shown: vars.len().saturating_sub(STOP_LOCALS),
            };
            (Some(locals), None)
        }
        Ok(None) => (None, None),
        Err(e) => (None, Some(e.to_string())),
    };
    Moved::Stopped(Box::new(Snapshot {
        reason: reason.to_string(),
        // The exception's own line says what the description would.
        description: if exception.is_some() {
            String::new()
        } else {
            description
        },
        thread_id: thread,
        at,
        exception,
        listing,
        frames: rows,
        more_frames,
        locals,
        locals_unavailable,
    }))
}

/// The exception a thread stopped on: its id (type) and message, when the adapter tells.
async fn exception(s: &Session, thread: i64) -> Option<Raised> {
    if !s.capabilities().supports_exception_info_request {
        return None;
    }
    let body = s
        .call::<ExceptionInfo>(&ThreadArguments { thread_id: thread })
        .await
        .ok()?;
    let message = clip_chars(body.message().trim(), EXCEPTION_MESSAGE).into_owned();
    Some(Raised {
        id: body.exception_id,
        message,
    })
}

/// The first scope of `frame` that is not expensive (its locals): its name, reference and
/// variables.
async fn locals(s: &Session, frame: i64) -> Result<Option<(String, i64, Vec<Variable>)>, DapError> {
    let scopes = scopes(s, frame).await?;
    let Some(scope) = scopes.into_iter().find(|sc| !sc.expensive) else {
        return Ok(None);
    };
    let reference = scope.variables_reference;
    if reference <= 0 {
        return Ok(None);
    }
    let vars = variables(s, reference).await?;
    Ok(Some((scope.name, reference, vars)))
}

/// Lines `line - STOP_CONTEXT ..= line + STOP_CONTEXT` of `path` (1-based; a line ends at
/// `\n`, `\r\n` or a lone `\r`, as Python's universal newlines and [`agent_tier::lines`] count
/// them), each cut; `None` when the file has no such line.
fn source_around(path: &Path, line: u32) -> Option<Vec<SourceLine>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let line = usize::try_from(line).ok()?;
    let first = line.saturating_sub(STOP_CONTEXT).max(1);
    let listing: Vec<SourceLine> = agent_tier::lines::lines(&text)
        .enumerate()
        .skip(first - 1)
        .take(line + STOP_CONTEXT + 1 - first)
        .filter_map(|(i, l)| {
            Some(SourceLine {
                line: u32::try_from(i + 1).ok()?,
                text: clip_chars(l.trim_end(), SOURCE_LINE).into_owned(),
            })
        })
        .collect();
    listing
        .iter()
        .any(|l| l.line as usize == line)
        .then_some(listing)
}

/// Where the debuggee is after it moved: stopped (with the location), exited (with the new
/// output), or still running after `waited`.
pub(super) async fn after_move(
    sup: &Supervisor,
    s: &Session,
    state: &State,
    waited: Duration,
) -> Moved {
    if state.closed.is_some() && !state.terminated && state.run != Run::Exited {
        return Moved::AdapterGone(AdapterGone {
            stderr: s.stderr_tail(),
        });
    }
    match &state.run {
        Run::Stopped {
            thread_id,
            reason,
            description,
        } => snapshot(sup, s, *thread_id, reason, description.as_deref()).await,
        Run::Exited => {
            // Output events can trail the exit by a moment.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let exit_code = s.state().exit_code.or(state.exit_code);
            let output = {
                let o = s.shared.output.lock();
                let from = o.read_cursor.max(o.end().saturating_sub(MAX_OUTPUT));
                o.read(from, MAX_OUTPUT).0
            };
            Moved::Exited(Exited { exit_code, output })
        }
        Run::Running | Run::Starting => Moved::Running(Running { waited }),
    }
}
