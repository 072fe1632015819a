//! Finding files to start servers for when a call names none (`symbols` with only `query`).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use crate::roots::{SKIP, Unreadable};

/// One file per extension under `root` (breadth-first, so the shallowest wins), looking at no
/// more than `budget` directory entries, and the folders that could not be listed (a file in
/// them was not looked at). Hidden entries, symlinks and the [`SKIP`] directories are not
/// followed.
pub fn one_file_per_extension(root: &Path, budget: usize) -> (Vec<PathBuf>, Unreadable) {
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut unreadable = Unreadable::default();
    let mut queue = VecDeque::from([root.to_path_buf()]);
    let mut seen = 0usize;
    while let Some(dir) = queue.pop_front() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                unreadable.add(&dir, &e);
                continue;
            }
        };
        let mut entries = Vec::new();
        for e in rd {
            match e {
                Ok(e) => entries.push(e),
                Err(e) => {
                    // Listing stopped part way: the rest of the folder is not known.
                    unreadable.add(&dir, &e);
                    break;
                }
            }
        }
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            seen += 1;
            if seen > budget {
                return (found.into_values().collect(), unreadable);
            }
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && !SKIP.contains(&name.as_str()) {
                queue.push_back(e.path());
            } else if t.is_file()
                && let Some(ext) = e.path().extension()
            {
                found
                    .entry(ext.to_string_lossy().to_string())
                    .or_insert_with(|| e.path());
            }
        }
    }
    (found.into_values().collect(), unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallowest_file_of_each_extension() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for f in [
            "a/deep/x.py",
            "b.py",
            "node_modules/m/y.ts",
            "src/z.ts",
            ".hidden/q.go",
        ] {
            let p = r.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        let (got, unreadable) = one_file_per_extension(r, 1000);
        assert_eq!(got, vec![r.join("b.py"), r.join("src/z.ts")]);
        assert_eq!(unreadable, Unreadable::default());
    }
}
