//! `status`: whether a session is running, where it is stopped, how much output is unread.

use super::inspect::location;
use crate::DapError;
use crate::state::{Run, human};
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;
use std::time::Duration;

pub(super) async fn run(sup: &Supervisor) -> Result<ToolOutput, DapError> {
    let pending: usize = sup
        .breakpoints
        .lock()
        .values()
        .map(|f| f.lines.len())
        .sum::<usize>()
        + sup.functions.lock().names.len();
    let Some(s) = sup.current().await else {
        return Ok(ToolOutput::text(format!(
            "no debug session in this conversation; {pending} breakpoint(s) set for the next launch; call `launch` or `attach`"
        ))
        .with_structured(json!({"session": null, "breakpoints": pending})));
    };
    let state = s.state();
    let mut text = sup.describe(&s);
    if state.ended.is_none() {
        let _ = write!(
            text,
            "\nage {} of a {} time to live; adapter: {}",
            human(Duration::from_secs(s.started.elapsed().as_secs())),
            human(s.ttl),
            s.command
        );
        if let Run::Stopped { thread_id, .. } = &state.run
            && let Ok(at) = location(sup, &s, *thread_id).await
        {
            let _ = write!(text, "\nstopped at {at}");
        }
    }
    let unread = {
        let o = s.shared.output.lock();
        o.end().saturating_sub(o.read_cursor)
    };
    let _ = write!(
        text,
        "\n{unread} byte(s) of program output not read yet (`output`)"
    );
    Ok(ToolOutput::text(text).with_structured(json!({
        "session": s.id,
        "adapter": s.adapter.name(),
        "state": state.describe(),
        "exit_code": state.exit_code,
        "unread_output": unread,
        "adapter_pid": s.adapter_pgid(),
        "debuggee_pid": state.debuggee_pid,
    })))
}
