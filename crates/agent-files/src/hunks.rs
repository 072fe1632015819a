//! Reading a unified diff into file sections and hunks: where each hunk's body ends, and
//! recounting a hunk whose header counts disagree with its body.
//!
//! After the first file header, every ` `, `-` and `+` line of the input ends up in a hunk, or
//! the patch is refused: a line is never skipped (before it, a message or a diffstat is
//! ignored). A hunk's body is taken by its header's counts (`@@ -l,s +l,s @@`) when they are
//! consistent — the counted lines are followed by the end of the input, the next `@@`, a
//! `diff ` line, a `--- `/`+++ ` file header or a line that cannot be part of a hunk — so a
//! deleted line that starts with `--- ` (an SQL comment) stays a deleted line. Otherwise the
//! header is wrong (models miscount often) and the hunk is recounted from its body, as
//! `git apply --recount` does: the body is every following line that starts with ` `, `-`, `+`
//! or `\` or is empty (an empty context line whose space an editor stripped), up to the next
//! `@@`, `diff ` line or `--- `/`+++ ` header pair. Each recount is reported ([`Recount`]), so
//! the caller can say so.

use crate::error::ParseError;

/// One file section of a unified diff.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePatch {
    /// `None` when the old side is `/dev/null` (a new file).
    pub old_path: Option<String>,
    /// `None` when the new side is `/dev/null` (a deletion).
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// The path the section is named by in messages: the new side's, else the old side's.
    pub fn name(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("/dev/null")
    }
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    /// 1-based old start line from the header (with an old count of 0: the line the hunk's
    /// lines go after, 0 for the top of the file).
    pub old_start: usize,
    /// Lines: (' ' | '-' | '+', text without newline).
    pub lines: Vec<(char, String)>,
    /// A `\ No newline at end of file` marker followed the new side's last line.
    pub new_no_eol: bool,
    /// Set when the header's counts did not match the body and the body's were used.
    pub recount: Option<Recount>,
}

/// A hunk header's counts, and the counts of the body they were replaced by.
#[derive(Debug, Clone, PartialEq)]
pub struct Recount {
    /// ((old start, old count), (new start, new count)) as the header said.
    pub header: ((usize, usize), (usize, usize)),
    /// (old count, new count) of the body.
    pub body: (usize, usize),
}

impl Recount {
    /// `header said -1,2 +1,2, body has -1,3 +1,3; recounted`.
    pub fn describe(&self) -> String {
        let ((os, oc), (ns, nc)) = self.header;
        let (bo, bn) = self.body;
        format!("header said -{os},{oc} +{ns},{nc}, body has -{os},{bo} +{ns},{bn}; recounted")
    }
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

/// Line `i` is `--- …` and line `i + 1` is `+++ …`: a file header.
fn header_pair(lines: &[&str], i: usize) -> bool {
    lines.get(i).is_some_and(|l| l.starts_with("--- "))
        && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
}

/// A header pair followed by a hunk header: a file header even where a hunk's counts would
/// take its two lines as a deleted and an added line.
fn header_triple(lines: &[&str], i: usize) -> bool {
    header_pair(lines, i) && lines.get(i + 2).is_some_and(|l| l.starts_with("@@"))
}

/// A line that starts the next hunk or the next file.
fn boundary(lines: &[&str], i: usize) -> bool {
    lines
        .get(i)
        .is_some_and(|l| l.starts_with("@@") || l.starts_with("diff "))
        || header_pair(lines, i)
}

/// A line that can be part of a hunk's body.
fn body_line(line: &str) -> bool {
    line.is_empty() || line.starts_with([' ', '-', '+', '\\'])
}

/// The end of the body the header's counts delimit from `start`, if the lines there have those
/// counts (trailing `\` markers included); `None` when the body runs out or has other counts.
fn counted_end(lines: &[&str], start: usize, old: usize, new: usize) -> Option<usize> {
    let (mut old_left, mut new_left) = (old, new);
    let mut i = start;
    while old_left + new_left > 0 {
        let l = lines.get(i)?;
        if header_triple(lines, i) {
            return None;
        }
        let (o, n) = match l.chars().next() {
            Some('\\') => (0, 0),
            Some(' ') | None => (1, 1),
            Some('-') => (1, 0),
            Some('+') => (0, 1),
            Some(_) => return None,
        };
        if o > old_left || n > new_left {
            return None;
        }
        old_left -= o;
        new_left -= n;
        i += 1;
    }
    while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        i += 1;
    }
    Some(i)
}

