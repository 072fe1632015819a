//! `continue`, `pause`, `step_over`, `step_in`, `step_out`: move the debuggee, then wait (at
//! most `run_wait`) for it to stop or exit.

use super::inspect::pick_thread;
use super::stop::after_move;
use crate::DapError;
use crate::args::Motion;
use crate::protocol::{Continue, Next, Pause, StepIn, StepOut, ThreadArguments};
use crate::report::Moved;
use crate::session::Session;
use crate::state::Run;
use crate::supervisor::Supervisor;

/// What a motion did: moved the debuggee (where it went), or nothing (a pause of a stopped
/// debuggee), said in words.
pub(super) enum Moving {
    Moved(Moved),
    Nothing(String),
}

pub(super) async fn run(
    sup: &Supervisor,
    motion: Motion,
    thread_id: Option<i64>,
) -> Result<Moving, DapError> {
    let s = sup.live().await?;
    let state = s.state();
    let stopped = matches!(state.run, Run::Stopped { .. });
    if motion == Motion::Pause {
        if stopped {
            return Ok(Moving::Nothing(format!(
                "already {}; nothing to pause",
                state.describe()
            )));
        }
    } else if !stopped {
        return Err(DapError::NotStopped {
            op: motion.name(),
            state: state.describe(),
        });
    }
    let thread = pick_thread(&s, &state, thread_id).await?;
    let gen_before = state.stop_gen;
    if motion != Motion::Pause {
        s.shared.state.send_modify(|st| {
            if st.stop_gen == gen_before && matches!(st.run, Run::Stopped { .. }) {
                st.run = Run::Running;
            }
        });
    }
    if let Err(e) = request(&s, motion, thread).await {
        // The adapter refused or never answered: nothing says the debuggee moved, so it is
        // where it was (unless an event has said otherwise since).
        s.shared.state.send_modify(|st| {
            if st.stop_gen == gen_before && st.run == Run::Running {
                st.run = state.run.clone();
            }
        });
        return Err(e);
    }
    let wait = sup.config.run_wait;
    let state = s.wait_stop(gen_before, wait).await;
    Ok(Moving::Moved(after_move(sup, &s, &state, wait).await))
}

/// Send the request that makes `motion` on `thread`.
async fn request(s: &Session, motion: Motion, thread: i64) -> Result<(), DapError> {
    let on = ThreadArguments { thread_id: thread };
    match motion {
        Motion::Continue => s.call::<Continue>(&on).await?,
        Motion::Pause => s.call::<Pause>(&on).await?,
        Motion::StepOver => s.call::<Next>(&on).await?,
        Motion::StepIn => s.call::<StepIn>(&on).await?,
        Motion::StepOut => s.call::<StepOut>(&on).await?,
    };
    Ok(())
}
