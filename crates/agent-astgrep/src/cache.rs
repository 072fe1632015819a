//! The run's parse cache: parsed trees keyed by path, language, size and modification time,
//! bounded in memory (least recently used out), so that later searches of a run over the same
//! files skip reading and re-parsing them. A file whose size or mtime changed is parsed again;
//! a file modified in the last few seconds is never cached (its mtime may not yet tell a later
//! write apart, as git's "racily clean" rule has it).
//!
//! A search sees the cache through a [`Visit`]. While it walks, a tree it parsed is kept at
//! once only when it fits in the free room; otherwise it waits, and when the walk ends it takes
//! the place of trees this search did not use, oldest first. So a search never evicts a tree it
//! is about to reach (the walk is parallel, its order unknown), and a search over more files
//! than the cache holds keeps the trees it found and reuses them next time, where plain LRU
//! evicts each before the same walk comes back to it.

use crate::lang::Lang;
use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::StrDoc;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

pub type Tree = AstGrep<StrDoc<Lang>>;

/// A file modified more recently than this is not cached.
const RACY: Duration = Duration::from_secs(2);

/// Bytes a held tree costs per byte of its source (the tree's copy of the source included).
/// Measured with `examples/tree_memory.rs` (2026-12-03, glibc malloc): RSS grown while every
/// tree of a corpus is held, over its source size, matched by malloc's bytes in use within
/// 0.3%: Django (python, 2,786 files, 16.6 MiB) 28.7×, typescript's `lib/*.js` (7 files,
/// 14.4 MiB) 24.3×, the cargo registry (rust, 3,018 files, 40 MiB) 31.4×, all 8,920 of its
/// files (120.5 MiB) 34.8×. Tree-sitter's nodes, C allocations, are most of it.
const BYTES_PER_SOURCE_BYTE: u64 = 32;

/// Bytes a parsed file held by the cache costs: its tree, its source, and the entry.
fn cost(source_len: usize) -> u64 {
    (source_len as u64).saturating_mul(BYTES_PER_SOURCE_BYTE) + 1024
}

type Key = (PathBuf, Lang);

struct Entry {
    size: u64,
    mtime: SystemTime,
    cost: u64,
    tick: u64,
    tree: Arc<Tree>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<Key, Entry>,
    /// Last use → key, oldest first.
    order: BTreeMap<u64, Key>,
    tick: u64,
    used: u64,
    hits: u64,
    misses: u64,
}

impl Inner {
    fn remove(&mut self, key: &Key) -> Option<Entry> {
        let old = self.map.remove(key)?;
        self.order.remove(&old.tick);
        self.used -= old.cost;
        Some(old)
    }

    fn insert(&mut self, key: Key, mut entry: Entry, evicted: &mut Vec<Entry>) {
        evicted.extend(self.remove(&key));
        self.tick += 1;
        entry.tick = self.tick;
        self.used += entry.cost;
        self.order.insert(entry.tick, key.clone());
        self.map.insert(key, entry);
    }
}

/// Parsed trees of this run, at most `capacity` (estimated) bytes.
pub struct ParseCache {
    capacity: u64,
    inner: Mutex<Inner>,
}

impl ParseCache {
    pub fn new(capacity: u64) -> Self {
        ParseCache {
            capacity,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing below panics while holding the lock.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One search's view of the cache; [`Visit::finish`] (or dropping it) admits the trees
    /// that waited for room.
    pub fn visit(&self) -> Visit<'_> {
        Visit {
            cache: self,
            since: self.lock().tick,
            state: Mutex::new(VisitState::default()),
        }
    }

    /// (hits, misses) so far.
    #[cfg(test)]
    pub fn counts(&self) -> (u64, u64) {
        let inner = self.lock();
        (inner.hits, inner.misses)
    }

    /// Estimated bytes held, and trees held.
    #[cfg(test)]
    pub fn used(&self) -> (u64, usize) {
        let inner = self.lock();
        (inner.used, inner.map.len())
    }
}

#[derive(Default)]
struct VisitState {
    /// Bytes of the trees this search used or kept: they are not evicted for its own trees.
    own: u64,
    /// Trees parsed by this search that wait for the walk's end, and their bytes.
    waiting: Vec<(Key, Entry)>,
    waiting_bytes: u64,
}

/// A search's view of the parse cache: see the module's documentation.
pub struct Visit<'a> {
    cache: &'a ParseCache,
    /// The cache's tick when the search began: trees used later are the search's own.
    since: u64,
    state: Mutex<VisitState>,
}

