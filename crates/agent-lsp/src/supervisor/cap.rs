//! The cap on running servers (`max_servers`): which slots count against it, whether a start
//! may go ahead, and the eviction that makes room.
//!
//! Before a server starts, the servers running or starting are counted. At the cap, the least
//! recently used *idle* one (no call holds it, so no request is in flight; "used" is the last
//! message the client sent it, [`Server::last_used`]) is shut down through the normal shutdown
//! path and its slot marked evicted: its next call starts it again, without a crash backoff.
//! When every running server is busy, the start waits (up to the request timeout) for one to
//! become idle, then fails naming the cap and `max_servers`.

use super::{Entry, Key, Slot, Supervisor};
use crate::client::Server;
use agent_tier::schemars::{self, JsonSchema};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Instant;
use tokio::sync::OwnedMutexGuard;

/// Whether a slot counts against the cap.
#[derive(Default)]
pub(super) enum Occupancy {
    #[default]
    Free,
    /// A start is under way (reserved before the process is spawned).
    Starting,
    /// The slot's server (weak: it is the slot that keeps it alive).
    Running(Weak<Server>),
}

/// What the cap allows a start to do.
pub(super) enum Room {
    /// Below the cap: start (the slot is now counted as starting).
    Free,
    /// At the cap: stop this idle server first (its slot is locked and no longer counted).
    Evict(Key, OwnedMutexGuard<Slot>),
    /// At the cap with every running server busy.
    Full { running: usize },
}

/// A start's place under the cap; given back (the slot counted as free) unless the start
/// succeeded, also when the call is dropped half-way.
pub(super) struct Reservation<'a> {
    pub(super) sup: &'a Supervisor,
    pub(super) key: Key,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if let Some(e) = self.sup.slots.lock().get_mut(&self.key)
            && matches!(e.occupancy, Occupancy::Starting)
        {
            e.occupancy = Occupancy::Free;
        }
    }
}

/// The least recently used of the idle servers: `(key, last used, busy)` of each running one.
fn choose_victim<K: Clone>(running: &[(K, Instant, bool)]) -> Option<K> {
    running
        .iter()
        .filter(|(_, _, busy)| !busy)
        .min_by_key(|(_, used, _)| *used)
        .map(|(k, _, _)| k.clone())
}

/// The cap on running servers, as `status` shows it.
#[derive(Debug, Clone, serde::Serialize, JsonSchema)]
pub struct CapStatus {
    /// How many may run at once.
    pub max_servers: usize,
    /// Where that number came from.
    pub from: String,
    /// How many run now.
    pub running: usize,
    /// How many were stopped to stay within the cap in this run.
    pub evictions: u64,
}

impl Supervisor {
    pub(super) fn set_occupancy(&self, key: &Key, occupancy: Occupancy) {
        if let Some(e) = self.slots.lock().get_mut(key) {
            e.occupancy = occupancy;
        }
    }

    /// Whether `key` may start now, under the cap (see the module docs).
    pub(super) fn room(&self, key: &Key) -> Room {
        let mut map = self.slots.lock();
        let mut counted = 0;
        let mut running: Vec<(Key, Instant, bool)> = Vec::new();
        let mut idle: HashMap<Key, OwnedMutexGuard<Slot>> = HashMap::new();
        for (k, e) in map.iter() {
            if k == key {
                continue;
            }
            let srv = match &e.occupancy {
                Occupancy::Free => continue,
                Occupancy::Starting => {
                    counted += 1;
                    continue;
                }
                Occupancy::Running(w) => match w.upgrade() {
                    Some(srv) if srv.exited().is_none() => srv,
                    _ => continue,
                },
            };
            counted += 1;
            let used = srv.last_used();
            drop(srv);
            // A slot locked by someone else is in use; one whose server a call holds (a clone
            // besides the slot's own) is busy.
            match e.slot.clone().try_lock_owned() {
                Ok(g)
                    if g.server
                        .as_ref()
                        .is_some_and(|s| Arc::strong_count(s) == 1 && s.exited().is_none()) =>
                {
                    running.push((k.clone(), used, false));
                    idle.insert(k.clone(), g);
                }
                _ => running.push((k.clone(), used, true)),
            }
        }
        let start = |map: &mut HashMap<Key, Entry>| {
            map.entry(key.clone()).or_default().occupancy = Occupancy::Starting;
        };
        if counted < self.cfg.max_servers {
            start(&mut map);
            return Room::Free;
        }
        match choose_victim(&running).and_then(|k| idle.remove(&k).map(|g| (k, g))) {
            Some((victim, guard)) => {
                if let Some(e) = map.get_mut(&victim) {
                    e.occupancy = Occupancy::Free;
                }
                start(&mut map);
                Room::Evict(victim, guard)
            }
            None => Room::Full { running: counted },
        }
    }

    /// Stop `victim`'s server to make room for `for_id` at `for_root` (its slot stays, marked
    /// evicted, and starts again at its next call without a crash backoff).
    pub(super) async fn evict(
        &self,
        victim: Key,
        mut slot: OwnedMutexGuard<Slot>,
        for_id: &str,
        for_root: &str,
    ) {
        let (id, root) = (&victim.0, victim.1.display().to_string());
        if let Some(srv) = slot.server.take() {
            let n = self.evictions.fetch_add(1, Ordering::Relaxed) + 1;
            let idle_s = srv.last_used().elapsed().as_secs();
            tracing::info!(
                target: "agent_lsp::supervisor",
                notice = true,
                server = %id,
                root = %root,
                pid = srv.pid,
                max_servers = self.cfg.max_servers,
                evictions = n,
                "stopping language server {id} for {root} (idle for {idle_s} s, the least recently used) to start {for_id} for {for_root} within the cap of {} running servers (`max_servers`, {}); it starts again at its next use",
                self.cfg.max_servers,
                self.cfg.max_servers_from
            );
            srv.shutdown().await;
        }
        slot.evicted = true;
        // A stop is not a crash: the next start waits for no backoff.
        slot.last_crash = None;
    }

    /// How many servers may run and run now, and the evictions so far.
    pub fn cap(&self) -> CapStatus {
        CapStatus {
            max_servers: self.cfg.max_servers,
            from: self.cfg.max_servers_from.clone(),
            running: self.running().len(),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::choose_victim;
    use std::time::{Duration, Instant};

    #[test]
    fn the_least_recently_used_idle_server_is_chosen() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        // "a" was used longest ago but is busy: "b", the oldest idle one, goes.
        let running = [("a", at(1), true), ("c", at(3), false), ("b", at(2), false)];
        assert_eq!(choose_victim(&running), Some("b"));
        // Every one busy: none.
        let busy = [("a", at(1), true), ("b", at(2), true)];
        assert_eq!(choose_victim(&busy), None);
        assert_eq!(choose_victim::<&str>(&[]), None);
        // Used since: the order follows the last use, not the start.
        let running = [("a", at(5), false), ("b", at(4), false)];
        assert_eq!(choose_victim(&running), Some("b"));
    }
}
