//! The run's image folder: every PNG a cell returns is also written here, so an agent can reopen
//! it without re-running the cell.
//!
//! One folder per run (per `attach`), made on the first image, in the system's temp directory
//! (never inside the workspace) and removed when the run ends. Files are named by the run's eval
//! call number and the image's index in that call: `cell-3-1.png`.

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
                tempfile::Builder::new()
                    .prefix("agent-eval-images-")
                    .tempdir_in(base)
                    .ok()
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }

    /// Write image `index` (from 1) of eval call `cell`; its path, or `None` when it could not
    /// be written (the image is still returned inline).
    pub(crate) fn save(&self, cell: u64, index: usize, png: &[u8]) -> Option<PathBuf> {
        let path = self.path()?.join(format!("cell-{cell}-{index}.png"));
        std::fs::write(&path, png).ok()?;
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
        drop(dir);
        assert!(!a.exists());
    }
}
