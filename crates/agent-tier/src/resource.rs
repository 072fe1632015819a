//! What a call holds while it runs: a [`ResourceKey`] names a resource that calls share (a debug
//! session, a kernel, the workspace's files), and the registry runs the calls that hold the same
//! key one at a time ([`Tool::parallel_safe`](crate::Tool::parallel_safe) false).
//!
//! A key is a name, compared as written: two tools share a resource exactly when their keys are
//! equal. A key that several tools share is declared once, as a constant, by the crate that owns
//! the resource ([`ResourceKey::FILES`] here, for the workspace's files; a family's own keys in the
//! family), so that no tool spells it again.

use crate::RoomId;
use std::borrow::Cow;
use std::fmt;

/// The name of a resource that calls hold one at a time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceKey(Cow<'static, str>);

impl ResourceKey {
    /// The workspace's files as one resource: what the tools that write files under the root
    /// share, so that two writes never interleave their check of what a file holds with the other's
    /// write ([`workspace::apply_all`](crate::workspace::apply_all) locks each file besides).
    pub const FILES: ResourceKey = ResourceKey::named("files");

    /// A key from a name known at compile time, for a constant.
    pub const fn named(name: &'static str) -> Self {
        ResourceKey(Cow::Borrowed(name))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for ResourceKey {
    fn from(name: String) -> Self {
        ResourceKey(Cow::Owned(name))
    }
}

impl From<&'static str> for ResourceKey {
    fn from(name: &'static str) -> Self {
        ResourceKey::named(name)
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the registry locks for one call: a resource, and the room when the resource is each
/// room's own ([`Effects::per_room`](crate::Effects::per_room)). Shown `key` or `key@room`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Held {
    resource: ResourceKey,
    room: Option<RoomId>,
}

impl Held {
    /// `resource` across the run, or only in `room`.
    pub(crate) fn new(resource: ResourceKey, room: Option<RoomId>) -> Self {
        Held { resource, room }
    }
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.room {
            None => write!(f, "{}", self.resource),
            Some(room) => write!(f, "{}@{room}", self.resource),
        }
    }
}
