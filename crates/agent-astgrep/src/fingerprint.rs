//! How the run knows a file is unchanged: its size, its mtime and its ctime, as `stat` gives
//! them. The trees of the parse cache, the tokens of the index and the answers of the memo are
//! each kept with the fingerprint the file had when it was read, and used only while the file's
//! fingerprint is the same.
//!
//! The ctime is what makes this hold against the workspace itself: only the kernel sets it, on
//! every write, rename or chmod, so a rewrite that keeps the size and puts the mtime back
//! (`touch -d`, `cp -p`, `rsync -t`) still changes it. A file whose ctime is within [`RACY`] of
//! now is never kept (a second write in the same clock tick could leave every field as it was:
//! git's "racily clean" rule), whatever its mtime says.

use std::time::{Duration, SystemTime};

/// A file changed more recently than this (by its ctime) is not kept by the run.
pub const RACY: Duration = Duration::from_secs(2);

/// What the run knows a file's content by: its size, its mtime, and its ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    pub len: u64,
    pub mtime: SystemTime,
    /// Seconds and nanoseconds since the epoch, as `stat` gives them.
    pub ctime: (i64, i64),
}

impl Fingerprint {
    /// The fingerprint in `meta`, when the platform gives an mtime.
    pub fn of(meta: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        Some(Fingerprint {
            len: meta.len(),
            mtime: meta.modified().ok()?,
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Whether the file changed within `racy` of now (or its ctime is not a time after 1970).
    pub fn recent(&self, racy: Duration) -> bool {
        let (Ok(secs), Ok(nanos)) = (u64::try_from(self.ctime.0), u32::try_from(self.ctime.1))
        else {
            return true;
        };
        let ctime = SystemTime::UNIX_EPOCH + Duration::new(secs, nanos);
        SystemTime::now()
            .duration_since(ctime)
            .map_or(true, |age| age < racy)
    }

    /// A fingerprint changed `age` ago, of a file of `len` bytes (for tests of what is kept).
    #[cfg(test)]
    pub fn aged(len: u64, age: Duration) -> Self {
        let when = SystemTime::now() - age;
        let since = when
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        Fingerprint {
            len,
            mtime: when,
            ctime: (
                i64::try_from(since.as_secs()).unwrap_or(0),
                i64::from(since.subsec_nanos()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ctime_within_the_racy_window_or_before_1970_is_recent() {
        assert!(Fingerprint::aged(1, Duration::ZERO).recent(RACY));
        assert!(!Fingerprint::aged(1, Duration::from_secs(100)).recent(RACY));
        let mut before_epoch = Fingerprint::aged(1, Duration::from_secs(100));
        before_epoch.ctime = (-5, 0);
        assert!(before_epoch.recent(RACY));
        // An old mtime does not make a file settled: only its ctime does.
        let mut touched = Fingerprint::aged(1, Duration::ZERO);
        touched.mtime = SystemTime::now() - Duration::from_secs(100);
        assert!(touched.recent(RACY));
    }
}
