//! How file text and paths are shown in a result: escaped so that neither can start a line of
//! its own or reach a terminal as a control sequence, clipped to a readable width (saying how
//! much was left out), columns counted in characters, paths relative to the root.
//!
//! [`escape`] is the one place that decides what a result may carry verbatim; it belongs in
//! `agent-tier` beside `display_path`, for every family (issue 23), and moves there later.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

/// Characters of one matched line (or diff line) shown; the rest is counted.
pub const MAX_LINE_CHARS: usize = 240;

/// Characters of one capture kept (and shown); the rest is counted.
pub const MAX_CAPTURE_CHARS: usize = 200;

/// Whether `c` is shown escaped: C0 controls but tab (newline and carriage return included:
/// a result line is one line), DEL, C1 controls, the line and paragraph separators, and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which can
/// make text read differently from what it is.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
        || c == '\u{2028}'
        || c == '\u{2029}'
}

/// Push `c` as its visible escape: `\n`, `\r`, `\x1b` (ASCII), `\u{202e}` (the rest).
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if c.is_ascii() => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` with every character that [`needs_escape`] written as its visible escape (`\n`,
/// `\x1b`, `\u{202e}`); borrowed when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `… (N more characters)`, what a clipped text ends with.
fn more_characters(n: usize) -> String {
    format!(
        "… ({n} more {})",
        if n == 1 { "character" } else { "characters" }
    )
}

/// `line` escaped, at most [`MAX_LINE_CHARS`] characters of it shown (escapes count as what
/// they print), then how many characters were left out.
pub fn clip(line: &str) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for (i, c) in line.char_indices() {
        if shown >= MAX_LINE_CHARS {
            out.push_str(&more_characters(line[i..].chars().count()));
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
    // As `str::lines` counts them: a final newline ends the last line, it starts none.
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
        - usize::from(text.is_empty() || text.ends_with('\n'));
    let kept = match text.char_indices().nth(MAX_CAPTURE_CHARS) {
        None => text.to_string(),
        Some((at, _)) => {
            let mut s = text[..at].to_string();
            s.push_str(&more_characters(text[at..].chars().count()));
            s
        }
    };
    (kept, lines)
}

pub fn column_of(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
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
    fn controls_and_bidi_overrides_are_escaped_and_tabs_are_not() {
        assert_eq!(
            escape("a\tb\nc\r\u{1b}[2J\u{7f}\u{85}\u{202e}\u{2066}\u{2028}é"),
            "a\tb\\nc\\r\\x1b[2J\\x7f\\u{85}\\u{202e}\\u{2066}\\u{2028}é"
        );
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
    }

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
    }
}
