//! Who made a call: the [`Requester`] a call carries from the edge of the run (a transport's
//! session) through every call nested in it (a kernel cell's `tool()` bridge, wrappers), so that
//! a prompt the call causes — `ask_user`'s question, an approval — goes to the party whose call
//! caused it and to nobody else. There is no "current client" anywhere in the run.
//!
//! The floor knows no protocol: a requester is an opaque handle with a stable id. The code that
//! knows how to reach one kind of requester (the host's MCP elicitor reaches an MCP session)
//! takes its own type back with [`Requester::as_any`].

use super::ProgressSink;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// The party a call came from: an MCP session, a terminal, an embedding harness's user.
///
/// Implemented by the edge that receives calls (the host implements it for its MCP sessions) and
/// passed with each call in [`Caller`]; tools read it from
/// [`CallContext::requester`](crate::CallContext::requester), approvers from
/// [`ApprovalRequest::requester`](crate::ApprovalRequest::requester).
pub trait Requester: Send + Sync + 'static {
    /// A name for this requester that stays the same while it lives and is never reused in the
    /// run (an MCP session's), for logs and for keying what belongs to it.
    fn id(&self) -> &str;

    /// The handle itself, so the port that knows this kind of requester can reach it.
    fn as_any(&self) -> &dyn Any;
}

impl fmt::Debug for dyn Requester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Requester").field(&self.id()).finish()
    }
}

/// Who makes a call and where its progress goes: what the edge of the run passes with a call to
/// [`Registry::call_from`](crate::Registry::call_from). Calls nested in it inherit both.
#[derive(Clone, Default, Debug)]
pub struct Caller {
    /// Where the call's progress messages go (the default discards them).
    pub progress: ProgressSink,
    /// Whom the prompts this call causes are put to. `None`: the call has no requester; a port
    /// with one person behind it (a terminal) asks that person, a port that must route
    /// (MCP elicitation) fails closed.
    pub requester: Option<Arc<dyn Requester>>,
}

impl Caller {
    /// A call from `requester`, with no progress listener.
    pub fn requested_by(requester: Arc<dyn Requester>) -> Self {
        Caller {
            progress: ProgressSink::none(),
            requester: Some(requester),
        }
    }

    /// The same caller, with its progress going to `progress`.
    pub fn with_progress(mut self, progress: ProgressSink) -> Self {
        self.progress = progress;
        self
    }
}
