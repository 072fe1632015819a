//! What a line of a file's text is, for every family that numbers or shows one: `read`'s
//! numbered lines, `ast_grep`'s match lines, the text `lsp` prints for a server's position and
//! the line its `line` argument names, the source lines `debug` echoes. One definition, the
//! Language Server Protocol's: **a line ends at `\n`, `\r\n` or a lone `\r`** (Python reads its
//! source with universal newlines, so a debugger's line numbers count the same way; tree-sitter
//! does not — it counts rows by `\n` only — so a parser's row is never shown as a line number).
//!
//! Two counts follow from it, and both are used:
//!
//! - [`lines`] yields a text's lines without their terminators, as `str::lines` does (a final
//!   terminator ends the last line and starts none; an empty text has no lines): what a person
//!   is shown (`read`, a debugger's source listing).
//! - [`LineIndex`] holds every line the protocol can address: one more than there are
//!   terminators, so the empty line after a final terminator is a line (LSP position `{line: N,
//!   character: 0}` at the end of a text ending with a newline is valid). It converts a byte
//!   offset to a (line, column) position and back.
//!
//! Columns are counted in a [`Unit`]: UTF-8 bytes, UTF-16 code units (the LSP default) or
//! characters. A column past the end of its line is the line's end (as the LSP specification
//! says); a line past the last one is no position. Offsets work on bytes, so a text that is not
//! all UTF-8 still has lines; only its columns need valid text.

use std::io::BufRead;
use std::ops::Range;

/// The length of the line terminator that starts at byte `i` of `bytes`: 2 for `\r\n`, 1 for
/// `\n` or a `\r` not followed by `\n`, 0 when none starts there (or `i` is past the end).
pub fn terminator_at(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i) {
        Some(b'\n') => 1,
        Some(b'\r') if bytes.get(i + 1) == Some(&b'\n') => 2,
        Some(b'\r') => 1,
        _ => 0,
    }
}

/// The first terminator at or after byte `from`: where it starts and its length.
pub fn next_terminator(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let at = from
        + bytes
            .get(from..)?
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')?;
    Some((at, terminator_at(bytes, at)))
}

/// The byte where the line holding byte `offset` starts (an offset inside a `\r\n` belongs to
/// the line that terminator ends). `offset` past the end counts as the end.
pub fn line_start(bytes: &[u8], offset: usize) -> usize {
    let offset = offset.min(bytes.len());
    bytes[..offset]
        .iter()
        .enumerate()
        .rev()
        // A `\r` right before a `\n` is half of one terminator: the `\n` ends the line.
        .find(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .map_or(0, |(i, _)| i + 1)
}

/// The byte where the content of the line holding byte `offset` ends (its terminator's start;
/// the text's end on the last line). An offset inside a `\r\n` is on the line it ends.
pub fn line_end(bytes: &[u8], offset: usize) -> usize {
    let offset = offset.min(bytes.len());
    if offset > 0 && bytes[offset - 1] == b'\r' && bytes.get(offset) == Some(&b'\n') {
        return offset - 1;
    }
    next_terminator(bytes, offset).map_or(bytes.len(), |(at, _)| at)
}

/// Lines counted forward from the last place asked about: for offsets met in increasing order
/// (a parser's nodes in document order), each costs only the bytes since the one before; an
/// offset before the last starts again from the text's start. It holds no index, so it costs
/// nothing per line of a large file.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    start: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `bytes`, at its start.
    pub fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor {
            bytes,
            at: 0,
            line: 0,
            start: 0,
        }
    }

    /// The 0-based line holding byte `offset` and the byte where it starts (an offset inside a
    /// `\r\n` is on the line it ends; past the end counts as the end).
    pub fn seek(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.bytes.len());
        if offset < self.at {
            *self = Cursor::new(self.bytes);
        }
        let mut i = self.at;
        while let Some(p) = self.bytes[i..offset]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let t = i + p;
            let end = t + terminator_at(self.bytes, t);
            if end > offset {
                // The `\r` of a `\r\n` whose `\n` is at `offset`: not ended yet.
                break;
            }
            self.line += 1;
            self.start = end;
            i = end;
        }
        self.at = offset;
        (self.line, self.start)
    }
}

