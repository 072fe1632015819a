//! Freeing a large parsed tree off the walk's thread. tree-sitter frees a tree node by node
//! (`ts_subtree_release`: about a tenth of a parse-bound search's CPU), and the tree of a
//! walk's last large file is freed on the way to the answer: the walk's threads are joined
//! before the result is built. So a tree parsed from a large file is handed to one background
//! thread that frees it while the walk goes on and the answer is rendered; a small one is
//! freed where it was used, as before (a third thread freeing small trees would only take
//! turns with the walk's). At most [`IN_FLIGHT`] trees wait for that thread; past them the walk
//! frees its own, so what waits stays bounded. A process that exits while a tree waits never
//! frees it: the system takes back the pages.
//!
//! Owns: the freeing thread and its queue. Never: decides what is kept (the cache does).

use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

/// A file at least this large has its tree freed off the walk's thread (its tree is some 25
/// MiB and more: the charge `cache.rs` measured is ~25–35 bytes per source byte).
pub const LARGE: usize = 1 << 20;

/// The most trees waiting to be freed.
pub const IN_FLIGHT: usize = 2;

/// Something to drop.
type Retired = Box<dyn Send>;

/// One freeing thread and its bounded queue.
pub struct Retirer {
    queue: Option<SyncSender<Retired>>,
}

impl Retirer {
    /// A retirer with its own thread (`None` in place of one when no thread could be started:
    /// everything is then freed where it was used).
    pub fn new(in_flight: usize) -> Self {
        let (tx, rx) = sync_channel::<Retired>(in_flight);
        let started = std::thread::Builder::new()
            .name("astgrep-free".into())
            .spawn(move || {
                for retired in rx {
                    drop(retired);
                }
            });
        Retirer {
            queue: started.ok().map(|_| tx),
        }
    }

    /// Free `value` (what was parsed from `source_len` bytes): on the freeing thread when the
    /// source is [`LARGE`] and the queue has room, here otherwise.
    pub fn retire<T: Send + 'static>(&self, value: T, source_len: usize) {
        if source_len < LARGE {
            return drop(value);
        }
        let Some(queue) = &self.queue else {
            return drop(value);
        };
        match queue.try_send(Box::new(value)) {
            Ok(()) => {}
            Err(TrySendError::Full(v) | TrySendError::Disconnected(v)) => drop(v),
        }
    }
}

/// The process's retirer, started when the first large tree is freed.
pub fn retire<T: Send + 'static>(value: T, source_len: usize) {
    static RETIRER: OnceLock<Retirer> = OnceLock::new();
    if source_len < LARGE {
        return drop(value);
    }
    RETIRER
        .get_or_init(|| Retirer::new(IN_FLIGHT))
        .retire(value, source_len);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, Sender, channel};
    use std::thread::ThreadId;
    use std::time::Duration;

    /// Reports the thread it is dropped on; waits for `go` first when it has one.
    struct Probe {
        id: u32,
        dropped: Sender<(u32, ThreadId)>,
        go: Option<Receiver<()>>,
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            if let Some(go) = &self.go {
                let _ = go.recv();
            }
            let _ = self.dropped.send((self.id, std::thread::current().id()));
        }
    }

    fn probe(id: u32, dropped: &Sender<(u32, ThreadId)>) -> Probe {
        Probe {
            id,
            dropped: dropped.clone(),
            go: None,
        }
    }

    /// Waiting for an event (never timing one): a minute is "never" for a drop.
    const NEVER: Duration = Duration::from_secs(60);

    #[test]
    fn a_large_tree_is_freed_on_the_freeing_thread_and_a_small_one_here() {
        let (tx, rx) = channel();
        let here = std::thread::current().id();
        let retirer = Retirer::new(IN_FLIGHT);
        retirer.retire(probe(1, &tx), LARGE - 1);
        // Freed before `retire` returned, on this thread.
        assert_eq!(rx.try_recv().unwrap(), (1, here));
        retirer.retire(probe(2, &tx), LARGE);
        let (id, on) = rx.recv_timeout(NEVER).unwrap();
        assert_eq!(id, 2);
        assert_ne!(on, here);
    }

    #[test]
    fn past_the_queue_the_walk_frees_its_own() {
        let (tx, rx) = channel();
        let here = std::thread::current().id();
        let retirer = Retirer::new(2);
        // The first is taken by the freeing thread and holds it until `go`.
        let (go_tx, go_rx) = channel();
        retirer.retire(
            Probe {
                id: 0,
                dropped: tx.clone(),
                go: Some(go_rx),
            },
            LARGE,
        );
        // The queue holds two: the held one's place (until the thread takes it) and one more,
        // or two more once it has taken it. The rest are freed here, at once.
        let mut queued = 0;
        let mut inline = Vec::new();
        for id in 1..=8 {
            retirer.retire(probe(id, &tx), LARGE);
            if let Ok((i, on)) = rx.try_recv() {
                assert_eq!(on, here, "only this thread can have freed {i} yet");
                inline.push(i);
            } else {
                queued += 1;
            }
        }
        assert!(queued <= 2, "{queued} waited, {inline:?} freed here");
        assert_eq!(inline.len(), 8 - queued);
        go_tx.send(()).unwrap();
        // Everything is freed in the end: the held one and the queued ones on the thread.
        let mut rest = Vec::new();
        for _ in 0..=queued {
            let (id, on) = rx.recv_timeout(NEVER).unwrap();
            assert_ne!(on, here);
            rest.push(id);
        }
        rest.sort();
        assert_eq!(rest[0], 0);
        assert_eq!(rest.len() + inline.len(), 9);
    }
}
