//! A strict unified-diff parser and applier for `apply_patch`: context lines must match exactly
//! (a hunk may sit at another line than its header says, as with `patch`'s offset search, but
//! never with fuzz).

/// One file section of a unified diff.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePatch {
    /// `None` when the old side is `/dev/null` (a new file).
    pub old_path: Option<String>,
    /// `None` when the new side is `/dev/null` (a deletion).
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    /// 1-based old start line from the header.
    pub old_start: usize,
    /// Lines: (' ' | '-' | '+', text without newline).
    pub lines: Vec<(char, String)>,
}

fn strip_prefix(path: &str) -> Option<String> {
    let path = path.split('\t').next().unwrap_or(path).trim();
    if path == "/dev/null" {
        return None;
    }
    Some(
        path.strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path)
            .to_string(),
    )
}

/// Parse a unified diff.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, String> {
    let mut files: Vec<FilePatch> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(format!(
                    "`patch` line {}: `---` must be followed by a `+++` line",
                    i + 1
                ));
            };
            files.push(FilePatch {
                old_path: strip_prefix(old),
                new_path: strip_prefix(new),
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(format!(
                    "`patch` line {}: hunk before any `---`/`+++` file header",
                    i + 1
                ));
            };
            let old_start = line
                .trim_start_matches('@')
                .split_whitespace()
                .next()
                .and_then(|r| r.strip_prefix('-'))
                .and_then(|r| r.split(',').next())
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    format!(
                        "`patch` line {}: malformed hunk header `{line}`; expected `@@ -l,s +l,s @@`",
                        i + 1
                    )
                })?;
            let mut hunk = Hunk {
                old_start,
                lines: Vec::new(),
            };
            i += 1;
            while i < lines.len() {
                let l = lines[i];
                if l.starts_with("@@")
                    || (l.starts_with("--- ")
                        && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")))
                {
                    break;
                }
                if l.starts_with('\\') {
                    i += 1;
                    continue;
                }
                let (kind, rest) = match l.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => (c, &l[1..]),
                    None => (' ', ""),
                    Some(_) => break,
                };
                hunk.lines.push((kind, rest.to_string()));
                i += 1;
            }
            file.hunks.push(hunk);
            continue;
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(
            "`patch` contains no file header (`--- a/path` / `+++ b/path`); give a unified diff"
                .into(),
        );
    }
    Ok(files)
}

/// Apply hunks to `old`, failing (and changing nothing) when any hunk's context does not match.
pub fn apply(old: &str, hunks: &[Hunk]) -> Result<String, String> {
    let trailing_newline = old.is_empty() || old.ends_with('\n');
    let mut lines: Vec<String> = old.lines().map(str::to_string).collect();
    let mut offset: isize = 0;
    for (n, h) in hunks.iter().enumerate() {
        let before: Vec<&str> = h
            .lines
            .iter()
            .filter(|(k, _)| *k != '+')
            .map(|(_, t)| t.as_str())
            .collect();
        let after: Vec<String> = h
            .lines
            .iter()
            .filter(|(k, _)| *k != '-')
            .map(|(_, t)| t.clone())
            .collect();
        let want = (h.old_start.saturating_sub(1) as isize + offset).max(0) as usize;
        let fits = |at: usize| {
            at + before.len() <= lines.len()
                && lines[at..at + before.len()]
                    .iter()
                    .map(String::as_str)
                    .eq(before.iter().copied())
        };
        let at = if before.is_empty() {
            Some(want.min(lines.len()))
        } else {
            (0..=lines.len())
                .flat_map(|d| [want.checked_add(d), want.checked_sub(d)])
                .flatten()
                .find(|&at| fits(at))
        };
        let Some(at) = at else {
            return Err(format!(
                "hunk {} (at line {}) does not apply: its context lines are not in the file",
                n + 1,
                h.old_start
            ));
        };
        lines.splice(at..at + before.len(), after.iter().cloned());
        offset += after.len() as isize - before.len() as isize + (at as isize - want as isize);
    }
    let mut out = lines.join("\n");
    if trailing_newline && !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_a_simple_patch() {
        let p = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
        let files = parse(p).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(apply("a\nb\nc\n", &files[0].hunks).unwrap(), "a\nB\nc\n");
    }

    #[test]
    fn refuses_mismatched_context() {
        let p = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n x\n-b\n+B\n";
        let files = parse(p).unwrap();
        let err = apply("a\nb\nc\n", &files[0].hunks).unwrap_err();
        assert!(err.contains("does not apply"), "{err}");
    }

    #[test]
    fn new_file_from_dev_null() {
        let p = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n";
        let files = parse(p).unwrap();
        assert_eq!(files[0].old_path, None);
        assert_eq!(apply("", &files[0].hunks).unwrap(), "hello\nworld\n");
    }
}
