//! The one rule for project roots, shared by what a call does and what `lsp status`,
//! `agent-tools doctor` and the project checker report.
//!
//! A folder counts as a root of a server when it holds one of the server's root markers, lies
//! inside the workspace at most [`MAX_DEPTH`] folders down, and no folder on the way is hidden
//! (`.git`, `.venv`) or a build/vendor folder ([`SKIP`]). A call uses the nearest such folder
//! above its file ([`root_for`]); the reports list every such folder ([`roots_in`]), so each root
//! a call can start a server for is one they name, and no other.

use agent_tier::display::plural;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

/// Folders never taken as (or searched for) roots.
pub const SKIP: &[&str] = &[
    "node_modules",
    "target",
    "venv",
    "__pycache__",
    "build",
    "dist",
    "vendor",
];

/// How many folders below the workspace root a root may lie.
pub const MAX_DEPTH: usize = 5;

/// Most roots listed for one server.
const MAX_ROOTS: usize = 50;

fn skipped(name: &str) -> bool {
    name.starts_with('.') || SKIP.contains(&name)
}

/// Whether `dir` (inside `ws`) may be a root: not too deep, nothing hidden or skipped on the way.
fn eligible(ws: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(ws) else {
        return false;
    };
    let parts: Vec<_> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.len() <= MAX_DEPTH && !parts.iter().any(|p| skipped(p))
}

fn has_marker(dir: &Path, markers: &[&str]) -> bool {
    markers.iter().any(|m| dir.join(m).exists())
}

/// The root a call on `path` uses: the nearest eligible folder at or above it, not above `ws`,
/// that holds one of `markers`.
pub fn root_for(ws: &Path, path: &Path, markers: &[&str]) -> Option<PathBuf> {
    let mut dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()?.to_path_buf()
    };
    loop {
        if eligible(ws, &dir) && has_marker(&dir, markers) {
            return Some(dir);
        }
        if dir == ws || !dir.starts_with(ws) || !dir.pop() {
            return None;
        }
    }
}

/// Folders a walk of the workspace could not list (their entries were not looked at): how many,
/// and the first with its error — for a report to say, never to skip without a word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unreadable {
    pub count: usize,
    pub first: Option<(PathBuf, String)>,
}

impl Unreadable {
    pub fn add(&mut self, dir: &Path, e: &std::io::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((dir.to_path_buf(), e.to_string()));
        }
    }

    /// `N folder(s) could not be read while looking for {what} (first: path: error)`, the path
    /// relative to `ws`, escaped and clipped; `None` when every folder was read.
    pub fn note(&self, ws: &Path, what: &str) -> Option<String> {
        let (path, error) = self.first.as_ref()?;
        let shown = agent_tier::display::clip_path(&agent_tier::workspace::display_path(ws, path));
        Some(format!(
            "{} could not be read while looking for {what} (first: {shown}: {error})",
            plural(self.count, "folder", "folders")
        ))
    }

    /// As a result shows it: how many, and the first with its error.
    pub fn shown(&self, ws: &Path) -> UnreadableFolders {
        UnreadableFolders {
            count: self.count,
            first: self
                .first
                .as_ref()
                .map(|(p, e)| format!("{}: {e}", agent_tier::workspace::display_path(ws, p))),
        }
    }
}

/// Folders a walk could not read, as a result shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnreadableFolders {
    /// How many.
    pub count: usize,
    /// The first, relative to the workspace root, and its error: `path: error`.
    pub first: Option<String>,
}

/// Every root a call could use, outermost first (at most 50). A folder that cannot be listed
/// is left out ([`roots_counted`] says how many).
pub fn roots_in(ws: &Path, markers: &[&str]) -> Vec<PathBuf> {
    walk_roots(ws, markers, false).roots
}

/// What [`roots_counted`] found.
#[derive(Debug, Clone, Default)]
pub struct Counted {
    /// The first 50 roots.
    pub roots: Vec<PathBuf>,
    /// How many there are in all.
    pub total: usize,
    /// The folders that could not be listed: a root inside one is in neither.
    pub unreadable: Unreadable,
}

