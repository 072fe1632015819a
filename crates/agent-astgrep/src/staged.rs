//! The edits `ast_edit` staged, per room (conversation): one conversation cannot see, accept or
//! discard another's. Their ids are numbered across the run, so an id names one edit only.

use agent_tier::workspace::FileChange;
use agent_tier::{Registry, ResourceKey, RoomId, Rooms};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The resource `ast_edit` and `resolve` hold (per room): one call at a time stages or resolves
/// a room's edits.
pub(crate) const RESOURCE: ResourceKey = ResourceKey::named("astgrep.edits");

/// Every room's staged edits and the run's edit numbering.
pub(crate) struct StagedEdits {
    rooms: Arc<Rooms<Mutex<Edits>>>,
    next: AtomicU64,
}

impl StagedEdits {
    /// A table whose rooms end with the registry's.
    pub(crate) fn attach(registry: &Registry) -> Self {
        StagedEdits {
            rooms: Rooms::attach(registry),
            next: AtomicU64::new(0),
        }
    }

    /// The room's staged edits.
    pub(crate) fn of(&self, room: &RoomId) -> Arc<Mutex<Edits>> {
        self.rooms.get_or_init(room, Mutex::default)
    }

    /// Stage `staged` in `room`; its id (`edit_N`).
    pub(crate) fn stage(&self, room: &RoomId, staged: Staged) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.of(room).lock().slots.insert(n, Slot::Pending(staged));
        format!("edit_{n}")
    }
}

/// One room's edits by number.
#[derive(Default)]
pub(crate) struct Edits {
    pub(crate) slots: BTreeMap<u64, Slot>,
}

/// An edit: waiting for `resolve`, or how it was resolved.
pub(crate) enum Slot {
    Pending(Staged),
    Accepted,
    Discarded,
}

/// What an edit would write.
pub(crate) struct Staged {
    pub(crate) changes: Vec<FileChange>,
    pub(crate) files: Vec<String>,
    pub(crate) replacements: usize,
}
