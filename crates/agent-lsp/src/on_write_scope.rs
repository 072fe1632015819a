//! Which other files a write's diagnostics must look at: the files that use the names the write
//! changed. A language server reports problems for the files it has open, so a change to
//! `def f(x)` that breaks a caller in `b.py` is only seen when `b.py` is asked about; the run's
//! identifier witness says which files use `f`.
//!
//! Owns: choosing those files (bounded) and naming them in the answer. Never: decides what is
//! new in them (that is [`crate::on_write`], with a baseline taken while the server still holds
//! the old content).

use crate::state::State;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// At most this many other files are opened and checked per write.
pub const MAX_OTHERS: usize = 20;
/// At most this many changed names are looked up.
const MAX_NAMES: usize = 12;
/// A name used in more files than this says too little about which files depend on the
/// change (`self`, `i`): it is not followed.
const MAX_FILES_PER_NAME: usize = 50;

/// The other files a write's check covers.
#[derive(Debug, Default)]
pub struct Scope {
    /// The files to check, most names first.
    pub files: Vec<PathBuf>,
    /// The changed names that led to them.
    pub names: Vec<String>,
    /// Files that use the changed names but were over the bound.
    pub left_out: usize,
    /// Why no other file was looked at, when none was.
    pub why_none: Option<String>,
}

/// The identifiers on a line (lexically: letters, digits and `_`, not starting with a digit).
fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .collect()
}

/// The names a line defines or calls: the word before a `(`, and the first word of an
/// assignment.
fn heads(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find('(') {
        if let Some(w) = words(&rest[..i]).last()
            && rest[..i].trim_end().ends_with(*w)
        {
            out.push(*w);
        }
        rest = &rest[i + 1..];
    }
    if line.contains('=')
        && let Some(w) = words(line).first()
    {
        out.push(*w);
    }
    out
}

/// The names a change touched: the lines that differ between `old` and `new` are paired in
/// order; of a pair, the words one side has and the other lacks, and the names the line
/// defines or calls (a signature that gained a parameter changes `f`, not only `y`); of an
/// unpaired line, its words. Longest first.
pub fn changed_names(old: &str, new: &str) -> Vec<String> {
    // Lines as every tool counts them (`\n`, `\r\n` or a lone `\r`).
    use agent_tier::lines::lines;
    let a: HashSet<&str> = lines(old).collect();
    let b: HashSet<&str> = lines(new).collect();
    let gone: Vec<&str> = lines(old).filter(|l| !b.contains(l)).collect();
    let came: Vec<&str> = lines(new).filter(|l| !a.contains(l)).collect();
    let mut names: Vec<&str> = Vec::new();
    for i in 0..gone.len().max(came.len()) {
        match (gone.get(i), came.get(i)) {
            (Some(o), Some(n)) => {
                let (wo, wn): (HashSet<&str>, HashSet<&str>) = (
                    words(o).into_iter().collect(),
                    words(n).into_iter().collect(),
                );
                names.extend(wo.symmetric_difference(&wn));
                if wo != wn {
                    names.extend(heads(o));
                    names.extend(heads(n));
                }
            }
            (Some(l), None) | (None, Some(l)) => names.extend(words(l)),
            (None, None) => {}
        }
    }
    let mut names: Vec<String> = names.into_iter().map(str::to_string).collect();
    names.sort_by(|x, y| y.len().cmp(&x.len()).then_with(|| x.cmp(y)));
    names.dedup();
    names
}

/// The files outside `changed` that use a name the write changed (per the witness).
pub async fn write_scope(st: &State, changed: &[(PathBuf, Option<String>, String)]) -> Scope {
    let Some(w) = st.witness() else {
        return Scope {
            why_none: Some(
                "other files were not looked at: no identifier witness in this run".into(),
            ),
            ..Default::default()
        };
    };
    let changed_paths: HashSet<&PathBuf> = changed.iter().map(|(p, _, _)| p).collect();
    let mut uses: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let mut names_used = Vec::new();
    for (path, old, new) in changed {
        let names = changed_names(old.as_deref().unwrap_or(""), new);
        for name in names.into_iter().take(MAX_NAMES) {
            let (w, near, n) = (w.clone(), path.clone(), name.clone());
            let seen = tokio::task::spawn_blocking(move || {
                w.occurrences(&near, &n, MAX_FILES_PER_NAME * 20)
            })
            .await;
            let Ok(Ok(seen)) = seen else { continue };
            let files: HashSet<PathBuf> = seen
                .occurrences
                .into_iter()
                .map(|o| o.path)
                .filter(|p| !changed_paths.contains(p))
                .collect();
            if files.is_empty() || files.len() > MAX_FILES_PER_NAME || seen.truncated {
                continue;
            }
            names_used.push(name);
            for f in files {
                *uses.entry(f).or_default() += 1;
            }
        }
    }
    let mut files: Vec<(PathBuf, usize)> = uses.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let left_out = files.len().saturating_sub(MAX_OTHERS);
    names_used.sort();
    names_used.dedup();
    Scope {
        files: files.into_iter().take(MAX_OTHERS).map(|(p, _)| p).collect(),
        names: names_used,
        left_out,
        why_none: None,
    }
}

/// The scope line: what the write's check covered, and the servers' own limit.
pub fn scope_line(ws: &Path, changed: &[String], scope: &Scope) -> String {
    let shown = |p: &PathBuf| agent_tier::workspace::display_path(ws, p);
    let mut s = format!("checked {}", changed.join(", "));
    if scope.files.is_empty() {
        match &scope.why_none {
            Some(why) => s.push_str(&format!("; {why}")),
            None => s.push_str("; no other file uses the names it changed"),
        }
    } else {
        let names: Vec<String> = scope
            .names
            .iter()
            .take(5)
            .map(|n| format!("`{n}`"))
            .collect();
        s.push_str(&format!(
            " and {} file(s) that use its changed names ({}): {}",
            scope.files.len(),
            names.join(", "),
            scope.files.iter().map(shown).collect::<Vec<_>>().join(", ")
        ));
        if scope.left_out > 0 {
            s.push_str(&format!(
                "; {} more file(s) use them and were not checked",
                scope.left_out
            ));
        }
    }
    s.push_str("; a language server reports problems only for the files it is asked about: files not named here were not checked");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_on_changed_lines_only() {
        let old = "def f(x):\n    return x\n\nKEEP = 1\n";
        let new = "def f(x, y):\n    return x\n\nKEEP = 1\n";
        assert_eq!(changed_names(old, new), vec!["f", "y"]);
        // A rename in a call: the two names, not the arguments around them.
        assert_eq!(
            changed_names("get(a1.items, t)\n", "fetch(a1.items, t)\n"),
            vec!["fetch", "get"]
        );
        assert!(changed_names("a\n", "a\n").is_empty());
        assert_eq!(changed_names("", "n2 = 3\n"), vec!["n2"]);
    }
}
