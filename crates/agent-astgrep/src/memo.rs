//! The run's memo of finished searches: for each pattern searched in this run, each file's
//! number of matches and the matches its result listed, as of the file's [`Fingerprint`] (size,
//! mtime and ctime). A search of the same pattern again (the same language and lines shown)
//! takes a file's answer from here while its fingerprint is unchanged, without reading it; any
//! other file is read, parsed and matched as the first time. The ctime is what makes this safe
//! against the workspace itself: only the kernel sets it, on every write, rename or chmod, so a
//! rewrite that keeps the size and puts the mtime back (`touch -d`, `cp -p`, `rsync -t`) still
//! changes it. A file the run itself rewrote is forgotten all the same, and a file whose ctime
//! is within the last two seconds is never remembered (a second write in the same clock tick
//! could leave every field as it was: git's "racily clean" rule).
//!
//! What it holds is what results showed: matches as rendered (clipped lines and captures), so
//! it is small against trees: bounded by `capacity` bytes (estimated), the least recently used
//! pattern out, and a pattern whose answers alone exceed it is not remembered whole.
//! A result that used it says how many files it answered (`files_remembered`).

use crate::fingerprint::{Fingerprint, RACY};
use crate::lang::Lang;
use crate::shown::Match;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Bytes the memo may hold when caching is on.
pub const DEFAULT_CAPACITY: u64 = 16 * 1024 * 1024;

/// Which search a remembered answer belongs to: the language, the pattern as given, and how
/// many lines of each match a result shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchKey {
    pub lang: Lang,
    pub pattern: String,
    pub max_lines: usize,
}

/// One file's answer: how many matches it has, and the first of them as a result listed them
/// (all of them when `matches.len() == count`).
#[derive(Debug, Clone)]
pub struct Answer {
    pub count: usize,
    pub matches: Arc<[Match]>,
}

struct FileEntry {
    print: Fingerprint,
    answer: Answer,
    cost: u64,
}

#[derive(Default)]
struct Remembered {
    files: HashMap<PathBuf, FileEntry>,
    cost: u64,
    tick: u64,
    /// Set when this search's answers did not fit: it is remembered no further.
    full: bool,
}

#[derive(Default)]
struct Inner {
    searches: HashMap<SearchKey, Remembered>,
    used: u64,
    tick: u64,
}

/// The memo of one run; see the module's documentation.
pub struct MatchMemo {
    capacity: u64,
    racy: Duration,
    inner: Mutex<Inner>,
}

/// What an answer costs the memo, estimated: the entry, the path, and each match's strings.
fn cost(path: &Path, answer: &Answer) -> u64 {
    let matches: usize = answer
        .matches
        .iter()
        .map(|m| {
            160 + m.file.len()
                + m.lines.iter().map(|l| l.len() + 24).sum::<usize>()
                + m.captures
                    .iter()
                    .map(|(k, v)| k.len() + v.len() + 64)
                    .sum::<usize>()
        })
        .sum();
    (path.as_os_str().len() + 128 + matches) as u64
}

impl MatchMemo {
    /// A memo of at most `capacity` bytes; 0 remembers nothing.
    pub fn new(capacity: u64) -> Self {
        MatchMemo {
            capacity,
            racy: RACY,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// A memo that remembers files changed just now too: for tests that write a file and
    /// search it at once (the racy rule has its own test).
    #[cfg(test)]
    pub fn remembering_recent(capacity: u64) -> Self {
        MatchMemo {
            racy: Duration::ZERO,
            ..MatchMemo::new(capacity)
        }
    }

    /// The answer remembered for `path` as `print` in the search `key`.
    pub fn recall(&self, key: &SearchKey, path: &Path, print: Fingerprint) -> Option<Answer> {
        if self.capacity == 0 {
            return None;
        }
        let mut inner = self.inner.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let search = inner.searches.get_mut(key)?;
        search.tick = tick;
        let e = search.files.get(path)?;
        (e.print == print).then(|| e.answer.clone())
    }

    /// Remember `path`'s answer as `print` in the search `key`, unless the file changed too
    /// recently or the answer does not fit (older searches are let go to make room; the
    /// search's own answers never are).
    pub fn remember(&self, key: &SearchKey, path: &Path, print: Fingerprint, answer: Answer) {
        if self.capacity == 0 || print.recent(self.racy) {
            return;
        }
        let cost = cost(path, &answer);
        let mut inner = self.inner.lock();
        let Inner {
            searches,
            used,
            tick,
        } = &mut *inner;
        *tick += 1;
        if searches.get(key).is_some_and(|s| s.full) {
            return;
        }
        // Room: least recently used other searches out, while the new answer does not fit.
        while *used + cost > self.capacity {
            let oldest = searches
                .iter()
                .filter(|(k, _)| *k != key)
                .min_by_key(|(_, s)| s.tick)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    if let Some(s) = searches.remove(&k) {
                        *used -= s.cost;
                    }
                }
                None => {
                    // This search alone fills the memo: it stops here.
                    if let Some(s) = searches.get_mut(key) {
                        s.full = true;
                    }
                    return;
                }
            }
        }
        let search = searches.entry(key.clone()).or_default();
        search.tick = *tick;
        let entry = FileEntry {
            print,
            answer,
            cost,
        };
        if let Some(old) = search.files.insert(path.to_path_buf(), entry) {
            search.cost -= old.cost;
            *used -= old.cost;
        }
        search.cost += cost;
        *used += cost;
    }

