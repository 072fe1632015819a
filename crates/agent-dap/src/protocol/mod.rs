//! The Debug Adapter Protocol as this family speaks it, each edge declared once: every request it
//! sends is a type implementing [`agent_rpc::Request`] (the command, its arguments, the body it
//! expects) and every event it reads one implementing [`agent_rpc::Notification`]. A body of
//! another shape is an [`agent_rpc::Malformed`] naming the command and the field, which the
//! transport turns into [`DapError::Malformed`](crate::DapError::Malformed) — never a silent
//! default.
//!
//! The types are lenient where real adapters are (debugpy, lldb-dap, delve, the Dart adapter;
//! docs/decisions.md): `null` where the specification says a list ([`List`]); a body left out
//! where nothing in it is read (`IgnoredAny`); a frame's `line` of 0 (no source) read as no line;
//! a field the specification makes optional, or that an adapter leaves out, is an `Option`.
//! Fields nobody here reads are not declared (extra fields are ignored). The `launch` and
//! `attach` arguments are each adapter's own configuration and pass through as JSON.
//!
//! By area: [`lifecycle`] (initialize and the capabilities, launch and attach,
//! configurationDone, disconnect), [`breakpoints`] (line, function and exception breakpoints),
//! [`execution`] (continue, the steps, pause), [`inspection`] (threads, stackTrace, scopes,
//! variables, evaluate, exceptionInfo), [`events`] (what the adapter tells on its own),
//! [`messages`] (an event's name, a reverse request's command, a refusal's error).

pub(crate) mod breakpoints;
pub(crate) mod events;
pub(crate) mod execution;
pub(crate) mod inspection;
pub(crate) mod lifecycle;
pub(crate) mod messages;

pub(crate) use breakpoints::*;
pub(crate) use events::*;
pub(crate) use execution::*;
pub(crate) use inspection::*;
pub(crate) use lifecycle::*;
pub(crate) use messages::*;

use serde::{Deserialize, Deserializer, Serialize};

/// A list that an adapter may also send as `null` (read as empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(List(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default()))
    }
}

/// The arguments of a request that carries none: sent as `{}`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct NoArguments {}

/// The thread a request is about (the motions, `exceptionInfo`).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadArguments {
    pub thread_id: i64,
}

/// A source file, as a breakpoint or a stack frame names it: by `path` when it is on disk, else
/// only by `name` (a library's frame, generated code).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Source {
    /// The path, when the adapter gave a non-empty one.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref().filter(|p| !p.is_empty())
    }
}

/// A 1-based line an adapter reports, where 0 (or a field left out) means it has none: a frame
/// without source comes with line 0.
pub(crate) fn line<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Ok(Option::<u32>::deserialize(d)?.filter(|l| *l > 0))
}

#[cfg(test)]
mod tests;
