//! Typed protocol edges: a request or notification declared once, as its method with the types of
//! what it carries, and the error that says how a peer's message failed to have that shape.
//!
//! A family declares each request it sends as a type implementing [`Request`] (the method, the
//! params it sends, the result it expects) and each notification it reads as a [`Notification`].
//! The result types are the family's own lenient serde types: they accept what real servers and
//! adapters send (extra fields, `null` where the spec says a list), and nothing else. A reply that
//! does not fit is a [`Malformed`] naming the method and what was wrong — never a silent default.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One request a family sends: its method and the types of its params and its result.
pub trait Request {
    /// The method (JSON-RPC) or command (DAP).
    const METHOD: &'static str;
    /// What the request carries.
    type Params: Serialize;
    /// What a successful reply carries (the JSON-RPC `result`, the DAP `body`).
    type Result: DeserializeOwned;
}

/// One notification (LSP) or event (DAP) a family reads: its method and the type of its params.
pub trait Notification {
    /// The method (JSON-RPC) or event name (DAP).
    const METHOD: &'static str;
    /// What it carries (the JSON-RPC `params`, the DAP event `body`).
    type Params: DeserializeOwned;
}

/// A message from the peer that does not have the shape its method declares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the peer's {method} {what} is malformed: {detail}")]
pub struct Malformed {
    /// The method whose message it was.
    pub method: &'static str,
    /// Which message: `reply`, `notification` or `params`.
    pub what: &'static str,
    /// What was wrong, as serde says it (the field and the type it expected).
    pub detail: String,
}

/// The params of `R` as the wire carries them.
pub fn params<R: Request>(params: &R::Params) -> Result<Value, Malformed> {
    serde_json::to_value(params).map_err(|e| Malformed {
        method: R::METHOD,
        what: "params",
        detail: e.to_string(),
    })
}

/// A successful reply's payload (the dialect's outcome, see [`crate::Protocol::outcome`]) read as
/// `R`'s result.
pub fn reply<R: Request>(payload: Value) -> Result<R::Result, Malformed> {
    serde_json::from_value(payload).map_err(|e| Malformed {
        method: R::METHOD,
        what: "reply",
        detail: e.to_string(),
    })
}

/// A notification's or event's payload read as `N`'s params.
pub fn notification<N: Notification>(payload: Value) -> Result<N::Params, Malformed> {
    serde_json::from_value(payload).map_err(|e| Malformed {
        method: N::METHOD,
        what: "notification",
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Position {
        line: u32,
        character: u32,
    }

    struct Probe;
    impl Request for Probe {
        const METHOD: &'static str = "probe/position";
        type Params = Value;
        type Result = Position;
    }

    #[test]
    fn a_reply_of_the_declared_shape_is_read() {
        let p = reply::<Probe>(json!({"line": 3, "character": 4, "extra": true})).unwrap();
        assert_eq!(
            p,
            Position {
                line: 3,
                character: 4
            }
        );
    }

    #[test]
    fn a_malformed_reply_names_its_method_and_the_field() {
        let e = reply::<Probe>(json!({"line": "3", "character": 4})).unwrap_err();
        assert_eq!(e.method, "probe/position");
        let text = e.to_string();
        assert!(text.contains("probe/position reply is malformed"), "{text}");
        assert!(text.contains("invalid type: string"), "{text}");
        let missing = reply::<Probe>(json!({"line": 3})).unwrap_err().to_string();
        assert!(missing.contains("missing field `character`"), "{missing}");
    }
}
