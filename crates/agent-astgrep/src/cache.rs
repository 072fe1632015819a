//! The run's parse cache: parsed trees keyed by path and language, each kept with the file's
//! [`Fingerprint`] (size, mtime, ctime) when it was read, bounded in memory (least recently
//! used out), so that later searches of a run over the same files skip reading and re-parsing
//! them. A file whose fingerprint changed is parsed again; a file changed (by its ctime) in the
//! last few seconds is never cached (`fingerprint.rs`: git's "racily clean" rule).
//!
//! A search sees the cache through a [`Visit`], which knows which files the search can reach
//! (its language, or every language present for a search by directory scan; its directory and
//! glob). The walk is parallel and its order unknown, so a search never evicts a tree it can
//! still reach: a tree it parsed takes free room, or the place of the least recently used trees
//! that it cannot reach (another directory, another language); when neither is there the tree
//! is let go. So the trees a search finds cached are the same
//! whatever order its walk takes, a search over more files than the cache holds keeps the trees
//! it found (plain LRU evicts each before the same walk comes back to it), and the cache never
//! holds more than its capacity, however many searches run at once.

use crate::fingerprint::{Fingerprint, RACY};
use crate::lang::Lang;
use crate::memo::MatchMemo;
use crate::tokens::TokenIndex;
use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::StrDoc;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub type Tree = AstGrep<StrDoc<Lang>>;

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
    print: Fingerprint,
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
    /// The most `used` has ever been.
    peak: u64,
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
        self.peak = self.peak.max(self.used);
        self.order.insert(entry.tick, key.clone());
        self.map.insert(key, entry);
    }
}

/// Parsed trees of this run, at most `capacity` (estimated) bytes, and the run's token index
/// (`tokens`), which decides which files a search reads and which trees are worth keeping.
pub struct ParseCache {
    capacity: u64,
    inner: Mutex<Inner>,
    /// None when caching is off (`capacity` 0): every search is a first search.
    index: Option<Arc<TokenIndex>>,
    /// The run's memo of finished searches; None when caching is off.
    memo: Option<Arc<MatchMemo>>,
    /// A file changed (by its ctime) more recently than this is not cached.
    racy: Duration,
}

impl ParseCache {
    /// A cache of trees only (no memo: a repeated search would be remembered) that keeps
    /// files changed just now too, as its index does: for tests that write files and search
    /// them at once (the racy rule has its own test).
    #[cfg(test)]
    pub fn new(capacity: u64) -> Self {
        ParseCache {
            racy: Duration::ZERO,
            ..ParseCache::with_index(
                capacity,
                Arc::new(TokenIndex::indexing_recent(crate::tokens::MAX_TOKENS)),
                Arc::new(MatchMemo::new(0)),
            )
        }
    }

    /// A cache whose searches use (and fill) `index` and `memo`; with `capacity` 0 they use
    /// neither.
    pub fn with_index(capacity: u64, index: Arc<TokenIndex>, memo: Arc<MatchMemo>) -> Self {
        ParseCache {
            capacity,
            inner: Mutex::new(Inner::default()),
            index: (capacity > 0).then_some(index),
            memo: (capacity > 0).then_some(memo),
            racy: RACY,
        }
    }

    /// The token index searches use, when caching is on.
    pub fn index(&self) -> Option<&TokenIndex> {
        self.index.as_deref()
    }

    /// The run wrote these files: what the index, the memo and the trees knew of them goes (a
    /// rewrite in the same clock tick may keep a file's whole fingerprint).
    pub fn changed(&self, paths: &[PathBuf]) {
        if let Some(index) = &self.index {
            index.changed(paths);
        }
        if let Some(memo) = &self.memo {
            memo.changed(paths);
        }
        let mut inner = self.inner.lock();
        let keys: Vec<Key> = inner
            .map
            .keys()
            .filter(|(p, _)| paths.contains(p))
            .cloned()
            .collect();
        for key in keys {
            inner.remove(&key);
        }
    }

    /// The memo of finished searches, when caching is on.
    pub fn memo(&self) -> Option<&MatchMemo> {
        self.memo.as_deref()
    }

