//! Which ignore files a search honours, as the ecosystem applies them, and how much they left
//! out. ripgrep and git apply a `.gitignore` only inside a git repository (ripgrep's
//! `--no-require-git` is opt-in); `.ignore` and `.rgignore` apply everywhere. A source tarball
//! unpacked outside any repository (Debian's `linux-source`, whose `.gitignore` ends with `/*`)
//! was searched as empty when every `.gitignore` counted. Every search of the run — `grep`,
//! `glob`, `ast_grep`, `ast_edit` and the identifier witness — walks through [`walker`], and a
//! search that found nothing says what the rules left out ([`left_out_note`]), so a model never
//! reads "no match" where the files were never looked at.

use std::path::Path;

/// Ignore files honoured besides `.gitignore` (inside a repository) and `.ignore`.
pub const CUSTOM_IGNORE_FILES: &[&str] = &[".rgignore"];

/// The most entries [`left_out`] walks before it stops counting.
pub const COUNT_CAP: u64 = 200_000;

/// A walk from `from` with the run's ignore rules: `.gitignore` (and git's exclude files) only
/// inside a git repository, `.ignore` and `.rgignore` always, hidden entries skipped unless
/// `hidden`, symlinks not followed, `.git` itself never entered.
pub fn walker(from: &Path, hidden: bool) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(from);
    b.hidden(!hidden)
        .require_git(true)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    for name in CUSTOM_IGNORE_FILES {
        b.add_custom_ignore_filename(name);
    }
    b
}

/// How many files under `from` the ignore rules left out of a walk (hidden entries counted or
/// not as `hidden` says): the files of a walk without ignore rules less those of a walk with
/// them. `(count, capped)`: counting stops after [`COUNT_CAP`] entries of either walk.
pub fn left_out(from: &Path, hidden: bool) -> (u64, bool) {
    let count = |b: ignore::WalkBuilder| -> (u64, bool) {
        let mut n = 0u64;
        for (seen, e) in b.build().enumerate() {
            if seen as u64 >= COUNT_CAP {
                return (n, true);
            }
            if e.ok()
                .and_then(|e| e.file_type())
                .is_some_and(|t| t.is_file())
            {
                n += 1;
            }
        }
        (n, false)
    };
    let mut plain = ignore::WalkBuilder::new(from);
    plain
        .standard_filters(false)
        .hidden(!hidden)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    let (all, capped_all) = count(plain);
    let (kept, capped_kept) = count(walker(from, hidden));
    (all.saturating_sub(kept), capped_all || capped_kept)
}

/// The note a search that found nothing adds when ignore rules left files out under `from`
/// (`None` when they left out none).
pub fn left_out_note(from: &Path, hidden: bool) -> Option<String> {
    let (n, capped) = left_out(from, hidden);
    (n > 0).then(|| {
        format!(
            "{}{n} file(s) here were left out by ignore rules (.gitignore inside a git repository, .ignore, .rgignore)",
            if capped { "at least " } else { "" }
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn files(from: &Path) -> Vec<String> {
        let mut v: Vec<String> = walker(from, false)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(from).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    }

    /// Debian's linux-source tree: a `.gitignore` that ignores everything but `debian/`, and no
    /// repository. As ripgrep and git: the `.gitignore` does not count; `.ignore` does.
    #[test]
    fn a_gitignore_counts_only_inside_a_repository_and_ignore_files_always() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "/*\n!/debian/\n").unwrap();
        std::fs::create_dir_all(root.join("drivers")).unwrap();
        std::fs::create_dir_all(root.join("debian")).unwrap();
        std::fs::write(root.join("drivers/a.c"), "kfree(x);\n").unwrap();
        std::fs::write(root.join("debian/rules"), "x\n").unwrap();
        assert_eq!(files(root), ["debian/rules", "drivers/a.c"]);
        assert_eq!(left_out(root, false), (0, false));
        // An .ignore applies without a repository.
        std::fs::write(root.join(".ignore"), "drivers/\n").unwrap();
        assert_eq!(files(root), ["debian/rules"]);
        assert_eq!(left_out(root, false), (1, false));
        assert!(left_out_note(root, false).unwrap().contains("1 file(s)"));
        std::fs::remove_file(root.join(".ignore")).unwrap();
        // Inside a repository the .gitignore counts.
        std::fs::create_dir_all(root.join(".git")).unwrap();
        assert_eq!(files(root), ["debian/rules"]);
        assert_eq!(left_out(root, false), (1, false));
    }
}