impl Visit<'_> {
    fn state(&self) -> std::sync::MutexGuard<'_, VisitState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached tree of `path` parsed as `lang`, when its size and mtime are unchanged.
    pub fn get(&self, path: &Path, lang: Lang, size: u64, mtime: SystemTime) -> Option<Arc<Tree>> {
        if self.cache.capacity == 0 {
            return None;
        }
        let mut inner = self.cache.lock();
        let key = (path.to_path_buf(), lang);
        let fresh = inner
            .map
            .get(&key)
            .is_some_and(|e| e.size == size && e.mtime == mtime);
        if !fresh {
            inner.misses += 1;
            let old = inner.remove(&key);
            drop(inner);
            // Freed (a walk over every node) after the lock is let go.
            drop(old);
            return None;
        }
        inner.hits += 1;
        inner.tick += 1;
        let tick = inner.tick;
        let held = &mut *inner;
        let entry = held.map.get_mut(&key)?;
        held.order.remove(&entry.tick);
        let first_use = entry.tick <= self.since;
        entry.tick = tick;
        held.order.insert(tick, key);
        let (tree, cost) = (entry.tree.clone(), entry.cost);
        // The visit's lock is never taken under the cache's: `put` takes them the other way.
        drop(inner);
        if first_use {
            self.state().own += cost;
        }
        Some(tree)
    }

    /// Offer `tree`, parsed from `path` as it was at `size` and `mtime`. It is kept now when
    /// it fits in the free room, else it waits for the walk's end when it could then take
    /// the place of trees this search did not use; otherwise it is let go.
    pub fn put(&self, path: &Path, lang: Lang, size: u64, mtime: SystemTime, tree: Arc<Tree>) {
        let capacity = self.cache.capacity;
        let cost = cost(tree.get_text().len());
        let recent = SystemTime::now()
            .duration_since(mtime)
            .map_or(true, |age| age < RACY);
        if recent || cost > capacity {
            return;
        }
        let key = (path.to_path_buf(), lang);
        let entry = Entry {
            size,
            mtime,
            cost,
            tick: 0,
            tree,
        };
        let mut state = self.state();
        if state.own + state.waiting_bytes + cost > capacity {
            // Could only be kept by evicting trees this search used: let go (`entry`, declared
            // before `state`, is freed after the lock is).
            return;
        }
        let mut evicted = Vec::new();
        let mut inner = self.cache.lock();
        let room = capacity.saturating_sub(inner.used);
        let replaces = inner.map.get(&key).map_or(0, |e| e.cost);
        if cost <= room + replaces {
            inner.insert(key, entry, &mut evicted);
            state.own += cost;
        } else {
            state.waiting_bytes += cost;
            state.waiting.push((key, entry));
        }
        drop(inner);
        drop(state);
        // Freed after the locks are let go: freeing walks every node.
        drop(evicted);
    }

    /// Admit the trees that waited, each in place of the least recently used trees that this
    /// search did not use; one that finds no such room is let go.
    pub fn finish(self) {}
}

