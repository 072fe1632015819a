//! The adversary's race on reads: a folder of the root exchanged, over and over, with a symlink
//! to a folder outside it (`renameat2` with `RENAME_EXCHANGE`, atomic), so a path checked while
//! it was a folder is opened while it is a link.

use rustix::fs::{CWD, RenameFlags};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `root/<name>` is a real folder of the root and `root/<name>.link` a symlink to `outside`; a
/// thread exchanges the two until this is dropped. Half the time `root/<name>` is the link.
pub struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
    folder: PathBuf,
}

impl Swapper {
    /// Start exchanging `root/<name>` (which must be a folder) with a new link to `outside`.
    pub fn start(root: &Path, name: &str, outside: &Path) -> Self {
        let folder = root.join(name);
        let link = root.join(format!("{name}.link"));
        assert!(folder.is_dir(), "{} must be a folder", folder.display());
        std::os::unix::fs::symlink(outside, &link).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, swaps, folder) = (stop.clone(), swaps.clone(), folder.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // Fails only once the test has gone (its folders removed): stop then.
                    if rustix::fs::renameat_with(CWD, &folder, CWD, &link, RenameFlags::EXCHANGE)
                        .is_err()
                    {
                        return;
                    }
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                // Leave the folder in place.
                if folder
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    rustix::fs::renameat_with(CWD, &folder, CWD, &link, RenameFlags::EXCHANGE)
                        .unwrap();
                }
            })
        };
        Self {
            stop,
            swaps,
            thread: Some(thread),
            folder,
        }
    }

    /// Exchanges so far.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    /// Whether a naive read (`std::fs::read` of `root/<name>/<file>` by its path, as the tools
    /// read before) returns the outside file's bytes (which contain `marker`) within 100,000
    /// tries, once the swapper has run: the proof that the race it runs is real.
    pub fn race_is_real(&self, file: &str, marker: &str) -> bool {
        while self.swaps() < 1_000 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let path = self.folder.join(file);
        (0..100_000).any(|_| {
            std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(marker))
        })
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
