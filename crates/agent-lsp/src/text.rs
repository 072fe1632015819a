//! Text positions, position encodings and `file://` URIs.

use std::path::{Path, PathBuf};

/// The position encoding negotiated with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// From the server's `capabilities.positionEncoding` (absent: UTF-16, per the spec).
    pub fn from_lsp(s: Option<&str>) -> Self {
        match s {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// The column (in `enc` units) of byte offset `byte` in `line`.
pub fn units_of_byte(line: &str, byte: usize, enc: Encoding) -> u32 {
    let mut n = 0usize;
    for (i, c) in line.char_indices() {
        if i >= byte {
            break;
        }
        n += enc.units(c);
    }
    n as u32
}

/// The byte offset in `line` of column `units` (in `enc` units), clamped to the line.
pub fn byte_of_units(line: &str, units: u32, enc: Encoding) -> usize {
    let mut n = 0usize;
    for (i, c) in line.char_indices() {
        if n >= units as usize {
            return i;
        }
        n += enc.units(c);
    }
    line.len()
}

/// The lines of a text (without their `\n` / `\r\n`).
pub fn lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// The 1-based character column of an LSP position for display.
pub fn display_col(line: &str, character: u32, enc: Encoding) -> usize {
    let b = byte_of_units(line, character, enc);
    line[..b].chars().count() + 1
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
}

/// `file://` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if is_unreserved(b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The path of a `file://` URI (None for other schemes).
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x`
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        let line = "let s = \"héllo 😀\"; foo";
        let b = line.find("foo").unwrap();
        let u8c = units_of_byte(line, b, Encoding::Utf8);
        let u16c = units_of_byte(line, b, Encoding::Utf16);
        let u32c = units_of_byte(line, b, Encoding::Utf32);
        assert_eq!(u8c as usize, b);
        assert_eq!(u16c, 20);
        assert_eq!(u32c, 19);
        for (c, e) in [
            (u8c, Encoding::Utf8),
            (u16c, Encoding::Utf16),
            (u32c, Encoding::Utf32),
        ] {
            assert_eq!(byte_of_units(line, c, e), b);
        }
        assert_eq!(display_col(line, u16c, Encoding::Utf16), 20);
    }

    #[test]
    fn uris() {
        let p = Path::new("/tmp/a b/é.py");
        let u = path_to_uri(p);
        assert_eq!(u, "file:///tmp/a%20b/%C3%A9.py");
        assert_eq!(uri_to_path(&u).unwrap(), p);
        assert_eq!(uri_to_path("file:///x%2").unwrap(), Path::new("/x%2"));
    }
}