impl Drop for Visit<'_> {
    fn drop(&mut self) {
        let waiting = std::mem::take(&mut self.state().waiting);
        if waiting.is_empty() {
            return;
        }
        let capacity = self.cache.capacity;
        let mut evicted = Vec::new();
        let mut inner = self.cache.lock();
        let mut waiting = waiting.into_iter();
        'admit: while let Some((key, entry)) = waiting.next() {
            evicted.extend(inner.remove(&key));
            while inner.used + entry.cost > capacity {
                match inner.order.first_key_value() {
                    Some((&t, oldest)) if t <= self.since => {
                        let oldest = oldest.clone();
                        evicted.extend(inner.remove(&oldest));
                    }
                    // Only trees this search used are left: the rest are let go.
                    _ => {
                        evicted.push(entry);
                        evicted.extend(waiting.map(|(_, e)| e));
                        break 'admit;
                    }
                }
            }
            inner.insert(key, entry, &mut evicted);
        }
        drop(inner);
        drop(evicted);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

    use super::*;
    use crate::engine::{self, Budget};
    use crate::{AstGrepConfig, pattern};
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    fn budget() -> Budget {
        Budget {
            deadline: Instant::now() + Duration::from_secs(60),
            cancelled: Arc::new(AtomicBool::new(false)),
        }
    }

    fn write_old(path: &Path, text: &str, age_secs: u64) {
        std::fs::write(path, text).unwrap();
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
            .unwrap();
    }

    fn lines(r: &engine::SearchResult) -> Vec<(String, usize, BTreeMap<String, String>)> {
        r.matches
            .iter()
            .map(|m| (m.file.clone(), m.line, m.captures.clone()))
            .collect()
    }

    #[test]
    fn a_second_search_reuses_the_trees_and_a_changed_file_is_parsed_again() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            write_old(
                &dir.path().join(format!("m{i}.py")),
                &format!("print({i})\nprint(x{i})\n"),
                100,
            );
        }
        let config = AstGrepConfig::default();
        let cache = ParseCache::new(config.cache_bytes);
        let scope = engine::scope(dir.path(), None, Some("python")).unwrap();
        let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
        let first = engine::search(&scope, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (0, 5));
        let second = engine::search(&scope, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (5, 5));
        assert_eq!(lines(&first), lines(&second));
        assert_eq!(first.stats, second.stats);
        assert_eq!(first.matches.len(), 10);

        // Another size, and the same size with another mtime: both parsed again.
        write_old(&dir.path().join("m0.py"), "print(changed)\n", 50);
        write_old(&dir.path().join("m1.py"), "print(9)\nprint(y1)\n", 40);
        let third = engine::search(&scope, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (5 + 3, 5 + 2));
        let m0: Vec<_> = third.matches.iter().filter(|m| m.file == "m0.py").collect();
        assert_eq!(m0.len(), 1);
        assert_eq!(m0[0].captures["X"], "changed");
        let m1: Vec<_> = third.matches.iter().filter(|m| m.file == "m1.py").collect();
        assert_eq!(m1[0].captures["X"], "9");
        assert_eq!(m1[1].captures["X"], "y1");

        // A file written just now is not cached (its mtime may not change on the next write).
        std::fs::write(dir.path().join("m2.py"), "print(now)\n").unwrap();
        engine::search(&scope, &compiled, &config, &cache, &budget());
        let (hits, misses) = cache.counts();
        engine::search(&scope, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (hits + 4, misses + 1));
    }

    #[test]
    fn the_cache_stays_within_its_capacity_least_recently_used_out() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("print(1)\n{}", "x = 1\n".repeat(100));
        for i in 0..4 {
            write_old(&dir.path().join(format!("m{i}.py")), &text, 100);
        }
        // Room for two trees.
        let cache = ParseCache::new(2 * cost(text.len()) + 10);
        let config = AstGrepConfig::default();
        let scope = engine::scope(dir.path(), None, Some("python")).unwrap();
        let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
        let r = engine::search(&scope, &compiled, &config, &cache, &budget());
        assert_eq!(r.matches.len(), 4);
        let (used, held) = cache.used();
        assert_eq!(held, 2);
        assert!(used <= 2 * cost(text.len()) + 10);
    }

    #[test]
    fn a_walk_over_more_than_the_capacity_keeps_what_it_found_and_a_later_one_evicts_it() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("print(1)\n{}", "x = 1\n".repeat(100));
        for rel in [
            "a/m0.py", "a/m1.py", "a/m2.py", "a/m3.py", "b/n0.py", "b/n1.py",
        ] {
            std::fs::create_dir_all(dir.path().join(rel).parent().unwrap()).unwrap();
            write_old(&dir.path().join(rel), &text, 100);
        }
        let cache = ParseCache::new(2 * cost(text.len()) + 10);
        let config = AstGrepConfig::default();
        let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
        let a = engine::scope(dir.path(), Some("a"), Some("python")).unwrap();
        let b = engine::scope(dir.path(), Some("b"), Some("python")).unwrap();
        engine::search(&a, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (0, 4));
        // Plain LRU would have evicted each tree before the walk came back to it.
        let r = engine::search(&a, &compiled, &config, &cache, &budget());
        assert_eq!(r.matches.len(), 4);
        assert_eq!(cache.counts(), (2, 6));
        // Another search's files take the place of trees it did not use.
        engine::search(&b, &compiled, &config, &cache, &budget());
        engine::search(&b, &compiled, &config, &cache, &budget());
        assert_eq!(cache.counts(), (4, 8));
        assert_eq!(cache.used().1, 2);
    }

    #[test]
    fn concurrent_searches_share_the_cache_without_blocking_or_overflowing_it() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("print(1)\n{}", "x = 1\n".repeat(100));
        for i in 0..60 {
            let rel = format!("{}/m{i}.py", ["a", "b", "c"][i % 3]);
            std::fs::create_dir_all(dir.path().join(&rel).parent().unwrap()).unwrap();
            write_old(&dir.path().join(rel), &text, 100);
        }
        let capacity = 25 * cost(text.len()) + 10;
        let cache = Arc::new(ParseCache::new(capacity));
        let root = dir.path().to_path_buf();
        let (done, finished) = std::sync::mpsc::channel();
        for t in 0..4 {
            let (cache, root, done) = (cache.clone(), root.clone(), done.clone());
            std::thread::spawn(move || {
                let config = AstGrepConfig {
                    threads: 4,
                    ..AstGrepConfig::default()
                };
                let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
                for round in 0..30 {
                    let sub = [None, Some("a"), Some("b"), Some("c")][(t + round) % 4];
                    let scope = engine::scope(&root, sub, Some("python")).unwrap();
                    let r = engine::search(&scope, &compiled, &config, &cache, &budget());
                    assert_eq!(r.matches.len(), if sub.is_none() { 60 } else { 20 });
                }
                done.send(()).unwrap();
            });
        }
        for _ in 0..4 {
            // A lock-order deadlock would hang here: fail instead.
            finished
                .recv_timeout(Duration::from_secs(60))
                .expect("every search thread finishes");
        }
        let (used, held) = cache.used();
        assert!(used <= capacity, "{used} > {capacity}");
        assert!(held <= 25);
        assert!(cache.counts().0 > 0, "later searches hit the cache");
    }
}
