//! The unified-diff applier of `apply_patch` (the parser, with its recount, is [`crate::hunks`]).
//!
//! - Context and deleted lines are matched exactly first (a hunk may sit at another line than its
//!   header says, as with `patch`'s offset search, but never with fuzz); a hunk with no exact
//!   match anywhere is matched ignoring trailing whitespace, then with typographic punctuation
//!   normalised ([`Tolerance`]) — only where it then matches one place, and the caller is told.
//!   Context lines keep the file's own text.
//! - A file's line endings are kept: lines are compared without their terminator, and added lines
//!   take the file's own (`\r\n` in a CRLF file).
//! - A deletion (`+++ /dev/null`) is verified: its `-` lines must be the whole file.

use crate::error::ApplyError;
pub use crate::hunks::{Hunk, parse};
use agent_tier::display::escape;

/// How closely a hunk's context and `-` lines had to match the file's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    Exact,
    /// Ignoring whitespace at the end of a line.
    TrailingWhitespace,
    /// Ignoring trailing whitespace, with curly quotes, dashes, odd spaces and `…` read as their
    /// ASCII forms (what a model's or a word processor's typography changes).
    Punctuation,
}

impl Tolerance {
    /// The levels past exact, in the order they are tried.
    pub const LOOSER: [Tolerance; 2] = [Tolerance::TrailingWhitespace, Tolerance::Punctuation];
    /// Every level, exact first.
    pub const ALL: [Tolerance; 3] = [
        Tolerance::Exact,
        Tolerance::TrailingWhitespace,
        Tolerance::Punctuation,
    ];

    /// Whether the file's line `have` (without terminator) matches the patch's line `want`.
    pub fn same(self, have: &str, want: &str) -> bool {
        match self {
            Tolerance::Exact => have == want,
            Tolerance::TrailingWhitespace => have.trim_end() == want.trim_end(),
            Tolerance::Punctuation => plain(have.trim_end()).eq(plain(want.trim_end())),
        }
    }

    /// `ignoring trailing whitespace`.
    pub fn describe(self) -> &'static str {
        match self {
            Tolerance::Exact => "exactly",
            Tolerance::TrailingWhitespace => "only after ignoring trailing whitespace",
            Tolerance::Punctuation => {
                "only after normalising typographic punctuation (curly quotes, dashes, non-breaking spaces, ellipses) and trailing whitespace"
            }
        }
    }
}

/// `text`'s characters with typographic punctuation as ASCII: ‘’‚‛′ → `'`, “”„‟″ → `"`, the
/// dashes and minus → `-`, non-breaking and other fixed-width spaces → ` `, `…` → `...`.
fn plain(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().flat_map(|c| {
        let (c, n) = match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}' => {
                ('\'', 1)
            }
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}' => ('"', 1),
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => ('-', 1),
            '\u{00a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => (' ', 1),
            '\u{2026}' => ('.', 3),
            c => (c, 1),
        };
        std::iter::repeat_n(c, n)
    })
}

/// How many hunks of one file matched only under each tolerance.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tolerated {
    pub trailing_whitespace: usize,
    pub punctuation: usize,
}

impl Tolerated {
    pub(crate) fn add(&mut self, t: Tolerance) {
        match t {
            Tolerance::Exact => {}
            Tolerance::TrailingWhitespace => self.trailing_whitespace += 1,
            Tolerance::Punctuation => self.punctuation += 1,
        }
    }

    /// `note: a.py: 2 hunk(s) matched only after ignoring trailing whitespace`, one per level used.
    pub fn notes(&self, file: &str) -> Vec<String> {
        [
            (self.trailing_whitespace, Tolerance::TrailingWhitespace),
            (self.punctuation, Tolerance::Punctuation),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, t)| {
            format!(
                "note: {}: {n} hunk(s) matched {} (the file's own context lines were kept)",
                escape(file),
                t.describe()
            )
        })
        .collect()
    }
}

