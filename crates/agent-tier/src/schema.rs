//! Lean input schemas: what `schemars` generates, reduced to what a model needs to fill the
//! arguments right the first time.
//!
//! - `$ref`s into `$defs` are inlined (and `$defs` dropped), so an enum reads as an enum where it
//!   is used, and argument errors can name its values;
//! - `oneOf` of constants becomes a plain `enum`, the variants' descriptions folded into the
//!   field's description;
//! - `["T", "null"]` unions and `anyOf [T, null]` become `T` (optional is said by `required`);
//! - `$schema`, `title`, `format`, `default: null` and `default: false` are dropped;
//! - `additionalProperties: false` is dropped: a tool takes the old names of its arguments as
//!   aliases (named in the field's description), and a client that validates against the schema
//!   must let them through. The registry still refuses an unknown argument, naming the valid
//!   ones (the argument types deny unknown fields).

use serde_json::{Map, Value};

/// The lean form of a generated schema.
pub fn lean(schema: Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut out = inline(schema, &defs, 0);
    if let Value::Object(o) = &mut out {
        o.remove("$defs");
        o.remove("definitions");
        // The argument type's own doc comment ("Arguments of `x`.") says nothing to a model.
        o.remove("description");
    }
    out
}

/// How deep `$ref`s are followed (a recursive type stops here, keeping its `$ref`).
const MAX_DEPTH: usize = 8;

fn inline(value: Value, defs: &Value, depth: usize) -> Value {
    match value {
        Value::Object(o) => object(o, defs, depth),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| inline(v, defs, depth)).collect()),
        other => other,
    }
}

fn object(mut o: Map<String, Value>, defs: &Value, depth: usize) -> Value {
    if let Some(Value::String(r)) = o.get("$ref")
        && depth < MAX_DEPTH
        && let Some(target) = r
            .rsplit_once('/')
            .and_then(|(_, name)| defs.get(name))
            .cloned()
    {
        o.remove("$ref");
        // The use site's own keys (its description) win over the definition's.
        let mut merged = match target {
            Value::Object(t) => t,
            other => return inline(other, defs, depth + 1),
        };
        for (k, v) in o {
            merged.insert(k, v);
        }
        return object(merged, defs, depth + 1);
    }
    for key in ["$schema", "title", "format"] {
        o.remove(key);
    }
    // `minimum: 0` comes from unsigned types and says nothing; a 1-based field says `minimum: 1`
    // itself.
    if o.get("minimum").and_then(Value::as_u64) == Some(0) {
        o.remove("minimum");
    }
    // Doc comments wrap at 100 columns: one line of text, paragraphs kept.
    if let Some(Value::String(d)) = o.get_mut("description") {
        *d = unwrap_lines(d);
    }
    if o.get("default") == Some(&Value::Null) {
        o.remove("default");
    }
    // An optional flag is off unless given: `default: false` says nothing.
    if o.get("default") == Some(&Value::Bool(false)) {
        o.remove("default");
    }
    if o.get("additionalProperties") == Some(&Value::Bool(false)) {
        o.remove("additionalProperties");
    }
    // ["T", "null"] → "T".
    if let Some(Value::Array(types)) = o.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let ty = match kept.len() {
            1 => kept[0].clone(),
            _ => Value::Array(kept),
        };
        o.insert("type".into(), ty);
    }
    // anyOf [T, {type: null}] → T, keeping this node's description.
    if let Some(Value::Array(alts)) = o.get("anyOf") {
        let non_null: Vec<&Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if non_null.len() == 1 && alts.len() == 2 {
            let only = non_null[0].clone();
            o.remove("anyOf");
            if let Value::Object(mut inner) = inline(only, defs, depth) {
                for (k, v) in o {
                    inner.insert(k, v);
                }
                return object(inner, defs, depth);
            }
        }
    }
    let mut o: Map<String, Value> = o
        .into_iter()
        .map(|(k, v)| (k, inline(v, defs, depth)))
        .collect();
    consts_to_enum(&mut o);
    Value::Object(o)
}

/// Join a doc comment's wrapped lines; blank lines (paragraphs) stay.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `oneOf: [{const: "a", description: "…"}, …]` → `enum: ["a", …]`, descriptions folded in.
fn consts_to_enum(o: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = o.get("oneOf").or_else(|| o.get("anyOf")) else {
        return;
    };
    let consts: Option<Vec<(Value, Option<String>)>> = alts
        .iter()
        .map(|a| {
            let c = a.get("const").or_else(|| {
                a.get("enum")
                    .and_then(Value::as_array)
                    .filter(|e| e.len() == 1)
                    .and_then(|e| e.first())
            })?;
            Some((
                c.clone(),
                a.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ))
        })
        .collect();
    let Some(consts) = consts.filter(|c| !c.is_empty()) else {
        return;
    };
    o.remove("oneOf");
    o.remove("anyOf");
    let described: Vec<String> = consts
        .iter()
        .filter_map(|(c, d)| {
            d.as_ref().map(|d| {
                format!(
                    "{}: {}",
                    c.as_str().map_or(c.to_string(), str::to_string),
                    d.trim_end_matches('.')
                )
            })
        })
        .collect();
    if !described.is_empty() {
        let base = o
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        let text = match base {
            Some(b) => format!("{b} ({})", described.join("; ")),
            None => described.join("; "),
        };
        o.insert("description".into(), Value::String(text));
    }
    if let Some(ty) = consts[0].0.as_str().map(|_| "string") {
        o.insert("type".into(), Value::String(ty.into()));
    }
    o.insert(
        "enum".into(),
        Value::Array(consts.into_iter().map(|(c, _)| c).collect()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_unions_and_noise_are_removed() {
        let generated = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "operation": {"$ref": "#/$defs/Op", "description": "What to do."},
                "line": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "default": null},
                "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}], "description": "How."}
            },
            "required": ["operation"],
            "$defs": {
                "Op": {"oneOf": [
                    {"const": "hover", "type": "string", "description": "the type"},
                    {"const": "references", "type": "string"}
                ]},
                "Mode": {"type": "string", "enum": ["a", "b"]}
            }
        });
        assert_eq!(
            lean(generated),
            json!({
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "enum": ["hover", "references"], "description": "What to do. (hover: the type)"},
                    "line": {"type": "integer", "minimum": 1},
                    "mode": {"type": "string", "enum": ["a", "b"], "description": "How."}
                },
                "required": ["operation"]
            })
        );
    }
}
