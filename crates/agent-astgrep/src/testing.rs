//! What the crate's unit tests of the walk share: a time budget that does not run out, and a
//! file written with the mtime a test chooses.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use crate::engine::Budget;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

/// A minute, never cancelled: more than any of these tests takes.
pub fn budget() -> Budget {
    Budget {
        deadline: Instant::now() + Duration::from_secs(60),
        cancelled: Arc::new(AtomicBool::new(false)),
    }
}

/// `text` written to `path`, its mtime set to `mtime` (its ctime is now, as the kernel sets it).
pub fn write_at(path: &Path, text: &str, mtime: SystemTime) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(mtime).unwrap();
}

/// `text` written to `path` with an mtime `age_secs` in the past.
pub fn write_old(path: &Path, text: &str, age_secs: u64) {
    write_at(
        path,
        text,
        SystemTime::now() - Duration::from_secs(age_secs),
    );
}
