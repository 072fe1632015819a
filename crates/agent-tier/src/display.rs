//! How text from outside the host is shown: file contents, program output, paths, what a model
//! or a person wrote. This module owns the one rule for which characters are shown escaped (a
//! terminal would act on them, or they make text read differently from what it is) and how
//! they are written (`\x1b`, `\u{202e}`), and the clipping of a path argument echoed in an
//! error. Every family's results and every terminal printer use it; none keeps its own copy.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Bytes of a path argument an error quotes before it says how many more there were.
pub const PATH_SHOWN_CHARS: usize = 200;

/// Whether `c` is shown escaped (newline aside, which each caller decides on): C0 controls but
/// tab (carriage return included), DEL, C1 controls, the line and paragraph separators
/// (U+2028/9), the zero-width space and the bidirectional marks (U+200B, U+200E/F, U+061C), and
/// the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
/// can make text read differently from what it is.
pub fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

/// Push `c` as its visible escape: `\n`, `\r`, `\x1b` (ASCII), `\u{202e}` (the rest).
pub fn push_escaped(out: &mut String, c: char) {
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

/// `text` with every character in `escaped` written as its visible escape; borrowed when
/// there is none.
fn escape_where(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` as one line: every character that [`needs_escape`], newline included, written as its
/// visible escape (`\n`, `\x1b`, `\u{202e}`), so it can start no line of its own; borrowed when
/// there is none. For paths and file text inside a result line.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_where(text, needs_escape)
}

/// `text` as lines for a terminal: newlines and tabs kept, every other character that
/// [`needs_escape`] written as its visible escape; borrowed when there is none. For whole
/// results, cards and prompts printed to a person.
pub fn escape_keeping_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && needs_escape(c))
}

/// A path argument as an error quotes it: escaped as one line, its first [`PATH_SHOWN_CHARS`]
/// characters, then `… (N more bytes)` when it is longer.
pub fn clip_path(path: &str) -> String {
    match path.char_indices().nth(PATH_SHOWN_CHARS) {
        None => escape(path).into_owned(),
        Some((at, _)) => format!("{}… ({} more bytes)", escape(&path[..at]), path.len() - at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_escaped_and_tabs_are_not() {
        assert_eq!(
            escape("a\tb\nc\r\u{1b}[2J\u{7f}\u{85}\u{202e}\u{2066}\u{2028}\u{200f}é"),
            "a\tb\\nc\\r\\x1b[2J\\x7f\\u{85}\\u{202e}\\u{2066}\\u{2028}\\u{200f}é"
        );
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
        // Joiners are part of writing (emoji, Indic and Persian scripts) and stay.
        assert_eq!(escape("a\u{200d}b"), "a\u{200d}b");
    }

    #[test]
    fn lines_are_kept_for_a_terminal() {
        assert_eq!(
            escape_keeping_lines("one\n\ttwo\r\n\u{1b}]0;t\u{7}\u{9b}2J\u{202e}"),
            "one\n\ttwo\\r\n\\x1b]0;t\\x07\\u{9b}2J\\u{202e}"
        );
    }

    #[test]
    fn a_long_path_is_clipped_saying_how_much() {
        let long = "a/".repeat(500);
        let shown = clip_path(&long);
        assert!(shown.starts_with(&"a/".repeat(100)), "{shown}");
        assert!(shown.ends_with("… (800 more bytes)"), "{shown}");
        assert_eq!(clip_path("src/\u{1b}x.py"), "src/\\x1bx.py");
    }
}
