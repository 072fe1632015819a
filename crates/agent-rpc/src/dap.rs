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

    fn cancel(&self, seq: i64, id: i64) -> Option<Value> {
        self.cancel.load(Ordering::Relaxed).then(|| {
            json!({"seq": seq, "type": "request", "command": "cancel",
                   "arguments": {"requestId": id}})
        })
    }
}