    /// The run changed these files: their answers are dropped from every search.
    pub fn changed(&self, paths: &[PathBuf]) {
        let mut inner = self.inner.lock();
        let mut freed = 0;
        for search in inner.searches.values_mut() {
            for p in paths {
                if let Some(e) = search.files.remove(p) {
                    search.cost -= e.cost;
                    freed += e.cost;
                }
            }
            search.full = false;
        }
        inner.used -= freed;
    }

    /// (searches remembered, files remembered, bytes charged).
    #[cfg(test)]
    pub fn size(&self) -> (usize, usize, u64) {
        let inner = self.inner.lock();
        let files = inner.searches.values().map(|s| s.files.len()).sum();
        (inner.searches.len(), files, inner.used)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

    use super::*;
    use crate::cache::ParseCache;
    use crate::engine;
    use crate::engine::search::SearchResult;
    use crate::testing::{budget, write_at};
    use crate::tokens::TokenIndex;
    use crate::{AstGrepConfig, pattern};
    use std::time::SystemTime;

    fn cache(memo: u64) -> ParseCache {
        ParseCache::with_index(
            AstGrepConfig::default().cache_bytes,
            Arc::new(TokenIndex::default()),
            Arc::new(MatchMemo::remembering_recent(memo)),
        )
    }

    fn shown(r: &SearchResult) -> Vec<(String, usize, usize, BTreeMap<String, String>)> {
        r.matches
            .iter()
            .map(|m| (m.file.clone(), m.line, m.column, m.captures.clone()))
            .collect()
    }
    use std::collections::BTreeMap;

    /// Five files with two matches each and one without, all modified a while ago.
    fn tree(dir: &Path) -> SystemTime {
        let old = SystemTime::now() - Duration::from_secs(100);
        for i in 0..5 {
            write_at(
                &dir.join(format!("m{i}.py")),
                &format!("print({i})\nprint(x{i})\n"),
                old,
            );
        }
        // Holds the pattern's word and parentheses, so it is parsed (and found to hold none).
        write_at(&dir.join("none.py"), "print = (1)\n", old);
        old
    }

    fn search(cache: &ParseCache, dir: &Path, pattern: &str, keep: usize) -> SearchResult {
        let config = AstGrepConfig::default();
        let scope = engine::scope(dir, None, Some("python")).unwrap();
        let compiled = pattern::compile(Lang::Python, pattern).unwrap();
        engine::search(&scope, &compiled, &config, cache, &budget(), keep)
    }

    #[test]
    fn a_repeated_search_is_answered_from_the_memo_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let cache = cache(DEFAULT_CAPACITY);
        let first = search(&cache, dir.path(), "print($X)", usize::MAX);
        assert_eq!(first.stats.files_remembered, 0);
        assert_eq!((first.total, first.files_matched), (10, 5));
        let second = search(&cache, dir.path(), "print($X)", usize::MAX);
        // Every file answered without a read, the one without a match too; the same answer.
        assert_eq!(second.stats.files_remembered, 6);
        assert_eq!(shown(&first), shown(&second));
        assert_eq!((second.total, second.files_matched), (10, 5));
        assert!(
            second
                .stats
                .summary("python", 1 << 20)
                .contains(&format!("6 {}", crate::stats::REMEMBERED)),
            "{}",
            second.stats.summary("python", 1 << 20)
        );
        // Another pattern is its own search: nothing recalled.
        let other = search(&cache, dir.path(), "print(x0)", usize::MAX);
        assert_eq!((other.stats.files_remembered, other.total), (0, 1));
    }

