//! `terminate`: end the session — kill the adapter and a launched debuggee, detach from an
//! attached one.

use crate::report::Terminated;
use crate::supervisor::Supervisor;

/// The session ended, or `None` when no session has run in this conversation.
pub(super) async fn run(sup: &Supervisor) -> Option<Terminated> {
    let s = sup.current().await?;
    let was_live = s.is_live();
    s.end("terminated on request".to_string(), true).await;
    Some(Terminated {
        session: s.id,
        terminated: was_live,
        target: s.target.clone(),
        attached: s.attached,
        ended: s.state().ended.unwrap_or_default(),
    })
}
