//! The edits `ast_edit` staged, per room (conversation): one conversation cannot see, accept or
//! discard another's. Their ids are numbered across the run, so an id names one edit only.

use crate::error::AstGrepError;
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

    /// Stage `staged` in `room`; its id (`edit_N`). Refused when the room's pending edits would
    /// hold more than `cap` bytes (old and new texts; `AstGrepConfig::staged_bytes`): a
    /// conversation that stages edit after edit without resolving them cannot grow the host
    /// without bound. The refusal names the edits to resolve.
    pub(crate) fn stage(
        &self,
        room: &RoomId,
        staged: Staged,
        cap: u64,
    ) -> Result<String, AstGrepError> {
        let edits = self.of(room);
        let mut edits = edits.lock();
        let held: u64 = edits
            .slots
            .values()
            .filter_map(|s| match s {
                Slot::Pending(p) => Some(p.bytes()),
                _ => None,
            })
            .sum();
        if held + staged.bytes() > cap {
            let pending = edits.pending();
            return Err(AstGrepError::StagedFull {
                held,
                adding: staged.bytes(),
                cap,
                pending: pending.join(", "),
            });
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        edits.slots.insert(n, Slot::Pending(staged));
        Ok(format!("edit_{n}"))
    }
}

/// One room's edits by number.
#[derive(Default)]
pub(crate) struct Edits {
    pub(crate) slots: BTreeMap<u64, Slot>,
}

impl Edits {
    /// The ids of the edits waiting for `resolve` (`edit_N`), in order.
    pub(crate) fn pending(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter(|(_, s)| matches!(s, Slot::Pending(_)))
            .map(|(n, _)| format!("edit_{n}"))
            .collect()
    }
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

impl Staged {
    /// The bytes it holds: every file's old and new text.
    fn bytes(&self) -> u64 {
        self.changes
            .iter()
            .map(|c| {
                (c.expected.as_ref().map_or(0, Vec::len) + c.new.as_ref().map_or(0, Vec::len))
                    as u64
            })
            .sum()
    }
}
