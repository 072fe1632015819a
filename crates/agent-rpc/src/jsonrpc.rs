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

    /// A response's `result` (`null` when absent), or its `error`. An error object without a
    /// numeric `code` and a string `message` is still a refusal; the message says what it lacked.
    fn outcome(&self, mut response: Value) -> Result<Value, ReplyError> {
        /// JSON-RPC's error object; `data` is not read.
        #[derive(serde::Deserialize)]
        struct ErrorObject {
            code: i64,
            message: String,
        }
        match response.get_mut("error").map(Value::take) {
            Some(e) if !e.is_null() => {
                Err(match serde_json::from_value::<ErrorObject>(e.clone()) {
                    Ok(o) => ReplyError {
                        code: o.code,
                        message: o.message,
                    },
                    Err(why) => ReplyError {
                        code: 0,
                        message: format!("a malformed error ({why}): {e}"),
                    },
                })
            }
            _ => Ok(response
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
        }
    }
}