    /// One search's view of the cache. `reaches(path, lang)` says whether the search could
    /// visit that file as that language: a tree it reaches is never evicted for its own.
    pub fn visit<R>(&self, reaches: R) -> Visit<'_, R>
    where
        R: Fn(&Path, Lang) -> bool + Sync,
    {
        let since = self.inner.lock().tick;
        Visit {
            cache: self,
            since,
            reaches,
            scanned: AtomicU64::new(0),
        }
    }

    /// Forget the hits and misses so far.
    #[cfg(test)]
    pub fn reset_counts(&self) {
        let mut inner = self.inner.lock();
        inner.hits = 0;
        inner.misses = 0;
    }

    /// (hits, misses) so far.
    #[cfg(test)]
    pub fn counts(&self) -> (u64, u64) {
        let inner = self.inner.lock();
        (inner.hits, inner.misses)
    }

    /// Estimated bytes held, trees held, and the most bytes ever held.
    #[cfg(test)]
    pub fn used(&self) -> (u64, usize, u64) {
        let inner = self.inner.lock();
        (inner.used, inner.map.len(), inner.peak)
    }
}

/// A search's view of the parse cache: see the module's documentation.
pub struct Visit<'a, R> {
    cache: &'a ParseCache,
    /// The cache's tick when the search began: a tree last used later is one this search used
    /// (or another search kept meanwhile), and is not evicted for this search's trees.
    since: u64,
    reaches: R,
    /// Trees last used before this tick were looked at for eviction: the ones left are
    /// reachable. Only changed under the cache's lock.
    scanned: AtomicU64,
}