/// The byte ranges of `bytes`' lines, without their terminators, as [`lines`] counts them.
pub fn line_spans(bytes: &[u8]) -> Spans<'_> {
    Spans { bytes, pos: 0 }
}

/// Iterator of [`line_spans`].
#[derive(Debug, Clone)]
pub struct Spans<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for Spans<'_> {
    type Item = Range<usize>;
    fn next(&mut self) -> Option<Range<usize>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.pos;
        match next_terminator(self.bytes, start) {
            Some((at, len)) => {
                self.pos = at + len;
                Some(start..at)
            }
            None => {
                self.pos = self.bytes.len();
                Some(start..self.bytes.len())
            }
        }
    }
}

/// The lines of `text` without their terminators (`\n`, `\r\n`, a lone `\r`): as `str::lines`,
/// which knows no lone `\r`. A final terminator ends the last line and starts none; an empty
/// text has no lines.
pub fn lines(text: &str) -> Lines<'_> {
    Lines {
        text,
        spans: line_spans(text.as_bytes()),
    }
}

/// Iterator of [`lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    text: &'a str,
    spans: Spans<'a>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        // Terminators are ASCII, so every span starts and ends on a character boundary.
        self.spans.next().map(|r| &self.text[r])
    }
}

/// How many lines [`lines`] yields.
pub fn count(bytes: &[u8]) -> usize {
    line_spans(bytes).count()
}

/// What a column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units (the LSP default; a character outside the BMP counts 2).
    Utf16,
    /// Characters (Unicode scalar values).
    Utf32,
}

impl Unit {
    fn of(self, c: char) -> usize {
        match self {
            Unit::Utf8 => c.len_utf8(),
            Unit::Utf16 => c.len_utf16(),
            Unit::Utf32 => 1,
        }
    }
}

/// The column (in `unit`s) of byte `byte` of `line` (a byte inside a character counts the
/// whole character before it; past the end, the line's end).
pub fn units_of_byte(line: &str, byte: usize, unit: Unit) -> u32 {
    let n: usize = line
        .char_indices()
        .take_while(|&(i, _)| i < byte)
        .map(|(_, c)| unit.of(c))
        .sum();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The byte of `line` at column `units` (in `unit`s), clamped to the line's end (a column
/// inside a character — half a surrogate pair — is the end of that character).
pub fn byte_of_units(line: &str, units: u32, unit: Unit) -> usize {
    let mut n = 0usize;
    for (i, c) in line.char_indices() {
        if n >= units as usize {
            return i;
        }
        n += unit.of(c);
    }
    line.len()
}

/// Every line of a text the protocol can address, by its byte range without the terminator:
/// one more line than there are terminators (so an empty text has one empty line, and a text
/// ending with a newline has an empty last line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    spans: Vec<Range<usize>>,
}

impl LineIndex {
    /// Index the lines of `bytes`.
    pub fn new(bytes: &[u8]) -> LineIndex {
        let mut spans = Vec::new();
        let mut start = 0;
        while let Some((at, len)) = next_terminator(bytes, start) {
            spans.push(start..at);
            start = at + len;
        }
        spans.push(start..bytes.len());
        LineIndex { spans }
    }

    /// How many lines the index holds (at least one).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Never: a text has at least one (empty) line.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The byte range of 0-based `line`, without its terminator.
    pub fn span(&self, line: usize) -> Option<Range<usize>> {
        self.spans.get(line).cloned()
    }

