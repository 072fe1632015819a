//! What a run is ([`RunInfo`]), where a call came from ([`Origin`]), and the context a tool
//! call runs in ([`CallContext`]): its surface and effects, its progress sink, its requester
//! and room, and the way back into the registry for a nested call.

use super::{Caller, ProgressSink, Registry, Requester};
use crate::Surface;
use crate::resource::Held;
use crate::rooms::RoomId;
use crate::tool::{Effects, ToolOutput};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What a run is: the facts every family needs to attach its resources. A family's own
/// switches (whether `debug` has a conversation, whether vibe mode is on, where `ask_user`
/// cards go) are in that family's config, never here.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// The workspace root; file arguments are confined to it.
    pub root: PathBuf,
    /// A command prefix that runs a program inside the conversation's sandbox, when it has one
    /// (for example `["docker", "exec", "-i", "box"]`). Empty: children start on the host.
    pub sandbox_prefix: Vec<String>,
}

/// Where a call came from. A bridge or worker call keeps the surface of the run that started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The model called the tool.
    Model,
    /// A kernel cell called `tool()`; `via` names the tool whose call made it (`eval`).
    Bridge {
        /// The tool whose call ran the cell.
        via: String,
    },
    /// A background worker called the tool.
    Worker {
        /// The worker's id.
        worker_id: String,
    },
}

/// The context a tool call runs in.
#[derive(Clone)]
pub struct CallContext {
    /// The caller's surface; a nested call keeps it.
    pub surface: Surface,
    /// Where the call came from.
    pub origin: Origin,
    /// What this call declared it does (its tool's [`Tool::effects`](crate::Tool::effects) for
    /// these arguments).
    pub effects: Effects,
    pub(super) registry: Registry,
    /// The resources held by this call and every call enclosing it: a nested call that needs
    /// one of them is refused instead of waiting for itself.
    pub(super) held: Arc<Vec<Held>>,
    /// Where this call's progress goes (shared with the calls nested in it).
    pub(super) progress: ProgressSink,
    /// Who made this call (inherited by the calls nested in it): the party its prompts go to.
    pub(super) requester: Option<Arc<dyn Requester>>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("surface", &self.surface)
            .field("origin", &self.origin)
            .field("requester", &self.requester)
            .finish()
    }
}

impl CallContext {
    /// The run this call belongs to.
    pub fn run(&self) -> &RunInfo {
        &self.registry.inner.run
    }

    /// The registry, for tools that re-enter it.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Report progress to whoever made the call (over MCP: a progress notification, when the
    /// client asked for them). Cheap, never blocks, never fails; a no-op when nobody listens; a
    /// message not yet taken is replaced by the next; long ones are cut at
    /// [`PROGRESS_MAX`](crate::PROGRESS_MAX).
    pub fn progress(&self, message: impl Into<String>) {
        self.progress.send(message);
    }

    /// Whether anybody listens to [`CallContext::progress`]: skip composing messages otherwise.
    pub fn progress_wanted(&self) -> bool {
        self.progress.is_listening()
    }

    /// This call's progress sink, for a task the tool spawns.
    pub fn progress_sink(&self) -> ProgressSink {
        self.progress.clone()
    }

    /// Who made this call — for a nested call, who made the call it is nested in. A prompt this
    /// call causes (a question, an approval) goes to this requester and to nobody else; `None`
    /// when the edge that made the call named nobody.
    pub fn requester(&self) -> Option<&Arc<dyn Requester>> {
        self.requester.as_ref()
    }

    /// The room this call belongs to: its requester's (for a nested call, the enclosing
    /// call's), or [`RoomId::run`] when the call names no requester. What belongs to one
    /// conversation (a kernel, a debug session, staged edits) is kept per room.
    pub fn room(&self) -> RoomId {
        room_of(self.requester.as_ref())
    }

    /// This call's caller (its progress sink and requester), for a task the tool spawns that
    /// calls the registry itself.
    pub fn caller(&self) -> Caller {
        Caller {
            progress: self.progress.clone(),
            requester: self.requester.clone(),
        }
    }

    /// Call another tool from inside this one (a kernel cell's `tool()` bridge, a worker). The
    /// nested call takes the same path as a model call, on this call's surface; it reports its
    /// progress to this call's sink and its prompts go to this call's requester.
    pub async fn nested_call(&self, origin: Origin, name: &str, args: Value) -> ToolOutput {
        use tracing::Instrument;
        let span = tracing::info_span!("tool_call", tool = name, surface = %self.surface, origin = ?origin);
        match self
            .registry
            .try_call(
                name,
                args,
                self.surface,
                origin,
                self.held.clone(),
                self.caller(),
            )
            .instrument(span)
            .await
        {
            Ok(out) => out,
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

pub(super) fn room_of(requester: Option<&Arc<dyn Requester>>) -> RoomId {
    requester.map_or_else(RoomId::run, |r| RoomId::new(r.id()))
}
