//! `Content-Length` framing: `Name: value\r\n` header lines (only `Content-Length` is used, others
//! such as `Content-Type` are tolerated), an empty line, then exactly that many bytes of JSON.
//!
//! Every limit is checked before memory is committed: a header line longer than
//! [`Limits::max_header_line`] or a frame announcing more than [`Limits::max_frame`] bytes is an
//! error, and a body is read as it arrives (a peer that announces a large frame and sends little
//! costs only what it sent).

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// The default cap on one frame's body: 64 MiB.
pub const DEFAULT_MAX_FRAME: usize = 64 << 20;

/// Bounds on what one frame may cost.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest body accepted, in bytes.
    pub max_frame: usize,
    /// The longest header line accepted, in bytes (terminator included).
    pub max_header_line: usize,
    /// The most header lines one frame may have.
    pub max_headers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: DEFAULT_MAX_FRAME,
            max_header_line: 4096,
            max_headers: 32,
        }
    }
}

/// Why a frame could not be read. After any of these the stream is no longer framed (or is gone):
/// the connection ends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Reading failed.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
    /// The stream ended inside a frame.
    #[error("the stream ended inside a frame ({0})")]
    Truncated(&'static str),
    /// A header line is longer than the limit.
    #[error("a header line is longer than {max} bytes")]
    HeaderTooLong {
        /// The limit, in bytes.
        max: usize,
    },
    /// More header lines than the limit.
    #[error("a frame has more than {max} header lines")]
    TooManyHeaders {
        /// The limit.
        max: usize,
    },
    /// A header line is not `Name: value`, or `Content-Length` is not a number.
    #[error("bad header {line:?}: {why}")]
    BadHeader {
        /// The line, decoded lossily.
        line: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The headers ended without a `Content-Length`.
    #[error("a frame's headers have no Content-Length")]
    MissingLength,
    /// The announced body is larger than the limit.
    #[error("a frame announces {len} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// The length it announces, in bytes.
        len: u64,
        /// The limit, in bytes.
        max: usize,
    },
    /// The body is not JSON.
    #[error("a frame's body of {len} bytes is not JSON: {source}")]
    NotJson {
        /// The body's length, in bytes.
        len: usize,
        /// Why it did not parse.
        source: serde_json::Error,
    },
}

/// Frame one message: headers and body in one buffer, so it is written whole.
pub fn encode(msg: &Value) -> Vec<u8> {
    // Serialising a `Value` cannot fail: its keys are strings and its numbers are finite.
    let body = msg.to_string();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body.as_bytes());
    frame
}

/// Reads frames from a byte stream.
pub struct FrameReader<R> {
    inner: BufReader<R>,
    limits: Limits,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Read frames from `reader`, refusing any over `limits`.
    pub fn new(reader: R, limits: Limits) -> Self {
        FrameReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            limits,
            line: Vec::new(),
        }
    }

    /// The next message; `Ok(None)` when the stream ends cleanly between frames.
    pub async fn read(&mut self) -> Result<Option<Value>, FrameError> {
        let mut length: Option<u64> = None;
        let mut headers = 0usize;
        loop {
            if !self.read_line().await? {
                return if headers == 0 {
                    Ok(None)
                } else {
                    Err(FrameError::Truncated("in the headers"))
                };
            }
            let line = trim_eol(&self.line);
            if line.is_empty() {
                if headers == 0 {
                    // Blank lines between frames are tolerated.
                    continue;
                }
                break;
            }
            headers += 1;
            if headers > self.limits.max_headers {
                return Err(FrameError::TooManyHeaders {
                    max: self.limits.max_headers,
                });
            }
            let bad = |why| FrameError::BadHeader {
                line: String::from_utf8_lossy(line).into_owned(),
                why,
            };
            let text = std::str::from_utf8(line).map_err(|_| bad("not UTF-8"))?;
            let (name, value) = text.split_once(':').ok_or_else(|| bad("no `:`"))?;
            let name = name.trim();
            if name.is_empty() || !name.bytes().all(is_token_char) {
                return Err(bad("not a header name"));
            }
            if name.eq_ignore_ascii_case("content-length") {
                let n: u64 = value
                    .trim()
                    .parse()
                    .map_err(|_| bad("Content-Length is not a number"))?;
                if length.is_some_and(|l| l != n) {
                    return Err(bad("a second, different Content-Length"));
                }
                length = Some(n);
            }
        }
        let len = length.ok_or(FrameError::MissingLength)?;
        let max = self.limits.max_frame;
        if len > max as u64 {
            return Err(FrameError::TooLarge { len, max });
        }
        // Within the cap, so it fits a usize; grown as bytes arrive, not reserved up front.
        let len = len as usize;
        let mut body = Vec::with_capacity(len.min(64 * 1024));
        (&mut self.inner)
            .take(len as u64)
            .read_to_end(&mut body)
            .await?;
        if body.len() < len {
            return Err(FrameError::Truncated("in the body"));
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|source| FrameError::NotJson { len, source })
    }

    /// One line (up to and including `\n`, or to the end of the stream) into `self.line`;
    /// `false` at the end of the stream with nothing read.
    async fn read_line(&mut self) -> Result<bool, FrameError> {
        self.line.clear();
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return if self.line.is_empty() {
                    Ok(false)
                } else {
                    Err(FrameError::Truncated("in a header line"))
                };
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if self.line.len() + take > self.limits.max_header_line {
                return Err(FrameError::HeaderTooLong {
                    max: self.limits.max_header_line,
                });
            }
            self.line.extend_from_slice(&buf[..take]);
            self.inner.consume(take);
            if done {
                return Ok(true);
            }
        }
    }
}

/// RFC 9110 `tchar`: what a header name is made of.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
