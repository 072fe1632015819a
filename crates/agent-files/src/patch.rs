//! The unified-diff applier of `apply_patch` (the parser, with its recount, is [`crate::hunks`]).
//!
//! - Context and deleted lines must match exactly (a hunk may sit at another line than its header
//!   says, as with `patch`'s offset search, but never with fuzz).
//! - A file's line endings are kept: lines are compared without their terminator, and added lines
//!   take the file's own (`\r\n` in a CRLF file).
//! - A deletion (`+++ /dev/null`) is verified: its `-` lines must be the whole file.

pub use crate::hunks::{Hunk, parse};

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
        // `-l,s` names the hunk's first old line; with no old lines (`-l,0`), the line the hunk
        // goes after.
        let first = if before.is_empty() {
            h.old_start
        } else {
            h.old_start.saturating_sub(1)
        };
        let want = (first as isize + offset).max(0) as usize;
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
