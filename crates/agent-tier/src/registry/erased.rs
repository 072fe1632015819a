//! The registry's type-erased view of a tool: a call prepared from JSON arguments (validated
//! into the tool's own argument type, which then travels with the call, typed), its declared
//! effects and its run; plus the one-line schema summary argument errors quote.

use super::{BoxFuture, CallContext};
use crate::tool::{BoxError, Effects, Tool, ToolInfo, ToolOutput};
use crate::{CallError, Tier};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

pub(super) trait ErasedTool: Send + Sync {
    fn info(&self) -> ToolInfo;
    fn tier(&self) -> Tier;
    fn asks_a_person(&self) -> bool;
    /// The call these arguments make, or the argument error naming what would be valid.
    fn prepare(self: Arc<Self>, args: Value) -> Result<Box<dyn PreparedCall>, CallError>;
}

/// One call of one tool with its arguments already parsed into the tool's own type.
pub(super) trait PreparedCall: Send {
    /// What this very call does (never less than the tool's tier; running project code is exec).
    fn effects(&self) -> Effects;
    /// Run it.
    fn run(self: Box<Self>, cx: CallContext) -> BoxFuture<'static, Result<ToolOutput, BoxError>>;
}

struct Prepared<T: Tool> {
    tool: Arc<Erased<T>>,
    args: T::Args,
}

impl<T: Tool> PreparedCall for Prepared<T> {
    fn effects(&self) -> Effects {
        let tool = &self.tool.tool;
        let mut e = tool.effects(&self.args);
        e.tier = e.tier.max(tool.tier());
        if e.runs_project_code {
            e.tier = Tier::Exec;
        }
        e
    }

    fn run(self: Box<Self>, cx: CallContext) -> BoxFuture<'static, Result<ToolOutput, BoxError>> {
        let Prepared { tool, args } = *self;
        Box::pin(async move { tool.tool.call(args, cx).await })
    }
}

pub(super) struct Erased<T: Tool> {
    pub(super) tool: T,
    /// The tool's input schema ([`crate::schema::input_schema`]).
    pub(super) schema: Map<String, Value>,
}

impl<T: Tool> ErasedTool for Erased<T> {
    fn info(&self) -> ToolInfo {
        ToolInfo {
            name: self.tool.name().to_string(),
            tier: self.tool.tier(),
            description: self.tool.description(),
            parallel_safe: self.tool.parallel_safe(),
            input_schema: self.schema.clone(),
            hints: self.tool.hints(),
            asks_a_person: self.tool.asks_a_person(),
        }
    }

    fn tier(&self) -> Tier {
        self.tool.tier()
    }

    fn asks_a_person(&self) -> bool {
        self.tool.asks_a_person()
    }

    fn prepare(self: Arc<Self>, args: Value) -> Result<Box<dyn PreparedCall>, CallError> {
        let args = if args.is_null() {
            Value::Object(Default::default())
        } else {
            args
        };
        match serde_path_to_error::deserialize::<_, T::Args>(args) {
            Ok(args) => Ok(Box::new(Prepared { tool: self, args })),
            Err(err) => {
                let path = err.path().to_string();
                let inner = err.into_inner().to_string();
                let detail = if path == "." || path.is_empty() {
                    inner
                } else {
                    format!("at `{path}`: {inner}")
                };
                Err(CallError::InvalidArguments {
                    tool: self.tool.name().to_string(),
                    detail,
                    valid: describe_schema(&self.schema),
                })
            }
        }
    }
}

/// A one-line summary of a generated object schema: `name (type, required), …`.
fn describe_schema(schema: &Map<String, Value>) -> String {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "none (pass an empty object)".to_string();
    };
    if props.is_empty() {
        return "none (pass an empty object)".to_string();
    }
    props
        .iter()
        .map(|(name, p)| {
            let ty = describe_type(p);
            let req = if required.contains(name.as_str()) {
                ", required"
            } else {
                ""
            };
            format!("{name} ({ty}{req})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_type(p: &Value) -> String {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let v: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or(v.to_string(), |s| format!("\"{s}\"")))
            .collect();
        return format!("one of {}", v.join(" | "));
    }
    if let Some(values) = p.get("oneOf").and_then(Value::as_array) {
        let consts: Vec<String> = values
            .iter()
            .filter_map(|v| v.get("const").and_then(Value::as_str))
            .map(|s| format!("\"{s}\""))
            .collect();
        if consts.len() == values.len() && !consts.is_empty() {
            return format!("one of {}", consts.join(" | "));
        }
    }
    match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join("|"),
        _ if p.get("$ref").is_some() => "object".to_string(),
        _ => "any".to_string(),
    }
}
