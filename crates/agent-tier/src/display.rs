//! How text from outside the host is shown: file contents, program output, paths, what a model
//! or a person wrote. This module owns the one rule for which characters are shown escaped (a
//! terminal would act on them, or they make text read differently from what it is) and how
//! they are written (`\x1b`, `\u{202e}`), and the clipping of a path argument echoed in an
//! error. Every family's results and every terminal printer use it; none keeps its own copy.
//!
//! It is also the one home of the small display helpers every family needs: clipping a long
//! text ([`clip_chars`], [`clip_tail_chars`], [`clip_middle_bytes`]), a duration a person reads
//! ([`duration`]) and a counted noun ([`plural`]).

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

/// `n` and the noun, `one` or `many`: `1 file`, `3 files`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `… (N more characters)`, the note every clip ends with.
fn more_characters(n: usize) -> String {
    format!(
        "… ({n} more {})",
        if n == 1 { "character" } else { "characters" }
    )
}

/// `text`'s first `max` characters, then `… (N more characters)` when it is longer.
pub fn clip_chars(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((at, _)) => {
            let more = text[at..].chars().count();
            Cow::Owned(format!("{}{}", &text[..at], more_characters(more)))
        }
    }
}

/// `text`'s last `max` characters, after `(N earlier characters) …` when it is longer.
pub fn clip_tail_chars(text: &str, max: usize) -> Cow<'_, str> {
    let count = text.chars().count();
    if count <= max {
        return Cow::Borrowed(text);
    }
    let skip = count - max;
    let at = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!("({skip} earlier characters) …{}", &text[at..]))
}

/// `text` cut to about `cap` bytes: the first three quarters and the last quarter kept, with a
/// line saying how many bytes were cut between them; the second value is that count (0 when
/// nothing was cut).
pub fn clip_middle_bytes(text: &str, cap: usize) -> (Cow<'_, str>, usize) {
    if text.len() <= cap {
        return (Cow::Borrowed(text), 0);
    }
    let room = cap.saturating_sub(80).max(16);
    let head = text.floor_char_boundary(room * 3 / 4);
    let tail = text.ceil_char_boundary(text.len() - room / 4);
    let cut = tail - head;
    (
        Cow::Owned(format!(
            "{}\n[… {cut} bytes cut here …]\n{}",
            &text[..head],
            &text[tail..]
        )),
        cut,
    )
}

/// A duration as a person reads it: `850ms`, `1.5s`, `45s`, `1m30s`, `2h`, `1h5m` (tenths of a
/// second under a minute, whole seconds above).
pub fn duration(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    if secs < 60 && d.subsec_millis() >= 50 {
        let tenths = (d.as_millis() + 50) / 100;
        if !tenths.is_multiple_of(10) {
            return format!("{}.{}s", tenths / 10, tenths % 10);
        }
    }
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        let _ = write!(out, "{h}h");
    }
    if m > 0 {
        let _ = write!(out, "{m}m");
    }
    if s > 0 || out.is_empty() {
        let _ = write!(out, "{s}s");
    }
    out
}

/// The last `cap` bytes of a stream of text (a debuggee's or a cell's output), cut only at a
/// character boundary, with the count of bytes dropped from the front so that a reader's cursor
/// into the whole stream stays valid.
#[derive(Debug, Clone)]
pub struct TextTail {
    text: String,
    dropped: usize,
    cap: usize,
}

impl TextTail {
    /// A tail that keeps at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        TextTail {
            text: String::new(),
            dropped: 0,
            cap,
        }
    }

    /// Append `s`, dropping the oldest text beyond the cap.
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        if self.text.len() > self.cap {
            let cut = self.text.ceil_char_boundary(self.text.len() - self.cap);
            self.text.drain(..cut);
            self.dropped += cut;
        }
    }

    /// The text kept.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many bytes were dropped from the front so far.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Total bytes ever pushed (the cursor just past the end).
    pub fn end(&self) -> usize {
        self.dropped + self.text.len()
    }

    /// Up to `max` bytes from `cursor` (a position in the whole stream; one before what is kept
    /// starts at the oldest kept byte): the text, where it really started, and the next cursor.
    pub fn read(&self, cursor: usize, max: usize) -> (String, usize, usize) {
        let start = self
            .text
            .ceil_char_boundary(cursor.clamp(self.dropped, self.end()) - self.dropped);
        let stop = self.text.floor_char_boundary(start + max).max(start);
        (
            self.text[start..stop].to_string(),
            start + self.dropped,
            stop + self.dropped,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_say_how_much_they_left_out() {
        assert_eq!(clip_chars("héllo", 5), "héllo");
        assert_eq!(clip_chars("héllo world", 5), "héllo… (6 more characters)");
        assert_eq!(clip_chars("ab", 1), "a… (1 more character)");
        assert_eq!(
            clip_tail_chars("héllo world", 5),
            "(6 earlier characters) …world"
        );
        assert_eq!(clip_tail_chars("world", 5), "world");
        let long = format!("{}{}", "é".repeat(400), "z".repeat(400));
        let (clipped, cut) = clip_middle_bytes(&long, 200);
        assert!(
            clipped.starts_with("ééé") && clipped.ends_with("zzz"),
            "{clipped}"
        );
        assert_eq!(clipped.matches("bytes cut here").count(), 1);
        assert_eq!(
            long.len() - cut,
            clipped.len() - format!("\n[… {cut} bytes cut here …]\n").len()
        );
        assert_eq!(clip_middle_bytes("short", 200), (Cow::Borrowed("short"), 0));
    }

    #[test]
    fn durations_and_counts_read_as_a_person_says_them() {
        use std::time::Duration;
        assert_eq!(duration(Duration::from_millis(850)), "850ms");
        assert_eq!(duration(Duration::from_secs(45)), "45s");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(duration(Duration::from_millis(12_340)), "12.3s");
        assert_eq!(duration(Duration::from_millis(2_020)), "2s");
        assert_eq!(duration(Duration::from_millis(65_400)), "1m5s");
        assert_eq!(duration(Duration::from_secs(300)), "5m");
        assert_eq!(duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(duration(Duration::from_secs(7200)), "2h");
        assert_eq!(duration(Duration::from_secs(3900)), "1h5m");
        assert_eq!(plural(1, "file", "files"), "1 file");
        assert_eq!(plural(0, "file", "files"), "0 files");
    }

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

    #[test]
    fn a_text_tail_keeps_the_last_bytes_at_a_char_boundary_and_counts_the_rest() {
        let mut t = super::TextTail::new(5);
        t.push("ab");
        t.push("cdé"); // 6 bytes in all: `a` goes
        assert_eq!((t.text(), t.dropped(), t.end()), ("bcdé", 1, 6));
        t.push("ééé"); // keeping 5 bytes would cut an `é`: 4 kept
        assert_eq!((t.text(), t.dropped(), t.end()), ("éé", 8, 12));
        // A cursor before what is kept reads from the oldest kept byte.
        assert_eq!(t.read(0, 100), ("éé".to_string(), 8, 12));
        // A bound inside a character stops before it.
        assert_eq!(t.read(8, 3), ("é".to_string(), 8, 10));
        assert_eq!(t.read(12, 3), (String::new(), 12, 12));
    }
}