impl<R: Fn(&Path, Lang) -> bool + Sync> Visit<'_, R> {
    /// The cached tree of `path` parsed as `lang`, when its fingerprint is unchanged.
    pub fn get(&self, path: &Path, lang: Lang, print: Fingerprint) -> Option<Arc<Tree>> {
        if self.cache.capacity == 0 {
            return None;
        }
        let mut inner = self.cache.inner.lock();
        let key = (path.to_path_buf(), lang);
        let fresh = inner.map.get(&key).is_some_and(|e| e.print == print);
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
        entry.tick = tick;
        held.order.insert(tick, key);
        Some(entry.tree.clone())
    }

    /// Offer `tree`, parsed from `path` as it was at `print`. It is kept when it fits in the
    /// free room or in the place of trees this search neither used nor reaches; otherwise it
    /// is let go.
    pub fn put(&self, path: &Path, lang: Lang, print: Fingerprint, tree: Arc<Tree>) {
        let capacity = self.cache.capacity;
        let cost = cost(tree.get_text().len());
        if print.recent(self.cache.racy) || cost > capacity {
            return;
        }
        let key = (path.to_path_buf(), lang);
        let entry = Entry {
            print,
            cost,
            tick: 0,
            tree,
        };
        let mut evicted = Vec::new();
        let mut inner = self.cache.inner.lock();
        let replaces = inner.map.get(&key).map_or(0, |e| e.cost);
        if self.make_room(&mut inner, cost.saturating_sub(replaces), &mut evicted) {
            inner.insert(key, entry, &mut evicted);
        } else {
            evicted.push(entry);
        }
        drop(inner);
        // Freed after the lock is let go: freeing walks every node.
        drop(evicted);
    }

    /// Evict, least recently used first, trees this search neither used nor reaches until
    /// `need` bytes are free; false when there are not enough of them.
    fn make_room(&self, inner: &mut Inner, need: u64, evicted: &mut Vec<Entry>) -> bool {
        let capacity = self.cache.capacity;
        while capacity.saturating_sub(inner.used) < need {
            let from = self.scanned.load(Ordering::Relaxed);
            if from > self.since {
                return false;
            }
            let Some((tick, key)) = inner
                .order
                .range(from..=self.since)
                .next()
                .map(|(t, k)| (*t, k.clone()))
            else {
                self.scanned.store(self.since + 1, Ordering::Relaxed);
                return false;
            };
            self.scanned.store(tick + 1, Ordering::Relaxed);
            if !(self.reaches)(&key.0, key.1) {
                evicted.extend(inner.remove(&key));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

    use super::*;
    use crate::engine;
    use crate::testing::{budget, write_old};
    use crate::{AstGrepConfig, pattern};

    fn lines(r: &engine::search::SearchResult) -> Vec<(String, usize, BTreeMap<String, String>)> {
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
        // The run's first search keeps no tree: it only notes what it read and parsed.
        engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!((cache.counts(), cache.used().1), ((0, 5), 0));
        cache.reset_counts();
        let first = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (0, 5));
        let second = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (5, 5));
        assert_eq!(lines(&first), lines(&second));
        assert_eq!(first.stats, second.stats);
        assert_eq!(first.matches.len(), 10);

        // Another size, and the same size with another mtime: both parsed again.
        write_old(&dir.path().join("m0.py"), "print(changed)\n", 50);
        write_old(&dir.path().join("m1.py"), "print(9)\nprint(y1)\n", 40);
        let third = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (5 + 3, 5 + 2));
        let m0: Vec<_> = third.matches.iter().filter(|m| m.file == "m0.py").collect();
        assert_eq!(m0.len(), 1);
        assert_eq!(m0[0].captures["X"], "changed");
        let m1: Vec<_> = third.matches.iter().filter(|m| m.file == "m1.py").collect();
        assert_eq!(m1[0].captures["X"], "9");
        assert_eq!(m1[1].captures["X"], "y1");

        // Parsed a second time since they changed: their trees are kept now.
        engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        // The same size with the mtime put back (`cp -p`, `rsync -t`, `touch -d`): the ctime
        // tells it (written a clock tick after the first write at the least), and the new
        // content is what the search finds.
        let kept = std::fs::metadata(dir.path().join("m2.py")).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        write_old(&dir.path().join("m2.py"), "print(2)\nprint(z2)\n", 0);
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join("m2.py"))
            .unwrap();
        f.set_modified(kept.modified().unwrap()).unwrap();
        let (hits, misses) = cache.counts();
        let fourth = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (hits + 4, misses + 1));
        let m2: Vec<_> = fourth
            .matches
            .iter()
            .filter(|m| m.file == "m2.py")
            .collect();
        assert_eq!(m2[1].captures["X"], "z2");
    }

    #[test]
    fn a_file_changed_in_the_last_seconds_is_not_cached_whatever_its_mtime_says() {
        let dir = tempfile::tempdir().unwrap();
        // Written just now with an mtime long past: the ctime is now.
        for i in 0..3 {
            write_old(&dir.path().join(format!("m{i}.py")), "print(1)\n", 100);
        }
        let config = AstGrepConfig::default();
        // The run's rule, as the host builds it.
        let cache = ParseCache::with_index(
            config.cache_bytes,
            Arc::new(TokenIndex::default()),
            Arc::new(MatchMemo::new(0)),
        );
        let scope = engine::scope(dir.path(), None, Some("python")).unwrap();
        let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
        for _ in 0..3 {
            let r = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
            assert_eq!(r.matches.len(), 3);
        }
        assert_eq!(cache.counts(), (0, 9));
        assert_eq!(cache.used().1, 0);
        assert_eq!(cache.index().unwrap().size().1, 0, "nothing indexed");
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
        // Trees are kept from a file's second parse.
        engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        let r = engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(r.matches.len(), 4);
        let (used, held, peak) = cache.used();
        assert_eq!(held, 2);
        assert!(used <= 2 * cost(text.len()) + 10);
        assert!(peak <= 2 * cost(text.len()) + 10);
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
        // Trees are kept from a file's second parse: the first search of each notes its files.
        engine::search(&a, &compiled, &config, &cache, &budget(), usize::MAX);
        engine::search(&b, &compiled, &config, &cache, &budget(), usize::MAX);
        cache.reset_counts();
        engine::search(&a, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (0, 4));
        // Plain LRU would have evicted each tree before the walk came back to it.
        let r = engine::search(&a, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(r.matches.len(), 4);
        assert_eq!(cache.counts(), (2, 6));
        // Another search's files take the place of trees it did not use.
        engine::search(&b, &compiled, &config, &cache, &budget(), usize::MAX);
        engine::search(&b, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (4, 8));
        let (_, held, peak) = cache.used();
        assert_eq!(held, 2);
        // `b`'s trees took the place of `a`'s at once, never beside them.
        assert!(peak <= 2 * cost(text.len()) + 10);
    }

    #[test]
    fn a_search_never_evicts_a_tree_it_can_still_reach() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("print(1)\n{}", "x = 1\n".repeat(100));
        for rel in [
            "a/m0.py", "a/m1.py", "b/n0.py", "b/n1.py", "b/n2.py", "b/n3.py", "c/o0.py",
        ] {
            std::fs::create_dir_all(dir.path().join(rel).parent().unwrap()).unwrap();
            write_old(&dir.path().join(rel), &text, 100);
        }
        // Room for three trees: `a`'s two and `c`'s one.
        let capacity = 3 * cost(text.len()) + 10;
        let cache = ParseCache::new(capacity);
        let config = AstGrepConfig {
            threads: 4,
            ..AstGrepConfig::default()
        };
        let compiled = pattern::compile(Lang::Python, "print($X)").unwrap();
        let a = engine::scope(dir.path(), Some("a"), Some("python")).unwrap();
        let c = engine::scope(dir.path(), Some("c"), Some("python")).unwrap();
        let glob = engine::scope(dir.path(), Some("[ab]/*.py"), Some("python")).unwrap();
        // Trees are kept from a file's second parse: a first search notes every file.
        let all = engine::scope(dir.path(), None, Some("python")).unwrap();
        engine::search(&all, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.used().1, 0);
        cache.reset_counts();
        engine::search(&c, &compiled, &config, &cache, &budget(), usize::MAX);
        engine::search(&a, &compiled, &config, &cache, &budget(), usize::MAX);
        assert_eq!(cache.counts(), (0, 3));
        // The glob reaches `a` and `b` but not `c`: `c`'s tree makes room for one of `b`'s,
        // `a`'s two are found whatever order the walk takes, the other `b` trees are let go.
        for round in 0..5 {
            let r = engine::search(&glob, &compiled, &config, &cache, &budget(), usize::MAX);
            assert_eq!(r.matches.len(), 6);
            // Round 0: `a`'s 2 hits, `b`'s 4 misses; later rounds 3 hits and 3 misses each.
            let expected = (2 + 3 * round, 3 + 4 + 3 * round);
            assert_eq!(cache.counts(), expected, "round {round}");
        }
        let (used, held, peak) = cache.used();
        assert_eq!(held, 3);
        assert!(
            used <= capacity && peak <= capacity,
            "{used} {peak} > {capacity}"
        );
    }

    #[test]
    fn a_search_of_every_language_present_does_not_evict_its_own_other_languages() {
        let dir = tempfile::tempdir().unwrap();
        let py = format!("print(1)\n{}", "x = 1\n".repeat(100));
        let js = format!("print(1);\n{}//x\n", "x = 1;\n".repeat(85));
        assert_eq!(cost(py.len()), cost(js.len()));
        for (rel, text) in [("a.py", &py), ("b.py", &py), ("c.js", &js), ("d.js", &js)] {
            write_old(&dir.path().join(rel), text, 100);
        }
        // Room for three of the four trees.
        let cache = ParseCache::new(3 * cost(py.len()) + 10);
        let config = AstGrepConfig::default();
        // No language: one walk per language present, as `ast_grep` runs them.
        let (planned, _) =
            crate::scopes::compiled_scopes(dir.path(), None, None, "print($X)").unwrap();
        assert_eq!(planned.len(), 2);
        let search_all = || {
            for (scope, compiled) in &planned {
                let r = engine::search(scope, compiled, &config, &cache, &budget(), usize::MAX);
                assert_eq!(r.matches.len(), 2, "{:?}", scope.lang);
            }
        };
        // Trees are kept from a file's second parse: the first search notes every file.
        search_all();
        cache.reset_counts();
        search_all();
        assert_eq!(cache.counts(), (0, 4));
        // The second language's walk let its last tree go rather than evict the first's, so
        // the next search finds three; evicting them, each search would find two, every time.
        for round in 1..=3 {
            search_all();
            assert_eq!(cache.counts(), (3 * round, 4 + round), "round {round}");
        }
        assert_eq!(cache.used().1, 3);
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
                    let r =
                        engine::search(&scope, &compiled, &config, &cache, &budget(), usize::MAX);
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
        let (used, held, peak) = cache.used();
        assert!(used <= capacity, "{used} > {capacity}");
        assert!(peak <= capacity, "held {peak} at once > {capacity}");
        assert!(held <= 25);
        assert!(cache.counts().0 > 0, "later searches hit the cache");
    }
}
