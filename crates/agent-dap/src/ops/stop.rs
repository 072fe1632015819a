//! The stop snapshot: what a model needs to see of a stop in one answer — why it stopped (an
//! exception with its message), `file:line` with the source around it, the top frames, and the
//! top frame's locals. `stack`, `scopes` and `variables` go deeper from the ids it hands out.
//! Also where the debuggee went after it moved ([`after_move`]): that stop, its exit, or that it
//! still runs.

use super::inspect::{first_thread, frame_text, frames, scopes, variables};
use super::limits::{
    EXIT_TAIL, MAX_FRAMES, MAX_OUTPUT, STOP_CONTEXT, STOP_FRAMES, STOP_LOCALS, STOP_VALUE,
};
use super::render::{tail, truncate, variable_row_capped};
use crate::DapError;
use crate::protocol::{ExceptionInfo, StackFrame, ThreadArguments, Variable};
use crate::session::Session;
use crate::state::{Run, State, human};
use crate::supervisor::Supervisor;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// Characters of one source line shown.
const SOURCE_LINE: usize = 200;

/// The snapshot of a stop of `thread` (default: the first thread) for `reason`.
pub(super) async fn snapshot(
    sup: &Supervisor,
    s: &Session,
    thread: Option<i64>,
    reason: &str,
    description: Option<&str>,
) -> (String, Value) {
    let desc = description
        .filter(|d| !d.is_empty() && *d != reason)
        .map(|d| format!(", {d}"))
        .unwrap_or_default();
    let thread = match thread {
        Some(t) => Ok(t),
        None => first_thread(s).await,
    };
    let frames = match thread {
        Ok(t) => top_frames(sup, s, t, STOP_FRAMES).await.map(|f| (t, f)),
        Err(e) => Err(e),
    };
    let (thread, frames, total) = match frames {
        Ok((t, (f, total))) => (t, f, total),
        Err(e) => {
            return (
                format!("stopped ({reason}{desc}) at an unknown location ({e})"),
                json!({"state": "stopped", "reason": reason}),
            );
        }
    };
    let Some(top) = frames.first().cloned() else {
        return (
            format!("stopped ({reason}{desc}) in thread {thread}, which has no frames"),
            json!({"state": "stopped", "reason": reason, "thread_id": thread}),
        );
    };
    let at = format!("{} in thread {thread}", frame_text(sup, &top));
    let raised = if reason == "exception" {
        exception(s, thread).await
    } else {
        None
    };
    // The exception's own line says what the description would.
    let desc = if raised.is_some() {
        String::new()
    } else {
        desc
    };
    let mut text = format!("stopped ({reason}{desc}) at {at}");
    let mut structured = json!({
        "state": "stopped", "reason": reason, "thread_id": thread, "at": at,
    });
    if let Some((id, message)) = raised {
        let _ = write!(text, "\nexception {id}: {message}");
        structured["exception"] = json!({"id": id, "message": message});
    }
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
    let deeper = if frames.iter().any(in_root) || total.is_some_and(|t| t <= frames.len() as u64) {
        Vec::new()
    } else {
        top_frames(sup, s, thread, MAX_FRAMES)
            .await
            .map(|(f, _)| f)
            .unwrap_or_default()
    };
    let (focus_index, focus) = if in_root(&top) {
        (0, top.clone())
    } else {
        frames
            .iter()
            .chain(deeper.iter().skip(frames.len()))
            .enumerate()
            .find(|(_, f)| in_root(f))
            .map(|(i, f)| (i, f.clone()))
            .unwrap_or((0, top.clone()))
    };
    // The source around the stopped line.
    if let (Some(path), Some(line)) = (focus.path(), focus.line)
        && let Some(listing) = source_around(Path::new(path), line as usize)
    {
        let line = line as usize;
        let _ = write!(text, "\n{}:{line}", sup.shown(Path::new(path)));
        if focus_index > 0 {
            let _ = write!(text, " (frame #{focus_index}, the first in the workspace)");
        }
        let width = (line + STOP_CONTEXT).to_string().len();
        for (n, src) in &listing {
            let mark = if *n == line { '>' } else { ' ' };
            let row = format!("{mark} {n:>width$} | {src}");
            let _ = write!(text, "\n{}", row.trim_end());
        }
        structured["file"] = json!(sup.shown(Path::new(path)));
        structured["line"] = json!(line);
        structured["source"] = json!(
            listing
                .iter()
                .map(|(n, l)| json!({"line": n, "text": l}))
                .collect::<Vec<_>>()
        );
    }
    // The top frames.
    let mut rows = Vec::new();
    let _ = write!(text, "\nframes:");
    for (i, f) in frames.iter().enumerate() {
        let id = f.id;
        let _ = write!(text, "\n#{i} frame_id {id}: {}", frame_text(sup, f));
        rows.push(json!({"frame_id": id, "at": frame_text(sup, f)}));
    }
    let mut listed = frames.len();
    if focus_index >= frames.len() {
        let id = focus.id;
        let _ = write!(
            text,
            "\n#{focus_index} frame_id {id}: {}",
            frame_text(sup, &focus)
        );
        rows.push(json!({"frame_id": id, "at": frame_text(sup, &focus)}));
        listed += 1;
    }
    let more = total.map_or(0, |t| t.saturating_sub(listed as u64));
    if more > 0 {
        let _ = write!(text, "\n… {more} more frame(s) (`stack`)");
    }
    structured["frames"] = json!(rows);
    // The shown frame's locals.
    {
        let frame = focus.id;
        match locals(s, frame).await {
            Ok(Some((scope, reference, vars))) => {
                let _ = write!(text, "\n{scope} of frame {frame} (reference {reference}):");
                let mut rows = Vec::new();
                for v in vars.iter().take(STOP_LOCALS) {
                    let (line, row) = variable_row_capped(s, v, STOP_VALUE);
                    let _ = write!(text, "\n- {line}");
                    rows.push(row);
                }
                let left = vars.len().saturating_sub(STOP_LOCALS);
                if left > 0 {
                    let _ = write!(
                        text,
                        "\n… {left} more not shown (`variables` reference {reference})"
                    );
                }
                if vars.is_empty() {
                    text.push_str("\n(none)");
                }
                structured["locals"] = json!(rows);
                structured["locals_not_shown"] = json!(left);
            }
            Ok(None) => {}
            Err(e) => {
                let _ = write!(text, "\nlocals unavailable: {e}");
            }
        }
    }
    (text, structured)
}