    /// The text of 0-based `line` of `text` (the text the index was built from).
    pub fn line<'a>(&self, text: &'a str, line: usize) -> Option<&'a str> {
        text.get(self.span(line)?)
    }

    /// The 0-based line holding byte `offset` (an offset inside a terminator belongs to the line
    /// it ends; the text's length is on the last line); `None` past the end.
    pub fn line_of(&self, offset: usize) -> Option<usize> {
        let last = self.spans.last()?;
        if offset > last.end {
            return None;
        }
        Some(self.spans.partition_point(|s| s.start <= offset) - 1)
    }

    /// The position of byte `offset` of `text`: its 0-based line and its column in `unit`s (an
    /// offset inside a terminator is the end of its line). `None` past the end, inside a
    /// character, or when the line before it is not UTF-8.
    pub fn position(&self, text: &[u8], offset: usize, unit: Unit) -> Option<(u32, u32)> {
        let line = self.line_of(offset)?;
        let span = &self.spans[line];
        let at = offset.min(span.end);
        // Inside a character, the head is not UTF-8: only whole characters have a column.
        let head = std::str::from_utf8(text.get(span.start..at)?).ok()?;
        Some((
            u32::try_from(line).ok()?,
            units_of_byte(head, head.len(), unit),
        ))
    }

    /// The byte offset of position (0-based `line`, `column` in `unit`s) in `text`: a column
    /// past the line's end is its end; `None` for a line past the last, or a column that falls
    /// in or after bytes of the line that are not UTF-8 (it cannot be counted).
    pub fn offset(&self, text: &[u8], line: usize, column: u32, unit: Unit) -> Option<usize> {
        let span = self.span(line)?;
        let bytes = text.get(span.clone())?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Some(span.start + byte_of_units(s, column, unit)),
            Err(e) => {
                let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?;
                (column <= units_of_byte(valid, valid.len(), unit))
                    .then(|| span.start + byte_of_units(valid, column, unit))
            }
        }
    }
}

/// Read one line of `reader` by this definition: its bytes without the terminator are appended
/// to `out`, at most `max` of them (the rest of a longer line is left unread). Returns the bytes
/// consumed (terminator included; 0 at the end of the input) and whether a terminator ended the
/// line (false at the end of the input, or when `max` bytes were taken first). A `\r` at the end
/// of what `reader` has is a line's end; a `\n` read after it is consumed with it.
pub fn read_line<R: BufRead + ?Sized>(
    reader: &mut R,
    out: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool)> {
    scan_line(reader, Some((out, max)))
}

/// Skip to just after the next line's end; the bytes skipped, and whether a terminator ended
/// them (not the end of the input).
pub fn skip_line<R: BufRead + ?Sized>(reader: &mut R) -> std::io::Result<(usize, bool)> {
    scan_line(reader, None)
}