/// The first 50 roots, as [`roots_in`], how many there are in all (the walk goes on past the
/// 50th to count the rest) and the folders it could not read: for a report that says what it
/// left out.
pub fn roots_counted(ws: &Path, markers: &[&str]) -> Counted {
    walk_roots(ws, markers, true)
}

fn walk_roots(ws: &Path, markers: &[&str], count_all: bool) -> Counted {
    struct Found {
        listed: Vec<PathBuf>,
        total: usize,
        count_all: bool,
        unreadable: Unreadable,
    }
    fn walk(dir: &Path, depth: usize, markers: &[&str], found: &mut Found) {
        if found.listed.len() >= MAX_ROOTS && !found.count_all {
            return;
        }
        if has_marker(dir, markers) {
            found.total += 1;
            if found.listed.len() < MAX_ROOTS {
                found.listed.push(dir.to_path_buf());
            }
        }
        if depth == MAX_DEPTH {
            return;
        }
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                found.unreadable.add(dir, &e);
                return;
            }
        };
        let mut entries = Vec::new();
        for e in rd {
            match e {
                Ok(e) => entries.push(e),
                Err(e) => {
                    // Listing stopped part way: the rest of the folder is not known.
                    found.unreadable.add(dir, &e);
                    break;
                }
            }
        }
        let mut subs: Vec<PathBuf> = entries
            .into_iter()
            // Symlinked folders are not followed: a root is a real folder of the workspace.
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| !skipped(&e.file_name().to_string_lossy()))
            .map(|e| e.path())
            .collect();
        subs.sort();
        for s in subs {
            walk(&s, depth + 1, markers, found);
        }
    }
    let mut found = Found {
        listed: Vec::new(),
        total: 0,
        count_all,
        unreadable: Unreadable::default(),
    };
    walk(ws, 0, markers, &mut found);
    Counted {
        roots: found.listed,
        total: found.total,
        unreadable: found.unreadable,
    }
}

/// The outermost of `roots` (a root inside another is left out): where a whole-project checker
/// runs.
pub fn outermost(roots: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for r in roots {
        if !out.iter().any(|o| r.starts_with(o)) {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file's call root is a listed root, and every listed root is some file's call root.
    #[test]
    fn calls_and_reports_agree() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let files = [
            "Cargo.toml",
            "src/lib.rs",
            "crates/a/Cargo.toml",
            "crates/a/src/lib.rs",
            "node_modules/pkg/Cargo.toml",
            "node_modules/pkg/lib.rs",
            ".hidden/Cargo.toml",
            ".hidden/x.rs",
            "a/b/c/d/e/f/Cargo.toml",
            "a/b/c/d/e/f/deep.rs",
            "a/b/c/d/e/Cargo.toml",
            "a/b/c/d/e/e.rs",
            "docs/readme.rs",
        ];
        for f in files {
            let p = ws.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        let listed = roots_in(&ws, &["Cargo.toml"]);
        let rel = |p: &Path| p.strip_prefix(&ws).unwrap().display().to_string();
        assert_eq!(
            listed.iter().map(|p| rel(p)).collect::<Vec<_>>(),
            vec!["", "a/b/c/d/e", "crates/a"]
        );
        let mut used = Vec::new();
        for f in files.iter().filter(|f| f.ends_with(".rs")) {
            let r = root_for(&ws, &ws.join(f), &["Cargo.toml"]).unwrap();
            assert!(listed.contains(&r), "{f} → {}", r.display());
            used.push(r);
        }
        // The skipped, hidden and too-deep markers are used by no call.
        assert_eq!(
            rel(&root_for(&ws, &ws.join("node_modules/pkg/lib.rs"), &["Cargo.toml"]).unwrap()),
            ""
        );
        assert_eq!(
            rel(&root_for(&ws, &ws.join("a/b/c/d/e/f/deep.rs"), &["Cargo.toml"]).unwrap()),
            "a/b/c/d/e"
        );
        for r in &listed {
            assert!(
                used.contains(r),
                "{} listed but no call uses it",
                r.display()
            );
        }
        assert_eq!(
            outermost(listed).iter().map(|p| rel(p)).collect::<Vec<_>>(),
            vec![""]
        );
        assert_eq!(root_for(&ws, &ws.join("src/lib.rs"), &["go.mod"]), None);
    }
}
