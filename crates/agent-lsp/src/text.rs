//! Text positions, position encodings and `file://` URIs.

use agent_tier::lines::Unit;
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
}

impl From<Encoding> for Unit {
    fn from(enc: Encoding) -> Unit {
        match enc {
            Encoding::Utf8 => Unit::Utf8,
            Encoding::Utf16 => Unit::Utf16,
            Encoding::Utf32 => Unit::Utf32,
        }
    }
}

/// The column (in `enc` units) of byte offset `byte` in `line`.
pub fn units_of_byte(line: &str, byte: usize, enc: Encoding) -> u32 {
    agent_tier::lines::units_of_byte(line, byte, enc.into())
}

/// The byte offset in `line` of column `units` (in `enc` units), clamped to the line.
pub fn byte_of_units(line: &str, units: u32, enc: Encoding) -> usize {
    agent_tier::lines::byte_of_units(line, units, enc.into())
}

/// The lines of a text without their endings, as the protocol counts them: a line ends at
/// `\n`, `\r\n` or a lone `\r` ([`agent_tier::lines`]). A final ending starts no line; an
/// empty text has one empty line.
pub fn lines(text: &str) -> Vec<&str> {
    let mut all: Vec<&str> = agent_tier::lines::lines(text).collect();
    if all.is_empty() {
        all.push("");
    }
    all
}

/// The 1-based character column of an LSP position for display.
pub fn display_col(line: &str, character: u32, enc: Encoding) -> usize {
    let b = byte_of_units(line, character, enc);
    line[..b].chars().count() + 1
}

/// `file://` URI of an absolute path (the `url` crate's encoding: every byte outside the URL
/// path-segment set, `%`, `#`, `?`, spaces and non-ASCII included, is percent-encoded). A
/// relative path, which has no URI, is taken from `/`.
pub fn path_to_uri(path: &Path) -> String {
    let abs;
    let path = if path.is_absolute() {
        path
    } else {
        abs = Path::new("/").join(path);
        &abs
    };
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file://` URI (None for other schemes, a host other than `localhost`, or text
/// that is not a URI).
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let url = url::Url::parse(uri).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    url.to_file_path().ok()
}

/// The most of one file this family reads: a source file beyond it is not one to give a
/// language server (and reading it whole would let a planted file exhaust memory).
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// Read a workspace file as text, as every path of this family does: a regular file only (a
/// FIFO, socket or device is refused at once, never waited on; a symlink as the last component
/// is not followed), at most [`MAX_FILE_BYTES`], valid UTF-8, below the root `ws` with no symlink
/// on the way (a file outside the root is never read).
pub fn read_text(ws: &Path, path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    let read = agent_tier::workspace::read_regular(ws, path, MAX_FILE_BYTES + 1)?;
    if read.size > MAX_FILE_BYTES || read.bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!(
                "it is {} MiB; files over {} MiB are not given to a language server",
                read.size.max(read.bytes.len() as u64) >> 20,
                MAX_FILE_BYTES >> 20
            ),
        ));
    }
    String::from_utf8(read.bytes)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "it is not valid UTF-8 text"))
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
    fn lines_end_at_lf_crlf_and_lone_cr() {
        assert_eq!(lines("a\rb\r\nc\n\rd\r"), ["a", "b", "c", "", "d"]);
        assert_eq!(lines(""), [""]);
        assert_eq!(lines("a\n"), ["a"]);
    }

    #[test]
    fn uris() {
        let p = Path::new("/tmp/a b/é.py");
        let u = path_to_uri(p);
        assert_eq!(u, "file:///tmp/a%20b/%C3%A9.py");
        assert_eq!(uri_to_path(&u).unwrap(), p);
        assert_eq!(uri_to_path("file:///x%2").unwrap(), Path::new("/x%2"));
        assert_eq!(
            uri_to_path("file://localhost/tmp/x.py").unwrap(),
            Path::new("/tmp/x.py")
        );
    }

    #[test]
    fn uris_round_trip_every_awkward_path() {
        use std::os::unix::ffi::OsStrExt;
        for p in [
            "/tmp/a b/c.py",
            "/tmp/100%/x.py",
            "/tmp/%41/x.py",
            "/tmp/a#b/c?d.py",
            "/tmp/é/日本/😀.rs",
            "/tmp/back\\slash/x.py",
            "/tmp/semi;colon:at@+plus/x.py",
        ] {
            let u = path_to_uri(Path::new(p));
            assert!(u.starts_with("file:///"), "{u}");
            assert!(!u[7..].contains([' ', '#', '?']), "{u}");
            assert!(u.is_ascii(), "{u}");
            assert_eq!(uri_to_path(&u).unwrap(), Path::new(p), "{u}");
        }
        assert_eq!(
            path_to_uri(Path::new("/tmp/100%/a#b")),
            "file:///tmp/100%25/a%23b"
        );
        // Bytes that are not UTF-8 survive too.
        let raw = std::ffi::OsStr::from_bytes(b"/tmp/\xff\xfe.py");
        let u = path_to_uri(Path::new(raw));
        assert_eq!(u, "file:///tmp/%FF%FE.py");
        assert_eq!(uri_to_path(&u).unwrap().as_os_str(), raw);
    }

    #[test]
    fn only_local_file_uris_are_paths() {
        for u in [
            "https://example.invalid/x.py",
            "untitled:Untitled-1",
            "jdt://contents/java.base/java/lang/String.class",
            "file://server/share/x.py",
            "not a uri",
        ] {
            assert_eq!(uri_to_path(u), None, "{u}");
        }
    }
}
