//! `continue`, `pause`, `step_over`, `step_in`, `step_out`: move the debuggee, then wait (at
//! most `run_wait`) for it to stop or exit.

use super::inspect::pick_thread;
use super::stop::after_move;
use crate::DapError;
use crate::args::Motion;
use crate::state::Run;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;

pub(super) async fn run(
    sup: &Supervisor,
    motion: Motion,
    thread_id: Option<i64>,
) -> Result<ToolOutput, DapError> {
    let s = sup.live().await?;
    let state = s.state();
    let stopped = matches!(state.run, Run::Stopped { .. });
    if motion == Motion::Pause {
        if stopped {
            return Ok(ToolOutput::text(format!(
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
    if let Err(e) = s
        .request(motion.request(), json!({"threadId": thread}))
        .await
    {
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
    let (text, structured) = after_move(sup, &s, &state, wait).await;
    Ok(ToolOutput::text(text).with_structured(structured))
}
