//! JSON-RPC 2.0 as LSP speaks it: numeric ids, `$/cancelRequest` for an abandoned request.

use crate::connection::{Incoming, Protocol, ReplyError};
use serde_json::{Value, json};

/// The JSON-RPC 2.0 dialect (LSP).
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonRpc;

impl Protocol for JsonRpc {
    fn request(&self, id: i64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn notification(&self, _seq: i64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    fn reply(&self, _seq: i64, request: &Value, outcome: Result<Value, ReplyError>) -> Value {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": e.code, "message": e.message}}),
        }
    }

    fn classify(&self, msg: &Value) -> Incoming {
        let id = msg.get("id").filter(|v| !v.is_null());
        match (msg.get("method").and_then(Value::as_str), id) {
            (Some(_), Some(_)) => Incoming::Request,
            (Some(_), None) => Incoming::Notification,
            (None, Some(id)) => id.as_i64().map_or(Incoming::Other, Incoming::Response),
            (None, None) => Incoming::Other,
        }
    }

    fn cancel(&self, _seq: i64, id: i64) -> Option<Value> {
        Some(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}))
    }

    /// A response's `result` (`null` when absent), or its `error`. An error without a numeric
    /// `code` or a string `message` is still a refusal; what it lacked is said in the message.
    fn outcome(&self, mut response: Value) -> Result<Value, ReplyError> {
        match response.get_mut("error").map(Value::take) {
            Some(e) if !e.is_null() => Err(ReplyError {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: match e.get("message").and_then(Value::as_str) {
                    Some(m) => m.to_string(),
                    None => format!("an error without a message: {e}"),
                },
            }),
            _ => Ok(response
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
        }
    }
}
