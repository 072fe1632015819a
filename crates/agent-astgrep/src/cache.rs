//! The run's parse cache: parsed trees keyed by path, language, size and modification time,
//! bounded in memory (least recently used out), so that later searches of a run over the same
//! files skip reading and re-parsing them. A file whose size or mtime changed is parsed again;
//! a file modified in the last few seconds is never cached (its mtime may not yet tell a later
//! write apart, as git's "racily clean" rule has it).

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

struct Entry {
    size: u64,
    mtime: SystemTime,
    cost: u64,
    tick: u64,
    tree: Arc<Tree>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<(PathBuf, Lang), Entry>,
    /// Last use → key, oldest first.
    order: BTreeMap<u64, (PathBuf, Lang)>,
    tick: u64,
    used: u64,
    hits: u64,
    misses: u64,
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

    /// The cached tree of `path` parsed as `lang`, when its size and mtime are unchanged.
    pub fn get(&self, path: &Path, lang: Lang, size: u64, mtime: SystemTime) -> Option<Arc<Tree>> {
        if self.capacity == 0 {
            return None;
        }
        let mut guard = self.lock();
        let inner = &mut *guard;
        let key = (path.to_path_buf(), lang);
        let fresh = inner
            .map
            .get(&key)
            .is_some_and(|e| e.size == size && e.mtime == mtime);
        if !fresh {
            inner.misses += 1;
            let old = inner.map.remove(&key);
            if let Some(old) = &old {
                inner.order.remove(&old.tick);
                inner.used -= old.cost;
            }
            drop(guard);
            // Freed (a walk over every node) after the lock is let go.
            drop(old);
            return None;
        }
        inner.hits += 1;
        inner.tick += 1;
        let tick = inner.tick;
        let entry = inner.map.get_mut(&key)?;
        inner.order.remove(&entry.tick);
        entry.tick = tick;
        inner.order.insert(tick, key);
        Some(entry.tree.clone())
    }

    /// A mark of this moment, for [`ParseCache::put`]: a search takes one when it starts.
    pub fn now(&self) -> u64 {
        self.lock().tick
    }

    /// Keep `tree`, parsed from `path` as it was at `size` and `mtime`, evicting the least
    /// recently used trees beyond the capacity — but none used since `since` (the start of
    /// the search that parsed it): when only those are left, `tree` is not kept. So a search
    /// over more than the capacity keeps the trees it found and reuses them next time, where
    /// plain LRU would evict each before the same walk reaches it again (no hits at all).
    pub fn put(
        &self,
        path: &Path,
        lang: Lang,
        size: u64,
        mtime: SystemTime,
        tree: Arc<Tree>,
        since: u64,
    ) {
        let cost = cost(tree.get_text().len());
        let recent = SystemTime::now()
            .duration_since(mtime)
            .map_or(true, |age| age < RACY);
        if recent || cost > self.capacity {
            return;
        }
        // Trees let go of are freed after the lock is (freeing walks every node: under the
        // lock it kept the other threads waiting, and a search over more than the capacity
        // took twice as long as one without the cache).
        let mut evicted = Vec::new();
        let mut guard = self.lock();
        let inner = &mut *guard;
        let key = (path.to_path_buf(), lang);
        if let Some(old) = inner.map.remove(&key) {
            inner.order.remove(&old.tick);
            inner.used -= old.cost;
            evicted.push(old);
        }
        while inner.used + cost > self.capacity {
            match inner.order.first_key_value() {
                Some((&t, _)) if t <= since => {}
                // Only trees this search used are left: they stay, this one is not kept.
                _ => {
                    drop(guard);
                    drop(evicted);
                    return;
                }
            }
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(e) = inner.map.remove(&oldest) {
                inner.used -= e.cost;
                evicted.push(e);
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        if let Some(old) = inner.map.insert(
            key.clone(),
            Entry {
                size,
                mtime,
                cost,
                tick,
                tree,
            },
        ) {
            inner.order.remove(&old.tick);
            inner.used -= old.cost;
            evicted.push(old);
        }
        inner.order.insert(tick, key);
        inner.used += cost;
        drop(guard);
        drop(evicted);
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
}
