//! How file text and paths are shown in a result: escaped so that neither can start a line of
//! its own or reach a terminal as a control sequence, clipped to a readable width (saying how
//! much was left out), columns counted in characters, paths relative to the root; and a
//! [`Match`] as a result lists it.
//!
//! What a result may carry verbatim is decided by [`agent_tier::display`], for every family.

pub(crate) use agent_tier::display::escape;
use agent_tier::display::{clip_chars, needs_escape, push_escaped};
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Characters of one matched line (or diff line) shown; the rest is counted.
pub const MAX_LINE_CHARS: usize = 240;

/// Characters of one capture kept (and shown); the rest is counted.
pub const MAX_CAPTURE_CHARS: usize = 200;

/// `line` escaped, at most [`MAX_LINE_CHARS`] characters of it shown (escapes count as what
/// they print), then how many characters of the line were left out. Escaping while clipping is
/// this crate's own (`display::clip_chars` clips text as it is); the note is the same.
pub fn clip(line: &str) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for (i, c) in line.char_indices() {
        if shown >= MAX_LINE_CHARS {
            // The rest clipped to nothing: the note alone, `… (N more characters)`.
            out.push_str(&clip_chars(&line[i..], 0));
            return out;
        }
        let before = out.len();
        if needs_escape(c) {
            push_escaped(&mut out, c);
            shown += out.len() - before;
        } else {
            out.push(c);
            shown += 1;
        }
    }
    out
}

/// A capture as it is kept: its first [`MAX_CAPTURE_CHARS`] characters (as in the file, not
/// yet escaped), then how many were left out; and how many lines the whole capture spans.
pub fn kept_capture(text: &str) -> (String, usize) {
    // As `read` counts them: a final line ending ends the last line, it starts none.
    let lines = agent_tier::lines::count(text.as_bytes());
    (clip_chars(text, MAX_CAPTURE_CHARS).into_owned(), lines)
}

/// The 1-based column, in characters, of byte `offset` of `text` on its line (a line ends at
/// `\n`, `\r\n` or a lone `\r`: [`agent_tier::lines`]).
pub fn column_of(text: &str, offset: usize) -> usize {
    let line_start = agent_tier::lines::line_start(text.as_bytes(), offset);
    text[line_start..offset].chars().count() + 1
}

/// `path` relative to the (canonical) root, as data (structured results, staged edits); a
/// result's text shows it through [`escape`].
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_says_how_much_was_clipped() {
        let line = "x".repeat(1000);
        let shown = clip(&line);
        assert!(shown.starts_with(&"x".repeat(MAX_LINE_CHARS)));
        assert!(shown.ends_with("… (760 more characters)"), "{shown}");
        assert_eq!(clip("short"), "short");
        // Escapes count as what they print.
        let shown = clip(&"\u{1b}".repeat(100));
        assert!(shown.ends_with("… (40 more characters)"), "{shown}");
    }

    #[test]
    fn a_kept_capture_is_clipped_and_counts_its_lines() {
        let (kept, lines) = kept_capture(&format!("{}\n{}", "a".repeat(300), "b".repeat(10)));
        assert_eq!(lines, 2);
        assert!(kept.ends_with("… (111 more characters)"), "{kept}");
        assert_eq!(kept_capture("x"), ("x".to_string(), 1));
        assert_eq!(kept_capture("a\rb\r\nc\n").1, 3);
        assert_eq!(column_of("ab\rcd", 4), 2);
    }
}

/// One match, ready to render.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Match {
    /// Path relative to the workspace root.
    pub file: String,
    /// 1-based line of the match start.
    pub line: usize,
    /// 1-based column (in characters) of the match start.
    pub column: usize,
    /// 1-based line of the match end.
    pub end_line: usize,
    /// 1-based column (in characters) just past the match end.
    pub end_column: usize,
    /// The matched lines as shown: at most `max_match_lines`, each escaped and clipped to 240
    /// characters (saying how many more it has).
    pub lines: Vec<String>,
    /// How many matched lines were left out of `lines`.
    pub more_lines: usize,
    /// Each metavariable's capture (a `$$$` run as the source text it spans), as in the file:
    /// its first 200 characters, then `… (N more characters)` when it has more.
    pub captures: BTreeMap<String, String>,
    /// How many lines each capture spans, whole.
    #[serde(skip)]
    pub capture_lines: BTreeMap<String, usize>,
}
