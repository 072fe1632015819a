//! What this process's own tools last wrote to each file, so that a change found on disk can be
//! told apart from one made outside them (a client's own edit tool, a kernel cell, a person):
//! every write goes through [`super::write_atomic_mode`], which records the path and a hash of
//! the bytes. Bounded: past [`CAP`] files the record starts again (a change is then taken for an
//! outside one, which only costs a second check of its problems).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Most files remembered.
pub const CAP: usize = 65_536;

fn record() -> parking_lot::MutexGuard<'static, HashMap<PathBuf, u64>> {
    static WROTE: OnceLock<Mutex<HashMap<PathBuf, u64>>> = OnceLock::new();
    WROTE.get_or_init(Default::default).lock()
}

fn hash(contents: &[u8]) -> u64 {
    static KEYS: OnceLock<std::hash::RandomState> = OnceLock::new();
    let mut h = KEYS.get_or_init(std::hash::RandomState::new).build_hasher();
    h.write(contents);
    h.finish()
}

/// Remember that our own tools wrote `contents` to `path`.
pub(crate) fn wrote(path: &Path, contents: &[u8]) {
    let h = hash(contents);
    let mut r = record();
    if r.len() >= CAP && !r.contains_key(path) {
        r.clear();
    }
    r.insert(path.to_path_buf(), h);
}

/// Whether `contents` is what our own tools last wrote to `path`.
pub fn is_own_write(path: &Path, contents: &[u8]) -> bool {
    record().get(path).is_some_and(|h| *h == hash(contents))
}

/// Forget what our tools wrote to `path` (a change outside them was found there since).
pub fn forget(path: &Path) {
    record().remove(path);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_known_by_path_and_bytes_until_forgotten() {
        let p = Path::new("/nowhere/own_writes_test.txt");
        assert!(!is_own_write(p, b"a"));
        wrote(p, b"a");
        assert!(is_own_write(p, b"a"));
        assert!(!is_own_write(p, b"b"));
        assert!(!is_own_write(Path::new("/nowhere/other"), b"a"));
        forget(p);
        assert!(!is_own_write(p, b"a"));
    }
}
