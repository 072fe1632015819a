//! The run's image folder: every PNG a cell returns is also written here, so an agent can reopen
//! it without re-running the cell.
//!
//! One folder per run (per `attach`), made on the first image, in the system's temp directory
//! (never inside the workspace) and removed when the run ends. Files are named by the run's eval
//! call number and the image's index in that call: `cell-3-1.png`. The folder is the host
//! user's alone (0700, files 0600): a cell's plots may show the workspace's data, and the temp
//! directory is shared with every user of the machine.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) struct ImageDir {
    root: PathBuf,
    dir: OnceLock<Option<tempfile::TempDir>>,
}

impl ImageDir {
    /// A folder to be made on first use, outside `root` (the workspace).
    pub(crate) fn new(root: &Path) -> Self {
        ImageDir {
            root: root.to_path_buf(),
            dir: OnceLock::new(),
        }
    }

    fn path(&self) -> Option<&Path> {
        self.dir
            .get_or_init(|| {
                let mut base = std::env::temp_dir();
                if base.starts_with(&self.root) {
                    base = PathBuf::from("/tmp");
                }
                use std::os::unix::fs::PermissionsExt;
                tempfile::Builder::new()
                    .prefix("agent-eval-images-")
                    .permissions(std::fs::Permissions::from_mode(0o700))
                    .tempdir_in(base)
                    .ok()
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }

    /// Write image `index` (from 1) of eval call `cell`; its path, or `None` when it could not
    /// be written (the image is still returned inline).
    pub(crate) fn save(&self, cell: u64, index: usize, png: &[u8]) -> Option<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.path()?.join(format!("cell-{cell}-{index}.png"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .ok()?;
        f.write_all(png).ok()?;
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_saved_outside_the_root_and_removed_with_the_run() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = ImageDir::new(root.path());
        let a = dir.save(3, 1, b"\x89PNG").expect("saved");
        assert!(a.ends_with("cell-3-1.png"), "{}", a.display());
        assert!(!a.starts_with(root.path()));
        assert_eq!(std::fs::read(&a).expect("read"), b"\x89PNG");
        let b = dir.save(3, 2, b"x").expect("saved");
        assert_eq!(a.parent(), b.parent());
        // Issue 23: the folder was world-readable (0755 under the usual umask).
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(a.parent().expect("folder")), 0o700);
        assert_eq!(mode(&a), 0o600);
        drop(dir);
        assert!(!a.exists());
    }
}
