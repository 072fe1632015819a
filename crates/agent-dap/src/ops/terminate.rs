//! `terminate`: end the session — kill the adapter and a launched debuggee, detach from an
//! attached one.

use crate::DapError;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use serde_json::json;

pub(super) async fn run(sup: &Supervisor) -> Result<ToolOutput, DapError> {
    let Some(s) = sup.current().await else {
        return Ok(ToolOutput::text(
            "no debug session is running; nothing to terminate",
        ));
    };
    let was_live = s.is_live();
    s.end("terminated on request".to_string(), true).await;
    let text = if was_live && s.attached {
        format!(
            "session {} on {} terminated; the adapter was stopped and the debuggee was detached, left running",
            s.id, s.target
        )
    } else if was_live {
        format!(
            "session {} on {} terminated; the adapter and the debuggee were killed",
            s.id, s.target
        )
    } else {
        format!(
            "session {} had already ended ({}); its processes are gone",
            s.id,
            s.state().ended.unwrap_or_default()
        )
    };
    Ok(ToolOutput::text(text).with_structured(json!({"session": s.id, "terminated": was_live})))
}
