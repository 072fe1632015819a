//! `status`: whether a session is running, where it is stopped, how much output is unread.

use super::inspect::location;
use crate::report::{Live, NoSession, SessionStatus, Status};
use crate::state::Run;
use crate::supervisor::Supervisor;
use std::time::Duration;

pub(super) async fn run(sup: &Supervisor) -> Status {
    let pending: usize = sup
        .breakpoints
        .lock()
        .values()
        .map(|f| f.lines.len())
        .sum::<usize>()
        + sup.functions.lock().names.len();
    let Some(s) = sup.current().await else {
        return Status::None(NoSession {
            session: None,
            breakpoints: pending,
        });
    };
    let state = s.state();
    let live = if state.ended.is_none() {
        let stopped_at = match &state.run {
            Run::Stopped { thread_id, .. } => location(sup, &s, *thread_id).await.ok(),
            _ => None,
        };
        Some(Live {
            age: agent_tier::display::duration(Duration::from_secs(s.started.elapsed().as_secs())),
            ttl: agent_tier::display::duration(s.ttl),
            command: s.command.clone(),
            stopped_at,
        })
    } else {
        None
    };
    let unread_output = {
        let o = s.shared.output.lock();
        o.end().saturating_sub(o.read_cursor)
    };
    Status::Session(Box::new(SessionStatus {
        described: sup.describe(&s),
        live,
        session: s.id,
        adapter: s.adapter.name(),
        state: state.describe(),
        exit_code: state.exit_code,
        unread_output,
        adapter_pid: s.adapter_pgid(),
        debuggee_pid: state.debuggee_pid,
    }))
}
