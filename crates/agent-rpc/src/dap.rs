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
    /// (and `body.error.format`, where adapters put the detail, with its `{name}` placeholders
    /// replaced by `body.error.variables`, as debugpy and js-debug send them).
    fn outcome(&self, mut response: Value) -> Result<Value, ReplyError> {
        if response.get("success").and_then(Value::as_bool) == Some(true) {
            return Ok(response
                .get_mut("body")
                .map(Value::take)
                .unwrap_or(Value::Null));
        }
        let message = response.get("message").and_then(Value::as_str);
        let detail = error_text(&response);
        let detail = detail.as_deref();
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

/// A refusal's `body.error`: its `format` with each `{name}` replaced by the string value of
/// `variables.name` (a placeholder without a variable, or with a value of another type, stays as
/// written).
fn error_text(response: &Value) -> Option<String> {
    let error = response.pointer("/body/error")?;
    let mut text = error.get("format")?.as_str()?.to_string();
    if let Some(vars) = error.get("variables").and_then(Value::as_object) {
        for (name, value) in vars {
            if let Some(value) = value.as_str() {
                text = text.replace(&format!("{{{name}}}"), value);
            }
        }
    }
    Some(text)
}
