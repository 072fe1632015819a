//! `stack`: a stopped thread's frames, at most `MAX_FRAMES`, each with its frame id.

use super::inspect::{frames, pick_thread, require_stopped};
use super::rows::frame_row;
use crate::DapError;
use crate::args::Op;
use crate::limits::MAX_FRAMES;
use crate::report::Stack;
use crate::supervisor::Supervisor;

pub(super) async fn run(sup: &Supervisor, thread_id: Option<i64>) -> Result<Stack, DapError> {
    let s = sup.live().await?;
    let state = require_stopped(&s, Op::Stack.name())?;
    let thread = pick_thread(&s, &state, thread_id).await?;
    let (frames, total) = frames(sup, &s, thread, MAX_FRAMES).await?;
    Ok(Stack {
        thread_id: thread,
        frames: frames
            .iter()
            .enumerate()
            .map(|(i, f)| frame_row(sup, i, f))
            .collect(),
        total,
    })
}
