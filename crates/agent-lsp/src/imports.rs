//! The witness of a file move: after a server's `workspace/willRenameFiles` edits and the move
//! are written, the workspace is read again — by syntax alone, not by the server — for imports
//! that still name the old path. JavaScript and TypeScript: every relative specifier of
//! `import … from`, `export … from`, `import(…)` and `require(…)` that resolves to the old file
//! (with or without its extension, or its folder when it was an `index`). Rust: the parent
//! module's `mod name;` and `crate::…` paths of the old module. Other languages have no such
//! witness, and a move says so.

use std::path::{Component, Path, PathBuf};

/// The JavaScript and TypeScript extensions.
const JS: &[&str] = &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"];
/// Files looked at, at most.
const MAX_FILES: usize = 20_000;
/// Largest file read.
const MAX_BYTES: u64 = 2 * 1024 * 1024;

/// What the witness found after a move.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// `path:line: text` of each import that still names the old path.
    pub sites: Vec<String>,
    /// Files read.
    pub files: usize,
    /// What was looked for, in words.
    pub looked_for: String,
}

/// Imports in the workspace `ws` that still name `old` (moved away); `None` when no witness
/// reads this language.
pub fn left_after_move(ws: &Path, old: &Path) -> Option<Leftovers> {
    let ext = old.extension()?.to_str()?.to_ascii_lowercase();
    if JS.contains(&ext.as_str()) {
        Some(
            scan(ws, JS, |file, text, out| js_file(file, text, old, out))
                .described(format!("relative imports of `{}`", shown(ws, old))),
        )
    } else if ext == "rs" {
        let (crate_src, module) = rust_module(ws, old)?;
        let name = module.last()?.clone();
        let full = format!("crate::{}", module.join("::"));
        let parents = rust_parents(&crate_src, old);
        let looked = format!("`mod {name};` in its parent module and `{full}` paths");
        Some(
            scan(ws, &["rs"], |file, text, out| {
                rust_file(
                    file,
                    text,
                    &name,
                    &full,
                    parents.contains(&file.to_path_buf()),
                    out,
                )
            })
            .described(looked),
        )
    } else {
        None
    }
}

impl Leftovers {
    fn described(mut self, looked_for: String) -> Self {
        self.looked_for = looked_for;
        self
    }
}

fn shown(ws: &Path, p: &Path) -> String {
    agent_tier::workspace::display_path(ws, p)
}

/// Read every file of `exts` under `ws` (ignore rules as the other searches apply them;
/// `node_modules` and `target` never) and collect what `check` finds, as `(line, text)`.
fn scan(
    ws: &Path,
    exts: &[&str],
    check: impl Fn(&Path, &str, &mut Vec<(usize, String)>),
) -> Leftovers {
    let mut out = Leftovers::default();
    let walk = agent_tier::ignore_rules::walker(ws, false)
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some("node_modules" | "target")))
        .build();
    for entry in walk.flatten().take(MAX_FILES * 4) {
        let path = entry.path();
        let ours = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e.to_ascii_lowercase().as_str()));
        if !ours || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if entry.metadata().map_or(true, |m| m.len() > MAX_BYTES) || out.files >= MAX_FILES {
            continue;
        }
        let Ok(text) = crate::text::read_text(ws, path) else {
            continue;
        };
        out.files += 1;
        let mut found = Vec::new();
        check(path, &text, &mut found);
        out.sites.extend(
            found
                .into_iter()
                .map(|(line, t)| format!("{}:{}: {}", shown(ws, path), line + 1, t.trim())),
        );
    }
    out
}

/// The relative specifiers of `file` that resolve to `old`.
fn js_file(file: &Path, text: &str, old: &Path, out: &mut Vec<(usize, String)>) {
    let dir = file.parent().unwrap_or(Path::new("/"));
    for (n, line) in text.lines().enumerate() {
        for spec in specifiers(line) {
            if (spec.starts_with("./") || spec.starts_with("../"))
                && names(&normal(&dir.join(spec)), old)
            {
                out.push((n, line.to_string()));
                break;
            }
        }
    }
}

/// The module specifiers on one line: string literals right after `from`, `import`,
/// `require(` or `import(`.
fn specifiers(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    let mut before_len = 0;
    while let Some(i) = rest.find(['"', '\'']) {
        let q = rest.as_bytes()[i] as char;
        let Some(j) = rest[i + 1..].find(q) else {
            break;
        };
        let before = line[..before_len + i].trim_end();
        if before.ends_with("from")
            || before.ends_with("import")
            || before.ends_with("require(")
            || before.ends_with("import(")
        {
            out.push(&rest[i + 1..i + 1 + j]);
        }
        before_len += i + j + 2;
        rest = &rest[i + j + 2..];
    }
    out
}

