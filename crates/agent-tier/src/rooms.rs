//! What belongs to one conversation: a [`RoomId`] names it, a [`Rooms`] table keeps a family's
//! state per room, and [`Registry::end_room`](crate::Registry::end_room) ends a room's state in
//! every table at once.
//!
//! A call's room is its requester's id ([`Requester::id`](crate::Requester::id): over MCP, the
//! session), or [`RoomId::run`] for a call with no requester (the CLI's `call`, a harness that
//! embeds the registry and names nobody). A nested call (a kernel cell's `tool()`, a wrapper)
//! inherits its requester, so it is in the same room. What is shared by everyone on the root —
//! language servers, parse caches, the witness — is not kept here.
//!
//! Ending a room removes its entries; each entry ends when its last holder lets go (a running
//! call keeps its own `Arc` until it returns), so a family's `Drop` is where its children end.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Weak};

/// The name of one conversation's room. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoomId(Arc<str>);

impl RoomId {
    /// The room of calls that name no requester.
    pub fn run() -> Self {
        RoomId("run".into())
    }

    /// The room named `id` (a requester's id).
    pub fn new(id: &str) -> Self {
        RoomId(id.into())
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RoomId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RoomId({})", self.0)
    }
}

impl fmt::Display for RoomId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A table that can end one room's entries: what [`Registry::end_room`](crate::Registry::end_room)
/// calls. Implemented by [`Rooms`]; a family with another shape of per-room state implements it
/// itself and registers with [`Registry::on_room_end`](crate::Registry::on_room_end).
pub trait RoomEnd: Send + Sync + 'static {
    /// Drop what this table keeps for `room`; return how many entries it ended (0 or 1 for
    /// [`Rooms`]).
    fn end(&self, room: &RoomId) -> usize;
}

/// One family's state per room: made on a room's first use, ended with the room.
pub struct Rooms<T> {
    map: Mutex<HashMap<RoomId, Arc<T>>>,
}

impl<T: Send + Sync + 'static> Rooms<T> {
    /// A table whose rooms end when the registry ends them. The registry holds it weakly: the
    /// family that owns the table decides how long it lives.
    pub fn attach(registry: &crate::Registry) -> Arc<Self> {
        let rooms = Arc::new(Rooms {
            map: Mutex::new(HashMap::new()),
        });
        let weak: Weak<Rooms<T>> = Arc::downgrade(&rooms);
        registry.on_room_end(weak);
        rooms
    }

    /// The room's state, made by `make` on the room's first use.
    pub fn get_or_init(&self, room: &RoomId, make: impl FnOnce() -> T) -> Arc<T> {
        self.map
            .lock()
            .entry(room.clone())
            .or_insert_with(|| Arc::new(make()))
            .clone()
    }

    /// [`Rooms::get_or_init`] for state that is made as an `Arc` (one that keeps a weak
    /// reference to itself).
    pub fn get_or_init_arc(&self, room: &RoomId, make: impl FnOnce() -> Arc<T>) -> Arc<T> {
        self.map
            .lock()
            .entry(room.clone())
            .or_insert_with(make)
            .clone()
    }

    /// The room's state, if it has any.
    pub fn get(&self, room: &RoomId) -> Option<Arc<T>> {
        self.map.lock().get(room).cloned()
    }

    /// The rooms that have state, sorted.
    pub fn rooms(&self) -> Vec<RoomId> {
        let mut v: Vec<RoomId> = self.map.lock().keys().cloned().collect();
        v.sort();
        v
    }

    /// Take every room's state out (the run is ending).
    pub fn drain(&self) -> Vec<(RoomId, Arc<T>)> {
        self.map.lock().drain().collect()
    }
}

impl<T: Send + Sync + 'static> RoomEnd for Rooms<T> {
    fn end(&self, room: &RoomId) -> usize {
        // Dropped outside the lock: an entry's Drop may take time (killing children).
        let gone = self.map.lock().remove(room);
        usize::from(gone.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Registry, RunInfo};

    struct Marker(Arc<std::sync::atomic::AtomicUsize>);
    impl Drop for Marker {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn a_rooms_state_is_its_own_and_ends_with_it_only() {
        let registry = Registry::new(RunInfo::default());
        let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let rooms: Arc<Rooms<Marker>> = Rooms::attach(&registry);
        let (a, b) = (RoomId::new("mcp-1"), RoomId::new("mcp-2"));
        let first = rooms.get_or_init(&a, || Marker(dropped.clone()));
        let again = rooms.get_or_init(&a, || panic!("made twice"));
        assert!(Arc::ptr_eq(&first, &again));
        let other = rooms.get_or_init(&b, || Marker(dropped.clone()));
        assert!(!Arc::ptr_eq(&first, &other));
        drop((first, again, other));

        assert_eq!(registry.end_room(&a), 1);
        assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(rooms.get(&a).is_none());
        assert!(rooms.get(&b).is_some(), "another room's state is untouched");
        assert_eq!(registry.end_room(&a), 0, "ending twice ends nothing");
    }

    #[test]
    fn a_running_call_keeps_its_rooms_state_until_it_lets_go() {
        let registry = Registry::new(RunInfo::default());
        let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let rooms: Arc<Rooms<Marker>> = Rooms::attach(&registry);
        let held = rooms.get_or_init(&RoomId::run(), || Marker(dropped.clone()));
        registry.end_room(&RoomId::run());
        assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 0);
        drop(held);
        assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_table_dropped_by_its_family_is_skipped() {
        let registry = Registry::new(RunInfo::default());
        let rooms: Arc<Rooms<u8>> = Rooms::attach(&registry);
        rooms.get_or_init(&RoomId::run(), || 1);
        drop(rooms);
        assert_eq!(registry.end_room(&RoomId::run()), 0);
    }
}