/// Line `i` is the `-- ` that opens an e-mail signature (`git format-patch` ends its mails with
/// `-- ` and the git version): followed by a line of other text, not by a hunk line, the next
/// hunk or file, or the end of the input (then it is a deleted line `- `).
fn signature(lines: &[&str], i: usize) -> bool {
    lines.get(i) == Some(&"-- ")
        && lines
            .get(i + 1)
            .is_some_and(|l| !body_line(l) && !boundary(lines, i + 1))
}

/// Whether a hunk may end at line `i`: what follows (after blank lines) is the end of the input,
/// the next hunk or file, an e-mail signature, or a line that cannot be in a hunk.
fn ends_hunk(lines: &[&str], mut i: usize) -> bool {
    while lines.get(i).is_some_and(|l| l.is_empty()) {
        i += 1;
    }
    match lines.get(i) {
        None => true,
        Some(l) => boundary(lines, i) || signature(lines, i) || !body_line(l),
    }
}

/// The end of the body from `start` by its lines alone (for a recount): up to the next hunk or
/// file or a line that cannot be in a hunk. Blank lines at the very end of the input are the
/// patch's own trailing newlines, not empty context lines.
fn structural_end(lines: &[&str], start: usize) -> usize {
    let mut i = start;
    while i < lines.len() && !boundary(lines, i) && body_line(lines[i]) {
        i += 1;
    }
    if i == lines.len() {
        while i > start && lines[i - 1].is_empty() {
            i -= 1;
        }
    }
    i
}

/// The hunk made of `body` (every line a body line).
fn hunk_of(old_start: usize, body: &[&str]) -> Hunk {
    let mut hunk = Hunk {
        old_start,
        lines: Vec::new(),
        new_no_eol: false,
        recount: None,
    };
    for l in body {
        match l.chars().next() {
            Some('\\') => {
                if matches!(hunk.lines.last(), Some((' ' | '+', _))) {
                    hunk.new_no_eol = true;
                }
            }
            // Some editors strip the space of an empty context line.
            None => hunk.lines.push((' ', String::new())),
            Some(c) => hunk.lines.push((c, l[c.len_utf8()..].to_string())),
        }
    }
    hunk
}

/// The hunk whose header is line `at`, and the line after its body.
fn parse_hunk(lines: &[&str], at: usize) -> Result<(Hunk, usize), ParseError> {
    let line = lines[at];
    let header @ ((old_start, old), (_, new)) =
        hunk_header(line).ok_or_else(|| ParseError::HunkHeader {
            line: at + 1,
            text: line.to_string(),
        })?;
    let start = at + 1;
    if let Some(end) = counted_end(lines, start, old, new).filter(|&end| ends_hunk(lines, end)) {
        return Ok((hunk_of(old_start, &lines[start..end]), end));
    }
    let end = structural_end(lines, start);
    let mut hunk = hunk_of(old_start, &lines[start..end]);
    let count = |side: char| {
        hunk.lines
            .iter()
            .filter(|(k, _)| *k == ' ' || *k == side)
            .count()
    };
    let body = (count('-'), count('+'));
    if body == (0, 0) {
        return Err(ParseError::EmptyHunk {
            line: at + 1,
            header: line.to_string(),
        });
    }
    hunk.recount = Some(Recount { header, body });
    Ok((hunk, end))
}

/// Parse a unified diff.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, ParseError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if header_pair(&lines, i) {
            files.push(FilePatch {
                old_path: strip_prefix(&line[4..]),
                new_path: strip_prefix(&lines[i + 1][4..]),
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("--- ") {
            return Err(ParseError::LoneOldHeader { line: i + 1 });
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(ParseError::HunkBeforeHeader { line: i + 1 });
            };
            let (hunk, end) = parse_hunk(&lines, i)?;
            file.hunks.push(hunk);
            i = end;
            continue;
        }
        // Before the first file header: a preamble (a message, a diffstat). After it, a line
        // that would be a hunk line but belongs to no hunk is refused, never skipped.
        if !files.is_empty() && !signature(&lines, i) && line.starts_with([' ', '-', '+']) {
            return Err(ParseError::OutsideHunk {
                line: i + 1,
                text: line.to_string(),
            });
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(ParseError::NoFileHeader);
    }
    Ok(files)
}
