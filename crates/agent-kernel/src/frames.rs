//! Splitting the kernel's stdout into frames and stray bytes, in linear time and bounded memory.
//!
//! Every frame is `\x1e<nonce>:` + one JSON object + `\n`. Bytes outside a frame are shown as
//! output. A frame longer than [`MAX_FRAME`] is skipped (with a note) instead of buffered whole;
//! the drivers never send one that long (they cut values, tracebacks and displays first).

use crate::protocol::{self, Decoded, DriverFrame, FrameError};

/// The longest frame the host buffers.
pub(crate) const MAX_FRAME: usize = 16 * 1024 * 1024;

/// The id of a bridge call frame, from its first bytes (`{"t":"bridge","id":N`).
fn bridge_id(body: &[u8]) -> Option<u64> {
    let rest = body.strip_prefix(b"{\"t\":\"bridge\",\"id\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// What the reader tasks hand to the cell loop.
#[derive(Debug)]
pub(crate) enum Event {
    /// A frame from the driver.
    Frame(DriverFrame),
    /// A frame that is JSON but not a frame of the protocol (shown, never acted on).
    Malformed(FrameError),
    /// A `tool()` bridge call too long to read: its caller is answered with an error.
    OversizedBridge { id: u64, bytes: usize },
    /// Bytes on stdout that are not a frame (a cell that wrote to the real descriptor).
    Raw(String),
    /// Bytes on the process's stderr (fatal errors, warnings, anything the driver did not catch).
    Stderr(String),
    /// Stdout closed: the kernel is gone.
    Closed,
}

/// Splits the kernel's stdout into frames and stray bytes.
pub(crate) struct FrameParser {
    marker: Vec<u8>,
    buf: Vec<u8>,
    /// When `buf` starts with an unfinished frame: how far the search for its newline got, so
    /// that each byte is looked at once however the frame is split into reads.
    scanned: usize,
    /// Skipping the rest of an over-long frame: how many bytes of it so far.
    skipping: Option<usize>,
    /// The bridge call id an over-long frame being skipped names at its start, if it is one
    /// (the drivers write `{"t":"bridge","id":N,…`): its caller is answered with an error
    /// instead of waiting for a reply that would never come.
    skipping_bridge: Option<u64>,
    max_frame: usize,
}

impl FrameParser {
    pub(crate) fn new(nonce: &str) -> Self {
        FrameParser {
            marker: format!("\x1e{nonce}:").into_bytes(),
            buf: Vec::new(),
            scanned: 0,
            skipping: None,
            skipping_bridge: None,
            max_frame: MAX_FRAME,
        }
    }

    /// Parse `data`, appending `(event, payload bytes)` to `out`. With `shed`, `stream` and
    /// `display` frames are not even parsed; the return value is how many bytes were shed so.
    pub(crate) fn push(&mut self, data: &[u8], out: &mut Vec<(Event, usize)>, shed: bool) -> usize {
        self.buf.extend_from_slice(data);
        let mut shed_bytes = 0;
        let mut pos = 0;
        loop {
            let rest = &self.buf[pos..];
            if rest.is_empty() {
                break;
            }
            if let Some(skipped) = self.skipping {
                match rest.iter().position(|b| *b == b'\n') {
                    Some(nl) => {
                        let total = skipped + nl + 1;
                        self.skipping = None;
                        pos += nl + 1;
                        let note = format!(
                            "\n[a message of {total} bytes from the kernel was dropped: messages are limited to {} bytes]\n",
                            self.max_frame
                        );
                        let n = note.len();
                        out.push((Event::Raw(note), n));
                        if let Some(id) = self.skipping_bridge.take() {
                            out.push((Event::OversizedBridge { id, bytes: total }, 0));
                        }
                    }
                    None => {
                        self.skipping = Some(skipped + rest.len());
                        pos = self.buf.len();
                    }
                }
                continue;
            }
            if rest.starts_with(&self.marker) {
                let start = self.marker.len();
                let from = self.scanned.max(start);
                match rest[from..].iter().position(|b| *b == b'\n') {
                    Some(off) => {
                        let nl = from + off;
                        let body = &rest[start..nl];
                        self.scanned = 0;
                        if shed
                            && (body.starts_with(b"{\"t\":\"stream\"")
                                || body.starts_with(b"{\"t\":\"display\""))
                        {
                            shed_bytes += body.len();
                        } else {
                            let event = match protocol::decode(body) {
                                Decoded::Frame(f) => Event::Frame(f),
                                Decoded::Bad(e) => Event::Malformed(e),
                                Decoded::NotJson => {
                                    Event::Raw(String::from_utf8_lossy(body).into_owned())
                                }
                            };
                            out.push((event, body.len()));
                        }
                        pos += nl + 1;
                    }
                    None => {
                        if rest.len() > self.max_frame {
                            self.skipping_bridge = bridge_id(&rest[start..]);
                            self.skipping = Some(rest.len());
                            self.scanned = 0;
                            pos = self.buf.len();
                        } else {
                            self.scanned = rest.len();
                            break;
                        }
                    }
                }
                continue;
            }
            match memchr::memmem::find(rest, &self.marker) {
                Some(i) => {
                    out.push((
                        Event::Raw(String::from_utf8_lossy(&rest[..i]).into_owned()),
                        i,
                    ));
                    pos += i;
                }
                None => {
                    // keep a tail that may be the start of a marker
                    let keep = (1..self.marker.len().min(rest.len() + 1))
                        .rev()
                        .find(|k| rest.ends_with(&self.marker[..*k]))
                        .unwrap_or(0);
                    let flush = rest.len() - keep;
                    if flush > 0 {
                        out.push((
                            Event::Raw(String::from_utf8_lossy(&rest[..flush]).into_owned()),
                            flush,
                        ));
                    }
                    pos += flush;
                    break;
                }
            }
        }
        self.buf.drain(..pos);
        shed_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(p: &mut FrameParser, chunks: &[&[u8]]) -> Vec<String> {
        let mut evs = Vec::new();
        for c in chunks {
            p.push(c, &mut evs, false);
        }
        evs.into_iter()
            .map(|(e, _)| match e {
                Event::Frame(f) => format!("frame {}", serde_json::to_string(&f).unwrap()),
                Event::Malformed(e) => format!("malformed {e}"),
                Event::Raw(s) => format!("raw {s:?}"),
                _ => "other".into(),
            })
            .collect()
    }

    fn parse(chunks: &[&[u8]]) -> Vec<String> {
        parse_with(&mut FrameParser::new("N"), chunks)
    }

    #[test]
    fn frames_survive_junk_and_split_reads() {
        let cases: &[(&[&[u8]], &[&str])] = &[
            (&[b"\x1eN:{\"t\":\"ready\",\"version\":\"1\"}\n"], &["frame {\"t\":\"ready\",\"version\":\"1\"}"]),
            (
                &[b"junk\x1eN:{\"t\":\"ready\",\"version\":\"1\"}\n"],
                &["raw \"junk\"", "frame {\"t\":\"ready\",\"version\":\"1\"}"],
            ),
            (
                &[b"\x1e", b"N:{\"t\":\"ready\"", b",\"version\":\"2\"}\nxx"],
                &["frame {\"t\":\"ready\",\"version\":\"2\"}", "raw \"xx\""],
            ),
            (
                &[b"\xff\x00\x1eX:{}\n"],
                &["raw \"\u{fffd}\\0\\u{1e}X:{}\\n\""],
            ),
            (&[b"\x1eN:not json\n"], &["raw \"not json\""]),
            (
                &[b"\x1eN:{\"t\":\"bridge\",\"name\":\"read\",\"args\":{}}\n"],
                &["malformed a `bridge` message from the kernel driver is malformed (missing field `id`), so it was ignored: {\"t\":\"bridge\",\"name\":\"read\",\"args\":{}}"],
            ),
            (
                &[b"\x1eN:{\"t\":\"ready\",\"version\":\"1\"}\n\x1eN:{\"t\":\"ready\",\"version\":\"2\"}\n\x1e", b"N:{\"t\":\"ready\",\"version\":\"3\"}\n"],
                &["frame {\"t\":\"ready\",\"version\":\"1\"}", "frame {\"t\":\"ready\",\"version\":\"2\"}", "frame {\"t\":\"ready\",\"version\":\"3\"}"],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn an_over_long_frame_is_skipped_with_a_note() {
        let mut p = FrameParser::new("N");
        p.max_frame = 100;
        let big = format!("\x1eN:{{\"t\":\"x\",\"s\":\"{}\"}}\n", "y".repeat(500));
        let (a, b) = big.as_bytes().split_at(250);
        let got = parse_with(
            &mut p,
            &[
                a,
                b,
                b"\x1eN:{\"t\":\"ready\",\"version\":\"1\"}\n".as_slice(),
                b"tail".as_slice(),
            ],
        );
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("was dropped"), "{got:?}");
        assert_eq!(got[1], "frame {\"t\":\"ready\",\"version\":\"1\"}");
        assert_eq!(got[2], "raw \"tail\"");
        assert!(p.buf.len() < 100);
    }

    #[test]
    fn an_over_long_bridge_call_names_its_id() {
        assert_eq!(
            bridge_id(b"{\"t\":\"bridge\",\"id\":42,\"name\":\"read\""),
            Some(42)
        );
        assert_eq!(bridge_id(b"{\"t\":\"stream\",\"id\":42"), None);
        assert_eq!(bridge_id(b"{\"t\":\"bridge\",\"id\":"), None);
    }

    #[test]
    fn shedding_skips_stream_and_display_frames_only() {
        let mut p = FrameParser::new("N");
        let mut evs = Vec::new();
        let shed = p.push(
            b"\x1eN:{\"t\":\"stream\",\"text\":\"abc\"}\n\x1eN:{\"t\":\"ready\",\"version\":\"1\"}\n",
            &mut evs,
            true,
        );
        assert_eq!(shed, "{\"t\":\"stream\",\"text\":\"abc\"}".len());
        assert_eq!(evs.len(), 1);
        assert!(matches!(&evs[0].0, Event::Frame(DriverFrame::Ready { .. })));
    }

    #[test]
    fn a_large_frame_in_small_reads_is_parsed_once() {
        // 4 MB in 4 KB reads: each read only looks at its own bytes
        let mut p = FrameParser::new("N");
        let frame = format!(
            "\x1eN:{{\"t\":\"stream\",\"name\":\"stdout\",\"text\":\"{}\"}}\n",
            "q".repeat(4 << 20)
        );
        let mut evs = Vec::new();
        for c in frame.as_bytes().chunks(4096) {
            p.push(c, &mut evs, false);
            assert!(p.scanned == 0 || p.scanned == p.buf.len());
        }
        assert_eq!(evs.len(), 1);
        assert!(
            matches!(&evs[0].0, Event::Frame(DriverFrame::Stream { text, .. }) if text.len() == 4 << 20)
        );
    }
}