/// The top `levels` frames of `thread` through the one frame fetch `stack` uses too (ids
/// remembered), with the total as a count.
async fn top_frames(
    sup: &Supervisor,
    s: &Session,
    thread: i64,
    levels: usize,
) -> Result<(Vec<StackFrame>, Option<u64>), DapError> {
    frames(sup, s, thread, levels).await
}

/// The exception a thread stopped on: its id (type) and message, when the adapter tells.
async fn exception(s: &Session, thread: i64) -> Option<(String, String)> {
    if !s.capabilities().supports_exception_info_request {
        return None;
    }
    let body = s
        .call::<ExceptionInfo>(&ThreadArguments { thread_id: thread })
        .await
        .ok()?;
    let message = truncate(body.message().trim(), 1000);
    Some((body.exception_id, message))
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
/// them), each capped.
fn source_around(path: &Path, line: usize) -> Option<Vec<(usize, String)>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let first = line.saturating_sub(STOP_CONTEXT).max(1);
    let listing: Vec<(usize, String)> = agent_tier::lines::lines(&text)
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .skip(first - 1)
        .take(line + STOP_CONTEXT + 1 - first)
        .map(|(n, l)| (n, truncate(l.trim_end(), SOURCE_LINE)))
        .collect();
    listing.iter().any(|(n, _)| *n == line).then_some(listing)
}

/// Where the debuggee is after it moved: stopped (with the location), exited (with the new
/// output), or still running after `waited`.
pub(super) async fn after_move(
    sup: &Supervisor,
    s: &Session,
    state: &State,
    waited: Duration,
) -> (String, Value) {
    if state.closed.is_some() && !state.terminated && state.run != Run::Exited {
        let tail = s.stderr_tail();
        return (
            format!(
                "the debug adapter exited unexpectedly; the session is over{}",
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {tail}")
                }
            ),
            json!({"state": "adapter gone"}),
        );
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
            let code = s.state().exit_code.or(state.exit_code);
            let out = {
                let o = s.shared.output.lock();
                let from = o.read_cursor.max(o.end().saturating_sub(MAX_OUTPUT));
                o.read(from, MAX_OUTPUT).0
            };
            let mut text = match code {
                Some(c) => format!("the program exited with code {c}"),
                None => "the program terminated".to_string(),
            };
            if !out.is_empty() {
                let _ = write!(
                    text,
                    "; new output (also in `output`):\n{}",
                    tail(&out, EXIT_TAIL)
                );
            }
            (text, json!({"state": "exited", "exit_code": code}))
        }
        Run::Running | Run::Starting => (
            format!(
                "still running after {}; call `status` to see where it stops, or `pause`",
                human(waited)
            ),
            json!({"state": "running"}),
        ),
    }
}