    #[test]
    fn a_file_changed_since_is_searched_again_by_size_by_mtime_and_by_the_runs_own_write() {
        let dir = tempfile::tempdir().unwrap();
        let old = tree(dir.path());
        let cache = cache(DEFAULT_CAPACITY);
        search(&cache, dir.path(), "print($X)", usize::MAX);
        // Another size; the same size with another mtime.
        write_at(&dir.path().join("m0.py"), "print(changed)\n", old);
        write_at(
            &dir.path().join("m1.py"),
            "print(9)\nprint(y1)\n",
            old + Duration::from_secs(1),
        );
        let r = search(&cache, dir.path(), "print($X)", usize::MAX);
        assert_eq!(r.stats.files_remembered, 4);
        let x: Vec<_> = r
            .matches
            .iter()
            .filter(|m| m.file == "m0.py" || m.file == "m1.py")
            .map(|m| m.captures["X"].as_str())
            .collect();
        assert_eq!(x, ["changed", "9", "y1"]);
        // The same size with the mtime put back (what `touch -d`, `cp -p` or `rsync -t` leave):
        // the ctime, which only the kernel sets, tells it.
        let m2 = dir.path().join("m2.py").canonicalize().unwrap();
        write_at(&m2, "print(7)\nprint(z2)\n", old);
        let after = search(&cache, dir.path(), "print($X)", usize::MAX);
        assert_eq!(after.stats.files_remembered, 5);
        let z: Vec<_> = after
            .matches
            .iter()
            .filter(|m| m.file == "m2.py")
            .map(|m| m.captures["X"].as_str())
            .collect();
        assert_eq!(z, ["7", "z2"]);
        // The run's own word drops an answer whatever the file's fingerprint says.
        let m3 = dir.path().join("m3.py").canonicalize().unwrap();
        cache.changed(std::slice::from_ref(&m3));
        let told = search(&cache, dir.path(), "print($X)", usize::MAX);
        assert_eq!(told.stats.files_remembered, 5);
        assert_eq!(shown(&told), shown(&after));
    }

    #[test]
    fn an_answer_that_listed_fewer_matches_than_a_result_takes_is_parsed_for_them() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        for keep in [3, usize::MAX] {
            let cache = cache(DEFAULT_CAPACITY);
            // Listing one match: the first file's first match, the rest counted (a file the
            // walk came to after that match was held is remembered with none listed).
            let one = search(&cache, dir.path(), "print($X)", 1);
            assert_eq!((one.matches.len(), one.total), (1, 10));
            let more = search(&cache, dir.path(), "print($X)", keep);
            let fresh = search(&self::cache(0), dir.path(), "print($X)", keep);
            assert_eq!(shown(&more), shown(&fresh), "keep {keep}");
            assert_eq!((more.total, more.files_matched), (10, 5));
            assert_eq!(more.matches.len(), keep.min(10));
            // Every file's count came from the memo; the ones the result lists were parsed.
            assert_eq!(more.stats.files_remembered, 6);
            // What the second search parsed is remembered whole for the next.
            let again = search(&cache, dir.path(), "print($X)", keep);
            assert_eq!(shown(&again), shown(&fresh));
        }
    }

    #[test]
    fn a_file_changed_in_the_last_two_seconds_is_not_remembered_nor_anything_at_zero_bytes() {
        let dir = tempfile::tempdir().unwrap();
        // Written just now: their ctimes are now, whatever their mtimes say.
        tree(dir.path());
        let settled = ParseCache::with_index(
            AstGrepConfig::default().cache_bytes,
            Arc::new(TokenIndex::default()),
            Arc::new(MatchMemo::new(DEFAULT_CAPACITY)),
        );
        search(&settled, dir.path(), "print($X)", usize::MAX);
        let again = search(&settled, dir.path(), "print($X)", usize::MAX);
        assert_eq!((again.stats.files_remembered, again.total), (0, 10));
        let off = self::cache(0);
        search(&off, dir.path(), "print($X)", usize::MAX);
        let again = search(&off, dir.path(), "print($X)", usize::MAX);
        assert_eq!((again.stats.files_remembered, again.total), (0, 10));
    }

    #[test]
    fn the_memo_stays_within_its_capacity_the_oldest_search_out() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let memo = MatchMemo::new(4096);
        let key = |p: &str| SearchKey {
            lang: Lang::Python,
            pattern: p.to_string(),
            max_lines: 5,
        };
        let old = Fingerprint {
            len: 1,
            mtime: SystemTime::now() - Duration::from_secs(100),
            ctime: (1_000_000, 0),
        };
        let empty = Answer {
            count: 0,
            matches: Arc::from(Vec::new()),
        };
        for i in 0..20 {
            memo.remember(&key("a"), Path::new(&format!("/a/{i}")), old, empty.clone());
        }
        let (_, _, used) = memo.size();
        assert!(used <= 4096, "{used}");
        // A second search takes the room of the first, never more than the capacity.
        for i in 0..20 {
            memo.remember(&key("b"), Path::new(&format!("/b/{i}")), old, empty.clone());
        }
        let (searches, _, used) = memo.size();
        assert!(used <= 4096, "{used}");
        assert_eq!(searches, 1);
        assert!(memo.recall(&key("a"), Path::new("/a/0"), old).is_none());
        assert!(memo.recall(&key("b"), Path::new("/b/0"), old).is_some());
    }
}
