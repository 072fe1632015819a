//! The kernel's wire protocol as types: the frames a driver sends, the frames the host sends, and
//! the typed error for a frame that does not fit.
//!
//! Both ends are this crate's (the drivers in `src/driver/`), so nothing here is lenient: a frame
//! that is JSON but not one of these shapes is a [`FrameError`] that names its kind and what was
//! wrong, never a default (a `bridge` frame without an id does not become id 0). Every frame is a
//! JSON object tagged by its `"t"` field, which the drivers write first: the frame splitter sheds
//! `stream` and `display` frames by that prefix, unparsed, when the host is behind.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A MIME bundle: MIME type → data. The two types the host reads are strings (a value's text,
/// a base64 PNG); the rest are whatever JSON a `_repr_*_` returned, passed on as they are.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(crate) struct Bundle {
    /// The value as text.
    #[serde(
        rename = "text/plain",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) text: Option<String>,
    /// A PNG image, base64.
    #[serde(rename = "image/png", default, skip_serializing_if = "Option::is_none")]
    pub(crate) png: Option<String>,
    /// Every other MIME type.
    #[serde(flatten)]
    pub(crate) other: BTreeMap<String, serde_json::Value>,
}

/// A frame the driver sends.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum DriverFrame {
    /// The driver has moved the wire off the real descriptors and waits for cells. (It also sends
    /// its `pid`, `language` and `executable`, which the host does not need.)
    Ready { version: String },
    /// Text the cell printed.
    Stream { name: StreamName, text: String },
    /// A `display()` output.
    Display { data: Bundle },
    /// A cell's `tool(name, args)` call; the host answers with [`HostFrame::BridgeResult`].
    Bridge {
        id: u64,
        name: String,
        args: serde_json::Value,
    },
    /// The cell `id` finished.
    Done(Done),
}

/// Which of the cell's streams a `stream` frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, strum::IntoStaticStr)]
#[cfg_attr(test, derive(Serialize))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "snake_case")]
pub(crate) enum StreamName {
    Stdout,
    Stderr,
}

impl StreamName {
    pub(crate) fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The end of a cell.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(crate) struct Done {
    pub(crate) id: u64,
    pub(crate) status: CellStatus,
    /// The last expression's value (null when there is none).
    pub(crate) result: Option<Bundle>,
    /// The exception that ended the cell (null when it ran through).
    pub(crate) error: Option<CellError>,
    /// `display()` outputs the driver did not send (over its per-cell count).
    pub(crate) displays_dropped: u64,
    /// The top-level names the cell bound or rebound (at most the driver's cap), and how many.
    pub(crate) defined: Vec<String>,
    pub(crate) defined_total: u64,
}

/// How a cell ended, as the driver saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
#[serde(rename_all = "lowercase")]
pub(crate) enum CellStatus {
    Ok,
    Error,
    Interrupted,
}

/// The exception that ended a cell, already cut by the driver.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(crate) struct CellError {
    pub(crate) ename: String,
    pub(crate) evalue: String,
    pub(crate) traceback: String,
}

/// A frame the host sends (one JSON line on the driver's wire; no prefix).
#[derive(Debug, Serialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum HostFrame<'a> {
    /// The first line: the nonce every driver frame is prefixed with.
    Hello { nonce: &'a str },
    /// Run a cell; `cap` bounds its output and any one value, in bytes.
    Exec { id: u64, code: &'a str, cap: usize },
    /// The answer to the `bridge` call `id`.
    BridgeResult {
        id: u64,
        is_error: bool,
        text: &'a str,
        structured: Option<&'a serde_json::Value>,
        images: usize,
    },
}

impl HostFrame<'_> {
    /// The frame as one line.
    pub(crate) fn to_line(&self) -> String {
        // Serialising these types cannot fail: string keys, no maps with non-string keys, no
        // floats that are not finite (a JSON value holds no NaN).
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// A frame from the driver that is JSON but not one of the [`DriverFrame`] shapes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum FrameError {
    /// A JSON value with no string `"t"` field.
    #[error(
        "a message from the kernel driver has no \"t\" field naming its kind, so it was ignored: {body}"
    )]
    Untagged { body: String },
    /// A frame of a kind the host does not know, or of a known kind with a missing or mistyped
    /// field.
    #[error(
        "a `{kind}` message from the kernel driver is malformed ({source}), so it was ignored: {body}"
    )]
    Malformed {
        kind: String,
        source: serde_json::Error,
        body: String,
    },
}

/// How much of a bad frame an error quotes.
const QUOTED: usize = 300;

/// What one frame body is.
pub(crate) enum Decoded {
    Frame(DriverFrame),
    /// Not JSON at all: shown as output, like any stray bytes.
    NotJson,
    Bad(FrameError),
}

