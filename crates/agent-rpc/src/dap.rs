//! The Debug Adapter Protocol's base protocol: every message numbered by `seq`, responses matched
//! by `request_seq`, events as notifications; the `cancel` request only when switched on (an
//! adapter advertises `supportsCancelRequest`).

use crate::connection::{Incoming, Protocol, ReplyError};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};

/// The DAP dialect.
#[derive(Debug, Default)]
pub struct Dap {
    cancel: AtomicBool,
}

impl Dap {
    /// Whether an abandoned request is followed by a `cancel` request (off by default).
    pub fn set_cancel(&self, on: bool) {
        self.cancel.store(on, Ordering::Relaxed);
    }
}

impl Protocol for Dap {
    fn request(&self, id: i64, method: &str, params: Value) -> Value {
        json!({"seq": id, "type": "request", "command": method, "arguments": params})
    }

    /// A client sends no events in DAP; this exists for symmetry and is sent as an event.
    fn notification(&self, seq: i64, method: &str, params: Value) -> Value {
        json!({"seq": seq, "type": "event", "event": method, "body": params})
    }

    fn reply(&self, seq: i64, request: &Value, outcome: Result<Value, ReplyError>) -> Value {
        let mut msg = json!({
            "seq": seq,
            "type": "response",
            "request_seq": request.get("seq").cloned().unwrap_or(Value::Null),
            "command": request.get("command").cloned().unwrap_or(Value::Null),
        });
        match outcome {
            Ok(body) => {
                msg["success"] = json!(true);
                if !body.is_null() {
                    msg["body"] = body;
                }
            }
            Err(e) => {
                msg["success"] = json!(false);
                msg["message"] = json!(e.message);
            }
        }
        msg
    }

    fn classify(&self, msg: &Value) -> Incoming {
        match msg.get("type").and_then(Value::as_str) {
            Some("response") => msg
                .get("request_seq")
                .and_then(Value::as_i64)
                .map_or(Incoming::Other, Incoming::Response),
            Some("event") => Incoming::Notification,
            Some("request") => Incoming::Request,
            _ => Incoming::Other,
        }
    }

    /// A response's `body` (`null` when absent) when `success` is true; otherwise its `message`
    /// (and `body.error.format`, where adapters put the detail).
    fn outcome(&self, mut response: Value) -> Result<Value, ReplyError> {
        if response.get("success").and_then(Value::as_bool) == Some(true) {
            return Ok(response
                .get_mut("body")
                .map(Value::take)
                .unwrap_or(Value::Null));
        }
        let message = response.get("message").and_then(Value::as_str);
        let detail = response
            .pointer("/body/error/format")
            .and_then(Value::as_str);
        let message = match (message, detail) {
            (Some(m), Some(d)) if m != d => format!("{m}: {d}"),
            (_, Some(d)) => d.to_string(),
            (Some(m), None) => m.to_string(),
            (None, None) => match response.get("success") {
                Some(s) if s.is_boolean() => "refused without a message".to_string(),
                _ => "a response without `success`".to_string(),
            },
        };
        Err(ReplyError { code: 0, message })
    }

    fn cancel(&self, seq: i64, id: i64) -> Option<Value> {
        self.cancel.load(Ordering::Relaxed).then(|| {
            json!({"seq": seq, "type": "request", "command": "cancel",
                   "arguments": {"requestId": id}})
        })
    }
}
