//! A strict unified-diff parser and applier for `apply_patch`.
//!
//! - Hunks are delimited by their header's line counts (`@@ -l,s +l,s @@`), so a deleted line
//!   that happens to start with `--- ` is never taken for a file header, and a body that does not
//!   match its counts is an error.
//! - Context and deleted lines must match exactly (a hunk may sit at another line than its header
//!   says, as with `patch`'s offset search, but never with fuzz).
//! - A file's line endings are kept: lines are compared without their terminator, and added lines
//!   take the file's own (`\r\n` in a CRLF file).
//! - A deletion (`+++ /dev/null`) is verified: its `-` lines must be the whole file.

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
    /// A `\ No newline at end of file` marker followed the new side's last line.
    pub new_no_eol: bool,
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

/// `l` or `l,s` → (l, s); a missing count is 1.
fn range(r: &str) -> Option<(usize, usize)> {
    let mut it = r.splitn(2, ',');
    let start = it.next()?.parse().ok()?;
    let count = match it.next() {
        Some(c) => c.parse().ok()?,
        None => 1,
    };
    Some((start, count))
}

/// `@@ -l,s +l,s @@ …` → ((l, s), (l, s)).
fn hunk_header(line: &str) -> Option<((usize, usize), (usize, usize))> {
    let mut parts = line.strip_prefix("@@ ")?.split_whitespace();
    let old = range(parts.next()?.strip_prefix('-')?)?;
    let new = range(parts.next()?.strip_prefix('+')?)?;
    (parts.next()? == "@@").then_some((old, new))
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
            let ((old_start, mut old_left), (_, mut new_left)) = hunk_header(line)
                .ok_or_else(|| {
                    format!(
                        "`patch` line {}: malformed hunk header `{line}`; expected `@@ -l,s +l,s @@`",
                        i + 1
                    )
                })?;
            let header_line = i + 1;
            let mut hunk = Hunk {
                old_start,
                lines: Vec::new(),
                new_no_eol: false,
            };
            i += 1;
            while old_left + new_left > 0 || lines.get(i).is_some_and(|l| l.starts_with('\\')) {
                let Some(l) = lines.get(i) else { break };
                if l.starts_with('\\') {
                    if matches!(hunk.lines.last(), Some((' ' | '+', _))) {
                        hunk.new_no_eol = true;
                    }
                    i += 1;
                    continue;
                }
                let (kind, rest) = match l.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => (c, &l[1..]),
                    // Some editors strip the space of an empty context line.
                    None => (' ', ""),
                    Some(_) => break,
                };
                let (old_n, new_n) = match kind {
                    ' ' => (1, 1),
                    '-' => (1, 0),
                    _ => (0, 1),
                };
                if old_n > old_left || new_n > new_left {
                    break;
                }
                old_left -= old_n;
                new_left -= new_n;
                hunk.lines.push((kind, rest.to_string()));
                i += 1;
            }
            if old_left + new_left > 0 {
                return Err(format!(
                    "`patch` line {header_line}: hunk `{line}` ends early: {old_left} old and {new_left} new line(s) that its header counts are missing (every line of a hunk starts with ' ', '-' or '+')"
                ));
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

/// A file split into lines, each with its own terminator kept.
pub(crate) struct Lines<'a> {
    pub lines: Vec<&'a str>,
    /// The terminator added lines get: the file's first one, else `\n`.
    pub eol: &'static str,
}

pub(crate) fn split(old: &str) -> Lines<'_> {
    let lines: Vec<&str> = old.split_inclusive('\n').collect();
    let eol = match lines.first() {
        Some(l) if l.ends_with("\r\n") => "\r\n",
        _ => "\n",
    };
    Lines { lines, eol }
}

/// A line without its terminator.
pub(crate) fn body(line: &str) -> &str {
    let l = line.strip_suffix('\n').unwrap_or(line);
    l.strip_suffix('\r').unwrap_or(l)
}

/// Apply hunks to `old`, failing (and changing nothing) when any hunk's context does not match.
pub fn apply(old: &str, hunks: &[Hunk]) -> Result<String, String> {
    let Lines { lines, eol } = split(old);
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut offset: isize = 0;
    let last = hunks.len().saturating_sub(1);
    for (n, h) in hunks.iter().enumerate() {
        let before: Vec<&str> = h
            .lines
            .iter()
            .filter(|(k, _)| *k != '+')
            .map(|(_, t)| t.as_str())
            .collect();
        let want = (h.old_start.saturating_sub(1) as isize + offset).max(0) as usize;
        let fits = |at: usize| {
            at + before.len() <= out.len()
                && out[at..at + before.len()]
                    .iter()
                    .map(|l| body(l))
                    .eq(before.iter().copied())
        };
        let at = if before.is_empty() {
            Some(want.min(out.len()))
        } else {
            (0..=out.len())
                .flat_map(|d| [want.checked_add(d), want.checked_sub(d)])
                .flatten()
                .find(|&at| fits(at))
        };
        let Some(at) = at else {
            // Say what was looked for, so the model can correct the patch in one step (bounded:
            // the first lines of a long hunk are enough to see the mismatch).
            const SHOWN: usize = 8;
            let mut expected: Vec<String> = before
                .iter()
                .take(SHOWN)
                .map(|l| format!("`{l}`"))
                .collect();
            if before.len() > SHOWN {
                expected.push(format!("… ({} more)", before.len() - SHOWN));
            }
            return Err(format!(
                "hunk {} (at line {}) does not apply: its context and `-` lines are not in the file (it expected, in order: {})",
                n + 1,
                h.old_start,
                expected.join(", ")
            ));
        };
        let mut after = replacement(&out, at, &h.lines, eol);
        // A hunk that reaches the end of the file decides how the file ends: with a line
        // terminator unless the patch marks `\ No newline at end of file` on its new side.
        if at + before.len() == out.len()
            && let Some(line) = after.last_mut()
        {
            let text = body(line).to_string();
            *line = if n == last && h.new_no_eol {
                text
            } else {
                format!("{text}{eol}")
            };
        }
        let (removed, added) = (before.len(), after.len());
        out.splice(at..at + removed, after);
        offset += added as isize - removed as isize + (at as isize - want as isize);
    }
    // Only the last line may lack a terminator (an old last line that now has lines after it).
    let count = out.len();
    for line in out.iter_mut().take(count.saturating_sub(1)) {
        if !line.ends_with('\n') {
            line.push_str(eol);
        }
    }
    Ok(out.concat())
}

/// The lines that replace a hunk or chunk matched at `at`: kept context lines keep their own text
/// and terminator, added lines take the file's terminator.
pub(crate) fn replacement(
    out: &[String],
    at: usize,
    lines: &[(char, String)],
    eol: &str,
) -> Vec<String> {
    let mut old_i = at;
    let mut after = Vec::new();
    for (k, t) in lines {
        match k {
            ' ' => {
                after.push(out[old_i].clone());
                old_i += 1;
            }
            '-' => old_i += 1,
            _ => after.push(format!("{t}{eol}")),
        }
    }
    after
}

/// Check that a deletion's hunks remove the whole file.
pub fn verify_deletion(old: &str, hunks: &[Hunk]) -> Result<(), String> {
    if hunks.iter().any(|h| h.lines.iter().any(|(k, _)| *k != '-')) {
        return Err("a deletion (`+++ /dev/null`) may contain only `-` lines".into());
    }
    let left = apply(old, hunks)?;
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the deletion's `-` lines are not the whole file ({} line(s) of it are not in the patch)",
            left.lines().count()
        ))
    }
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
