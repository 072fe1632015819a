//! `stack`: a stopped thread's frames, at most `MAX_FRAMES`, each with its frame id.

use super::inspect::{frame_text, frames, pick_thread, require_stopped};
use super::limits::MAX_FRAMES;
use crate::DapError;
use crate::args::Op;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

pub(super) async fn run(sup: &Supervisor, thread_id: Option<i64>) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    let state = require_stopped(&s, Op::Stack.name())?;
    let thread = pick_thread(&s, &state, thread_id).await?;
    let (frames, total) = frames(sup, &s, thread, MAX_FRAMES).await?;
    let mut text = format!("thread {thread}, {} frame(s):", frames.len());
    let mut rows = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let id = f.id;
        let _ = write!(text, "\n#{i} frame_id {id}: {}", frame_text(sup, f));
        rows.push(json!({"frame_id": id, "at": frame_text(sup, f)}));
    }
    if let Some(t) = total
        && t > frames.len() as u64
    {
        let _ = write!(
            text,
            "\n… {} more frame(s) not shown",
            t - frames.len() as u64
        );
    }
    Ok(ToolOutput::text(text).with_structured(json!({"thread_id": thread, "frames": rows})))
}
