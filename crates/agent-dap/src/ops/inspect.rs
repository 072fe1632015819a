//! What several operations ask of a live session: that it is stopped, its threads, a thread's
//! frames (remembered until the debuggee moves), a frame's scopes and a reference's variables,
//! and whether an id the model passed is one it was given.

use crate::DapError;
use crate::limits::MAX_FRAMES;
use crate::protocol::{
    NoArguments, Scope, Scopes, ScopesArguments, StackFrame, StackTrace, StackTraceArguments,
    Thread, Threads, Variable, Variables, VariablesArguments,
};
use crate::session::Session;
use crate::state::{Run, State};
use crate::supervisor::Supervisor;
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

/// "name (file:line)" of a stack frame: "name (file, no line)" when it has a source but no
/// line, "name (no source)" when it has neither path nor name of one.
pub(super) fn frame_text(sup: &Supervisor, f: &StackFrame) -> String {
    let source = match f.path() {
        Some(p) => Some(sup.shown(Path::new(p))),
        None => f.source.as_ref().and_then(|s| s.name.clone()),
    };
    match (source, f.line) {
        (Some(src), Some(line)) => format!("{} ({src}:{line})", f.name),
        (Some(src), None) => format!("{} ({src}, no line)", f.name),
        (None, _) => format!("{} (no source)", f.name),
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
        .call::<StackTrace>(&StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            levels: 1,
        })
        .await?;
    let at = match body.stack_frames.0.first() {
        Some(frame) => frame_text(sup, frame),
        None => "no frame".to_string(),
    };
    Ok(format!("{at} in thread {thread}"))
}

/// The debuggee's threads.
pub(super) async fn threads(s: &Session) -> Result<Vec<Thread>, DapError> {
    Ok(s.call::<Threads>(&NoArguments {}).await?.threads.0)
}

pub(super) async fn first_thread(s: &Session) -> Result<i64, DapError> {
    threads(s)
        .await?
        .first()
        .map(|t| t.id)
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
    let ids: Vec<i64> = threads(s).await?.iter().map(|t| t.id).collect();
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

/// A frame's scopes, their references remembered for `variables`.
pub(super) async fn scopes(s: &Session, frame: i64) -> Result<Vec<Scope>, DapError> {
    let scopes = s
        .call::<Scopes>(&ScopesArguments { frame_id: frame })
        .await?
        .scopes
        .0;
    let mut known = s.known();
    known.refs.extend(
        scopes
            .iter()
            .map(|sc| sc.variables_reference)
            .filter(|r| *r > 0),
    );
    Ok(scopes)
}

/// The children of a reference.
pub(super) async fn variables(s: &Session, reference: i64) -> Result<Vec<Variable>, DapError> {
    Ok(s.call::<Variables>(&VariablesArguments {
        variables_reference: reference,
    })
    .await?
    .variables
    .0)
}

/// Fetch the top `levels` frames of `thread` (at most [`MAX_FRAMES`]), remembering their ids
/// for `scopes` and `evaluate`; also the adapter's total count, when it gives one.
pub(super) async fn frames(
    sup: &Supervisor,
    s: &Session,
    thread: i64,
    levels: usize,
) -> Result<(Vec<StackFrame>, Option<u64>), DapError> {
    let levels = levels.min(MAX_FRAMES);
    let body = s
        .call::<StackTrace>(&StackTraceArguments {
            thread_id: thread,
            start_frame: 0,
            levels,
        })
        .await?;
    let mut frames = body.stack_frames.0;
    frames.truncate(levels);
    let mut known = s.known();
    for f in &frames {
        known.frames.insert(f.id, frame_text(sup, f));
    }
    Ok((frames, body.total_frames))
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
        .map(|f| f.id)
        .ok_or_else(|| DapError::Unknown {
            what: format!("thread {thread} has no frames; call `stack` with another thread_id"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DapConfig;
    use crate::protocol::Source;

    /// A frame reads as its function and where it is; what it lacks is said, never made up.
    #[test]
    fn a_frame_says_its_source_and_line_or_that_it_has_none() {
        let sup = Supervisor::new("/w".into(), Vec::new(), DapConfig::default(), None);
        let frame = |path: Option<&str>, name: Option<&str>, line: Option<u32>| StackFrame {
            id: 1,
            name: "f".into(),
            source: (path.is_some() || name.is_some()).then(|| Source {
                path: path.map(str::to_string),
                name: name.map(str::to_string),
            }),
            line,
        };
        let cases = [
            (frame(Some("/w/a.py"), Some("a.py"), Some(3)), "f (a.py:3)"),
            (frame(Some("/w/a.py"), None, None), "f (a.py, no line)"),
            (
                frame(None, Some("libc.so.6`__libc_start_main"), None),
                "f (libc.so.6`__libc_start_main, no line)",
            ),
            (frame(Some(""), Some("gen.rs"), Some(9)), "f (gen.rs:9)"),
            (frame(None, None, Some(3)), "f (no source)"),
        ];
        for (f, expect) in cases {
            assert_eq!(frame_text(&sup, &f), expect);
        }
    }
}