/// Whether the resolved specifier `base` names `old`: itself, without its extension (or with
/// a JavaScript extension for a TypeScript file), or its folder when `old` is an `index`.
fn names(base: &Path, old: &Path) -> bool {
    let stem = |p: &Path| -> PathBuf {
        match p.extension().and_then(|e| e.to_str()) {
            Some(e) if JS.contains(&e) => p.with_extension(""),
            _ => p.to_path_buf(),
        }
    };
    let old_stem = stem(old);
    stem(base) == old_stem
        || (old_stem.file_name().is_some_and(|n| n == "index") && old_stem.parent() == Some(base))
}

/// `p` with `.` and `..` resolved lexically.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The crate's `src` folder and the module path of `file` in it (`src/a/b.rs` → `a::b`);
/// `None` for a crate root or a file outside a `src` folder of a crate.
fn rust_module(ws: &Path, file: &Path) -> Option<(PathBuf, Vec<String>)> {
    let mut dir = file.parent()?;
    let src = loop {
        if dir.file_name().is_some_and(|n| n == "src") && dir.parent()?.join("Cargo.toml").is_file()
        {
            break dir.to_path_buf();
        }
        if dir == ws {
            return None;
        }
        dir = dir.parent()?;
    };
    let rel = file.strip_prefix(&src).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if parts.is_empty() && matches!(stem, "lib" | "main") {
        return None;
    }
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    (!parts.is_empty()).then_some((src, parts))
}

/// The files that can declare `file`'s module: its folder's `mod.rs`, the `folder.rs` beside
/// it, and at the crate's top the crate roots.
fn rust_parents(src: &Path, file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else {
        return Vec::new();
    };
    let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let mut out = vec![dir.join("mod.rs"), dir.with_extension("rs")];
    if dir == src {
        out.extend([src.join("lib.rs"), src.join("main.rs")]);
    }
    out
}

/// `mod name;` in a parent module file, and `crate::…` paths of the module, in `text`.
fn rust_file(
    _file: &Path,
    text: &str,
    name: &str,
    full: &str,
    parent: bool,
    out: &mut Vec<(usize, String)>,
) {
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub")
            .map(|r| match r.trim_start().strip_prefix('(') {
                Some(r) => r.split_once(')').map_or(r, |(_, rest)| rest),
                None => r,
            })
            .unwrap_or(t)
            .trim_start();
        let declares = parent
            && t.strip_prefix("mod ").is_some_and(|r| {
                r.trim_start()
                    .strip_prefix(name)
                    .is_some_and(|r| r.trim_start().starts_with(';'))
            });
        let uses = line.match_indices(full).any(|(i, _)| {
            !line[i + full.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        if declares || uses {
            out.push((n, line.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifiers_after_import_words_only() {
        assert_eq!(
            specifiers(r#"import { a } from "./lib"; const s = "./lib"; export * from './x';"#),
            vec!["./lib", "./x"]
        );
        assert_eq!(
            specifiers("const m = require('../m'); import('./d')"),
            vec!["../m", "./d"]
        );
        assert!(specifiers("console.log(\"from\")").is_empty());
    }

    #[test]
    fn a_specifier_names_a_file_with_or_without_extension() {
        let old = Path::new("/w/src/lib.ts");
        assert!(names(&normal(Path::new("/w/src/./lib")), old));
        assert!(names(Path::new("/w/src/lib.js"), old));
        assert!(!names(Path::new("/w/src/lib2"), old));
        assert!(names(
            Path::new("/w/src/util"),
            Path::new("/w/src/util/index.ts")
        ));
        assert_eq!(normal(Path::new("/w/a/../b/./c")), PathBuf::from("/w/b/c"));
    }

    #[test]
    fn rust_declarations_and_paths() {
        let mut out = Vec::new();
        rust_file(
            Path::new("lib.rs"),
            "pub mod util;\npub(crate) mod util ;\nmod utils;\nuse crate::util::f;\nuse crate::utility;\n",
            "util",
            "crate::util",
            true,
            &mut out,
        );
        let lines: Vec<usize> = out.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, vec![0, 1, 3]);
    }
}