fn scan_line<R: BufRead + ?Sized>(
    reader: &mut R,
    mut keep: Option<(&mut Vec<u8>, usize)>,
) -> std::io::Result<(usize, bool)> {
    let mut total = 0usize;
    let mut kept = 0usize;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((total, false));
        }
        let room = match &keep {
            Some((_, max)) => max.saturating_sub(kept),
            None => usize::MAX,
        };
        if room == 0 {
            return Ok((total, false));
        }
        let window = &buf[..buf.len().min(room)];
        match window.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                let cr = window[i] == b'\r';
                if let Some((out, _)) = keep.as_mut() {
                    out.extend_from_slice(&window[..i]);
                }
                reader.consume(i + 1);
                total += i + 1;
                if cr && reader.fill_buf()?.first() == Some(&b'\n') {
                    reader.consume(1);
                    total += 1;
                }
                return Ok((total, true));
            }
            None => {
                let n = window.len();
                if let Some((out, _)) = keep.as_mut() {
                    out.extend_from_slice(window);
                }
                reader.consume(n);
                total += n;
                kept += n;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    /// Each text: its lines as shown, and the line each byte is on.
    const CASES: &[(&str, &[&str])] = &[
        ("", &[]),
        ("a", &["a"]),
        ("a\n", &["a"]),
        ("a\r\n", &["a"]),
        ("a\r", &["a"]),
        ("a\rb", &["a", "b"]),
        ("a\r\rb", &["a", "", "b"]),
        ("a\n\rb", &["a", "", "b"]),
        ("a\r\n\nb", &["a", "", "b"]),
        ("\r\n\r\n", &["", ""]),
        ("\r", &[""]),
        ("\n\r", &["", ""]),
        ("one\ntwo\r\nthree\rfour", &["one", "two", "three", "four"]),
        ("x\r\r\n", &["x", ""]),
    ];

    #[test]
    fn lines_end_at_lf_crlf_and_lone_cr() {
        for (text, want) in CASES {
            let got: Vec<&str> = lines(text).collect();
            assert_eq!(&got, want, "{text:?}");
            assert_eq!(count(text.as_bytes()), want.len(), "{text:?}");
            // The index holds one line more than the terminators: the shown lines, plus an
            // empty one after a final terminator (or the one empty line of an empty text).
            let idx = LineIndex::new(text.as_bytes());
            let ends_with_terminator = text.ends_with(['\n', '\r']);
            assert_eq!(
                idx.len(),
                want.len() + usize::from(ends_with_terminator || text.is_empty()),
                "{text:?}"
            );
            for (i, w) in want.iter().enumerate() {
                assert_eq!(idx.line(text, i), Some(*w), "{text:?} line {i}");
            }
        }
    }

    #[test]
    fn an_offset_inside_crlf_is_the_end_of_its_line() {
        let t = "ab\r\ncd\ref";
        let idx = LineIndex::new(t.as_bytes());
        let lines_of: Vec<Option<usize>> = (0..=t.len() + 1).map(|o| idx.line_of(o)).collect();
        assert_eq!(
            lines_of,
            [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
                .map(Some)
                .into_iter()
                .chain([None])
                .collect::<Vec<_>>()
        );
        // `\r` at 2, `\n` at 3: both the end of line 0, column 2.
        for o in [2, 3] {
            assert_eq!(
                idx.position(t.as_bytes(), o, Unit::Utf16),
                Some((0, 2)),
                "{o}"
            );
            assert_eq!(line_start(t.as_bytes(), o), 0, "{o}");
        }
        assert_eq!(line_start(t.as_bytes(), 4), 4);
        assert_eq!(line_start(t.as_bytes(), 7), 7);
        assert_eq!(line_start(t.as_bytes(), 99), 7);
        assert_eq!(idx.position(t.as_bytes(), 7, Unit::Utf16), Some((2, 0)));
        assert_eq!(idx.position(t.as_bytes(), 9, Unit::Utf16), Some((2, 2)));
    }

    #[test]
    fn a_cursor_agrees_with_the_index_in_any_order() {
        for (text, _) in CASES {
            let b = text.as_bytes();
            let idx = LineIndex::new(b);
            let mut forward = Cursor::new(b);
            let mut backward = Cursor::new(b);
            for o in 0..=b.len() {
                let want = idx.line_of(o).unwrap();
                let start = idx.span(want).unwrap().start;
                assert_eq!(forward.seek(o), (want, start), "{text:?} at {o}");
                assert_eq!(line_start(b, o), start, "{text:?} at {o}");
                assert_eq!(
                    line_end(b, o),
                    idx.span(want).unwrap().end,
                    "{text:?} at {o}"
                );
                let back = b.len() - o;
                let want = idx.line_of(back).unwrap();
                assert_eq!(backward.seek(back).0, want, "{text:?} back at {back}");
            }
        }
    }

    #[test]
    fn a_trailing_cr_ends_a_line_and_the_next_is_empty() {
        let t = "a\rb\r";
        let idx = LineIndex::new(t.as_bytes());
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.line(t, 2), Some(""));
        assert_eq!(idx.position(t.as_bytes(), 4, Unit::Utf16), Some((2, 0)));
        assert_eq!(idx.offset(t.as_bytes(), 2, 0, Unit::Utf16), Some(4));
        assert_eq!(idx.offset(t.as_bytes(), 1, 0, Unit::Utf16), Some(2));
    }

    #[test]
    fn positions_round_trip_in_every_unit() {
        let t = "x\r\rlet s = \"héllo 😀\"; foo\r\nend";
        let idx = LineIndex::new(t.as_bytes());
        let at = t.find("foo").unwrap();
        for (unit, col) in [(Unit::Utf8, 23), (Unit::Utf16, 20), (Unit::Utf32, 19)] {
            assert_eq!(idx.position(t.as_bytes(), at, unit), Some((2, col)));
            assert_eq!(idx.offset(t.as_bytes(), 2, col, unit), Some(at));
        }
        // Every character boundary maps to a position and back.
        for (o, _) in t.char_indices() {
            if terminator_at(t.as_bytes(), o) > 0 || o > 0 && t.as_bytes()[o - 1] == b'\r' {
                continue;
            }
            let (l, c) = idx.position(t.as_bytes(), o, Unit::Utf16).unwrap();
            assert_eq!(
                idx.offset(t.as_bytes(), l as usize, c, Unit::Utf16),
                Some(o)
            );
        }
    }

    #[test]
    fn invalid_positions() {
        let t = "ab\rcé\n";
        let idx = LineIndex::new(t.as_bytes());
        // A line past the last is no position; a column past a line's end is its end.
        assert_eq!(idx.offset(t.as_bytes(), 3, 0, Unit::Utf16), None);
        assert_eq!(idx.offset(t.as_bytes(), 0, 99, Unit::Utf16), Some(2));
        assert_eq!(idx.offset(t.as_bytes(), 2, 5, Unit::Utf16), Some(t.len()));
        // An offset past the end, or inside a character, has no position.
        assert_eq!(idx.position(t.as_bytes(), t.len() + 1, Unit::Utf16), None);
        let inside = t.find('é').unwrap() + 1;
        assert_eq!(idx.position(t.as_bytes(), inside, Unit::Utf16), None);
        // A column inside a surrogate pair is the end of the character.
        let e = "a😀b";
        let ei = LineIndex::new(e.as_bytes());
        assert_eq!(ei.offset(e.as_bytes(), 0, 2, Unit::Utf16), Some(5));
        assert_eq!(ei.offset(e.as_bytes(), 0, 3, Unit::Utf16), Some(5));
        // Bytes that are not UTF-8: lines still end where they end; a column is counted on the
        // valid part only.
        let b: &[u8] = b"ok\r\xff\xfex\nz";
        let bi = LineIndex::new(b);
        assert_eq!(bi.len(), 3);
        assert_eq!(bi.span(1), Some(3..6));
        assert_eq!(bi.offset(b, 1, 0, Unit::Utf16), Some(3));
        assert_eq!(bi.offset(b, 1, 1, Unit::Utf16), None);
        assert_eq!(bi.offset(b, 2, 1, Unit::Utf16), Some(8));
        assert_eq!(bi.position(b, 7, Unit::Utf16), Some((2, 0)));
        assert_eq!(bi.position(b, 3, Unit::Utf16), Some((1, 0)));
        assert_eq!(bi.position(b, 4, Unit::Utf16), None);
    }

    #[test]
    fn streamed_lines_are_the_same_lines() {
        for (text, want) in CASES {
            // A reader that hands out one byte at a time splits every `\r\n` across two reads.
            for cap in [1, 3, 64] {
                let mut r = std::io::BufReader::with_capacity(cap, text.as_bytes());
                let mut got = Vec::new();
                let mut consumed = 0;
                loop {
                    let mut line = Vec::new();
                    let (n, _) = read_line(&mut r, &mut line, usize::MAX).unwrap();
                    if n == 0 {
                        break;
                    }
                    consumed += n;
                    got.push(String::from_utf8(line).unwrap());
                }
                assert_eq!(&got, want, "{text:?} cap {cap}");
                assert_eq!(consumed, text.len(), "{text:?} cap {cap}");
                let mut r = std::io::BufReader::with_capacity(cap, text.as_bytes());
                let mut skipped = 0;
                while skip_line(&mut r).unwrap().0 > 0 {
                    skipped += 1;
                }
                assert_eq!(skipped, want.len(), "{text:?} cap {cap}");
            }
        }
    }

    #[test]
    fn a_streamed_line_stops_at_max() {
        let mut r = std::io::BufReader::with_capacity(2, "abcdef\r\ngh".as_bytes());
        let mut line = Vec::new();
        assert_eq!(read_line(&mut r, &mut line, 4).unwrap(), (4, false));
        assert_eq!(line, b"abcd");
        assert_eq!(skip_line(&mut r).unwrap(), (4, true));
        line.clear();
        assert_eq!(read_line(&mut r, &mut line, 4).unwrap(), (2, false));
        assert_eq!(line, b"gh");
        assert_eq!(read_line(&mut r, &mut line, 4).unwrap(), (0, false));
    }
}