/// The refusal of a hunk or chunk whose context and `-` lines match several places under a
/// tolerance: each place's line (numbered by `line_of`) and its first line as the file has it.
pub(crate) fn ambiguous(
    what: &str,
    level: Tolerance,
    places: &[usize],
    out: &[String],
    line_of: impl Fn(usize) -> String,
) -> ApplyError {
    const SHOWN: usize = 5;
    let mut list: Vec<String> = places
        .iter()
        .take(SHOWN)
        .map(|&at| {
            let first: String = body(&out[at]).chars().take(120).collect();
            format!("{}: `{}`", line_of(at), escape(&first))
        })
        .collect();
    if places.len() > SHOWN {
        list.push(format!("… ({} more)", places.len() - SHOWN));
    }
    ApplyError::Ambiguous {
        what: what.to_string(),
        level: level.describe(),
        count: places.len(),
        places: list,
    }
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

/// Apply hunks to `old`, failing (and changing nothing) when any hunk's context does not match
/// or matches several places under a tolerance; with the hunks that needed one.
pub fn apply(old: &str, hunks: &[Hunk]) -> Result<(String, Tolerated), ApplyError> {
    let Lines { lines, eol } = split(old);
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    // Each line's number in `old` (`None`: added by an earlier hunk), for messages.
    let mut origin: Vec<Option<usize>> = (1..=out.len()).map(Some).collect();
    let mut tolerated = Tolerated::default();
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
        let mut at = if before.is_empty() {
            Some(want.min(out.len()))
        } else {
            (0..=out.len())
                .flat_map(|d| [want.checked_add(d), want.checked_sub(d)])
                .flatten()
                .find(|&at| fits(&out, at, &before, Tolerance::Exact))
        };
        if at.is_none() {
            for level in Tolerance::LOOSER {
                let places = places(&out, &before, level, 0..=out.len());
                match places.as_slice() {
                    [] => continue,
                    [one] => {
                        at = Some(*one);
                        tolerated.add(level);
                    }
                    many => {
                        return Err(ambiguous(
                            &format!("hunk {} (at line {})", n + 1, h.old_start),
                            level,
                            many,
                            &out,
                            |i| match origin[i] {
                                Some(l) => format!("line {l}"),
                                None => "a line an earlier hunk added".into(),
                            },
                        ));
                    }
                }
                break;
            }
        }
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
            return Err(ApplyError::HunkNotFound {
                hunk: n + 1,
                line: h.old_start,
                expected,
            });
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
        let mut old_i = at;
        let mut kept_origin = Vec::with_capacity(added);
        for (k, _) in &h.lines {
            match k {
                ' ' => {
                    kept_origin.push(origin[old_i]);
                    old_i += 1;
                }
                '-' => old_i += 1,
                _ => kept_origin.push(None),
            }
        }
        origin.splice(at..at + removed, kept_origin);
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
    Ok((out.concat(), tolerated))
}

/// Whether the lines `want` match `lines` from `at` under `level` (never past the end): the one
/// line-sequence test of both patch formats.
pub(crate) fn fits(lines: &[String], at: usize, want: &[&str], level: Tolerance) -> bool {
    at + want.len() <= lines.len()
        && lines[at..at + want.len()]
            .iter()
            .zip(want)
            .all(|(have, want)| level.same(body(have), want))
}

/// The places among `candidates` where `want` matches `lines` under `level`.
pub(crate) fn places(
    lines: &[String],
    want: &[&str],
    level: Tolerance,
    candidates: impl IntoIterator<Item = usize>,
) -> Vec<usize> {
    candidates
        .into_iter()
        .filter(|&at| fits(lines, at, want, level))
        .collect()
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
pub fn verify_deletion(old: &str, hunks: &[Hunk]) -> Result<(), ApplyError> {
    if hunks.iter().any(|h| h.lines.iter().any(|(k, _)| *k != '-')) {
        return Err(ApplyError::DeletionKeepsLines);
    }
    let (left, _) = apply(old, hunks)?;
    if left.is_empty() {
        Ok(())
    } else {
        Err(ApplyError::DeletionIncomplete {
            left: left.lines().count(),
        })
    }
}

#[cfg(test)]
mod tests;
