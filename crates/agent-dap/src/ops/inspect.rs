//! What several operations ask of a live session: its threads, a thread's frames (remembered
//! until the debuggee moves), whether an id the model passed is one it was given.

use super::limits::MAX_FRAMES;
use crate::DapError;
use crate::session::Session;
use crate::state::{Run, State};
use crate::supervisor::Supervisor;
use serde_json::{Value, json};
use std::path::Path;

/// The session's state, which must be stopped for `op`.
pub(super) fn require_stopped(s: &Session, op: &'static str) -> Result<State, DapError> {
    let state = s.state();
    if matches!(state.run, Run::Stopped { .. }) {
        Ok(state)
    } else {
        Err(DapError::NotStopped {
            op,
            state: state.describe(),
        })
    }
}

/// "name (file:line)" of a stack frame.
pub(super) fn frame_text(sup: &Supervisor, f: &Value) -> String {
    let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
    let line = f.get("line").and_then(Value::as_i64).unwrap_or(0);
    let source = f
        .pointer("/source/path")
        .and_then(Value::as_str)
        .map(|p| sup.shown(Path::new(p)))
        .or_else(|| {
            f.pointer("/source/name")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    match source {
        Some(src) => format!("{name} ({src}:{line})"),
        None => format!("{name} (no source)"),
    }
}

/// "name (file:line) in thread N" of the top frame of `thread` (or of the first thread).
pub(super) async fn location(
    sup: &Supervisor,
    s: &Session,
    thread: Option<i64>,
) -> Result<String, DapError> {
    let thread = match thread {
        Some(t) => t,
        None => first_thread(s).await?,
    };
    let body = s
        .request(
            "stackTrace",
            json!({"threadId": thread, "startFrame": 0, "levels": 1}),
        )
        .await?;
    let frame = body
        .get("stackFrames")
        .and_then(Value::as_array)
        .and_then(|f| f.first())
        .cloned()
        .unwrap_or(Value::Null);
    Ok(format!("{} in thread {thread}", frame_text(sup, &frame)))
}

pub(super) async fn first_thread(s: &Session) -> Result<i64, DapError> {
    let body = s.request("threads", json!({})).await?;
    body.get("threads")
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(|t| t.get("id"))
        .and_then(Value::as_i64)
        .ok_or_else(|| DapError::Unknown {
            what: "the debuggee has no threads; call `status`".into(),
        })
}

/// The thread that last stopped, else the first thread.
async fn default_thread(s: &Session, state: &State) -> Result<i64, DapError> {
    match state.stopped_thread() {
        Some(t) => Ok(t),
        None => first_thread(s).await,
    }
}

/// The thread the model named (which must exist), else the default thread.
pub(super) async fn pick_thread(
    s: &Session,
    state: &State,
    asked: Option<i64>,
) -> Result<i64, DapError> {
    let Some(thread) = asked else {
        return default_thread(s, state).await;
    };
    let body = s.request("threads", json!({})).await?;
    let ids: Vec<i64> = body
        .get("threads")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(|t| t.get("id").and_then(Value::as_i64))
                .collect()
        })
        .unwrap_or_default();
    if ids.contains(&thread) {
        Ok(thread)
    } else {
        Err(DapError::Unknown {
            what: format!(
                "unknown thread_id {thread}; the debuggee's threads are: {}",
                ids.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }
}

/// The `key` array of the answer to `command` (`scopes` → `scopes`, `variables` →
/// `variables`), empty when the adapter leaves it out.
pub(super) async fn listed(
    s: &Session,
    command: &str,
    args: Value,
    key: &str,
) -> Result<Vec<Value>, DapError> {
    let body = s.request(command, args).await?;
    Ok(body
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Fetch the top `levels` frames of `thread` (at most [`MAX_FRAMES`]), remembering their ids
/// for `scopes` and `evaluate`; also the adapter's total count, when it gives one.
pub(super) async fn frames(
    sup: &Supervisor,
    s: &Session,
    thread: i64,
    levels: usize,
) -> Result<(Vec<Value>, Option<i64>), DapError> {
    let levels = levels.min(MAX_FRAMES);
    let body = s
        .request(
            "stackTrace",
            json!({"threadId": thread, "startFrame": 0, "levels": levels}),
        )
        .await?;
    let mut frames = body
        .get("stackFrames")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    frames.truncate(levels);
    let total = body.get("totalFrames").and_then(Value::as_i64);
    let mut known = s.known();
    for f in &frames {
        if let Some(id) = f.get("id").and_then(Value::as_i64) {
            known.frames.insert(id, frame_text(sup, f));
        }
    }
    Ok((frames, total))
}

/// Check that `frame` came from a `stack` since the last stop, fetching the stopped thread's
/// frames once if none were asked for.
pub(super) async fn check_frame(sup: &Supervisor, s: &Session, frame: i64) -> Result<(), DapError> {
    if s.known().frames.contains_key(&frame) {
        return Ok(());
    }
    let thread = default_thread(s, &s.state()).await?;
    frames(sup, s, thread, MAX_FRAMES).await?;
    let known = s.known();
    if known.frames.contains_key(&frame) {
        return Ok(());
    }
    let list = known
        .frames
        .iter()
        .take(10)
        .map(|(id, at)| format!("{id} = {at}"))
        .collect::<Vec<_>>()
        .join("; ");
    Err(DapError::Unknown {
        what: format!(
            "unknown frame_id {frame}; frame ids change whenever the program moves. Current frames of thread {thread}: {list}"
        ),
    })
}

/// The id of the top frame of the default thread.
pub(super) async fn top_frame(sup: &Supervisor, s: &Session) -> Result<i64, DapError> {
    let thread = default_thread(s, &s.state()).await?;
    let (frames, _) = frames(sup, s, thread, MAX_FRAMES).await?;
    frames
        .first()
        .and_then(|f| f.get("id"))
        .and_then(Value::as_i64)
        .ok_or_else(|| DapError::Unknown {
            what: format!("thread {thread} has no frames; call `stack` with another thread_id"),
        })
}