/// Decode one frame body (the bytes between the prefix and the newline).
pub(crate) fn decode(body: &[u8]) -> Decoded {
    let err = match serde_json::from_slice::<DriverFrame>(body) {
        Ok(f) => return Decoded::Frame(f),
        Err(e) => e,
    };
    if !err.is_data() {
        return Decoded::NotJson;
    }
    // The frame as quoted in the error: its first QUOTED bytes (the wire layer decodes only;
    // rendering is the collector's).
    let quoted = {
        let text = String::from_utf8_lossy(body);
        if text.len() <= QUOTED {
            text.into_owned()
        } else {
            let end = text.floor_char_boundary(QUOTED);
            format!("{} […]", &text[..end])
        }
    };
    /// The `"t"` field of a frame that fits no shape: its kind when it is a string.
    #[derive(Deserialize)]
    struct Tag {
        t: Option<Kind>,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Kind {
        Named(String),
        Other(serde::de::IgnoredAny),
    }
    let kind = match serde_json::from_slice::<Tag>(body) {
        Ok(Tag {
            t: Some(Kind::Named(kind)),
        }) => Some(kind),
        _ => None,
    };
    Decoded::Bad(match kind {
        None => FrameError::Untagged { body: quoted },
        Some(kind) => FrameError::Malformed {
            kind,
            source: err,
            body: quoted,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `body` decodes to, as the frame re-encoded or the error's message.
    fn check(body: &str) -> String {
        match decode(body.as_bytes()) {
            Decoded::Frame(f) => format!("frame {}", serde_json::to_string(&f).unwrap()),
            Decoded::NotJson => "not json".into(),
            Decoded::Bad(e) => format!("error {e}"),
        }
    }

    #[test]
    fn every_frame_kind_decodes() {
        let frames = [
            r#"{"t":"ready","version":"3.11.7"}"#,
            r#"{"t":"stream","name":"stderr","text":"x"}"#,
            r#"{"t":"display","data":{"text/plain":"1"}}"#,
            r#"{"t":"bridge","id":7,"name":"read","args":{"path":"a"}}"#,
            r#"{"t":"done","id":1,"status":"interrupted","result":null,"error":{"ename":"KeyboardInterrupt","evalue":"","traceback":"tb"},"displays_dropped":0,"defined":["x"],"defined_total":1}"#,
        ];
        for f in frames {
            assert_eq!(check(f), format!("frame {f}"));
        }
        // the fields the host does not use are allowed
        assert_eq!(
            check(r#"{"t":"ready","pid":1,"language":"python","version":"3","executable":"/p"}"#),
            r#"frame {"t":"ready","version":"3"}"#
        );
    }

    #[test]
    fn a_malformed_frame_is_a_typed_error_naming_what_is_wrong() {
        // (body, what the error says)
        let cases = [
            (
                r#"{"t":"bridge","name":"read","args":{}}"#,
                "a `bridge` message from the kernel driver is malformed (missing field `id`",
            ),
            (
                r#"{"t":"bridge","id":-1,"name":"read","args":{}}"#,
                "a `bridge` message from the kernel driver is malformed (invalid value: integer `-1`, expected u64",
            ),
            (
                r#"{"t":"stream","name":"stdweird","text":"x"}"#,
                "a `stream` message from the kernel driver is malformed (unknown variant `stdweird`, expected `stdout` or `stderr`",
            ),
            (
                r#"{"t":"done","id":1,"status":"ok"}"#,
                "a `done` message from the kernel driver is malformed (missing field `displays_dropped`",
            ),
            (
                r#"{"t":"ready"}"#,
                "a `ready` message from the kernel driver is malformed (missing field `version`",
            ),
            (
                r#"{"t":"nope","id":1}"#,
                "a `nope` message from the kernel driver is malformed (unknown variant `nope`",
            ),
            (
                r#"{"a":1}"#,
                "a message from the kernel driver has no \"t\" field naming its kind, so it was ignored: {\"a\":1}",
            ),
            (r#"{"t":3}"#, "has no \"t\" field"),
            ("[1,2]", "has no \"t\" field"),
        ];
        for (body, want) in cases {
            let got = check(body);
            assert!(
                got.starts_with("error ") && got.contains(want),
                "{body}: {got}"
            );
        }
        let Decoded::Bad(FrameError::Malformed { kind, .. }) =
            decode(br#"{"t":"bridge","name":"read","args":{}}"#)
        else {
            panic!("a bridge frame without id must be an error");
        };
        assert_eq!(kind, "bridge");
        assert_eq!(check("not json"), "not json");
        assert_eq!(check(r#"{"t":"stream""#), "not json");
    }

    #[test]
    fn host_frames_are_tagged_lines() {
        let v = serde_json::json!({"path": "a"});
        let cases = [
            (
                HostFrame::Hello { nonce: "n" },
                r#"{"t":"hello","nonce":"n"}"#,
            ),
            (
                HostFrame::Exec {
                    id: 2,
                    code: "1",
                    cap: 64,
                },
                r#"{"t":"exec","id":2,"code":"1","cap":64}"#,
            ),
            (
                HostFrame::BridgeResult {
                    id: 3,
                    is_error: false,
                    text: "ok",
                    structured: Some(&v),
                    images: 0,
                },
                r#"{"t":"bridge_result","id":3,"is_error":false,"text":"ok","structured":{"path":"a"},"images":0}"#,
            ),
        ];
        for (frame, want) in cases {
            assert_eq!(frame.to_line(), format!("{want}\n"));
        }
    }
}
