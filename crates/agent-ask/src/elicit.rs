//! The MCP elicitation port: the card as an `elicitation/create` request that the host sends to
//! a client that declared the `elicitation` capability.
//!
//! This module knows the shape of the request (a message and a flat object schema of primitive
//! properties) but not the MCP transport: the host implements [`Elicitor`].

use crate::card::{Answer, AskOutcome, Card};
use crate::port::{AskPort, BoxFuture, within};
use agent_tier::Requester;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The client's reply to an `elicitation/create` request.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitOutcome {
    /// `action: "accept"` with its `content` object.
    Accept(Value),
    /// `action: "decline"`: the person refused to answer — the card counts as declined.
    Decline,
    /// `action: "cancel"`: the person dismissed it — the card counts as skipped.
    Cancel,
}

/// Sends `elicitation/create` to the client behind a requester. Implemented by the host (the MCP
/// server), whose requesters are its MCP sessions.
///
/// Resolve to `Err(reason)` at once when there is no requester, it is not one of the host's
/// sessions, its client did not declare the `elicitation` capability or its connection is gone;
/// the card then fails closed. Never send the card to another client.
pub trait Elicitor: Send + Sync {
    /// Send `{message, requestedSchema}` to `requester`'s client and resolve with its reply.
    fn elicit(
        &self,
        requester: Option<Arc<dyn Requester>>,
        message: String,
        requested_schema: Value,
    ) -> BoxFuture<'_, Result<ElicitOutcome, String>>;
}

/// The card as MCP elicitation.
pub struct ElicitationPort {
    elicitor: Arc<dyn Elicitor>,
}

impl std::fmt::Debug for ElicitationPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationPort").finish_non_exhaustive()
    }
}

impl ElicitationPort {
    /// A port that sends cards through `elicitor`.
    pub fn new(elicitor: Arc<dyn Elicitor>) -> Self {
        ElicitationPort { elicitor }
    }
}

/// The property that holds the single chosen option.
pub const CHOICE: &str = "choice";
/// The property that holds typed text.
pub const TEXT: &str = "text";

/// The property that holds whether option `i` (0-based) is chosen, in a multi-select card.
pub fn option_property(i: usize) -> String {
    format!("option_{}", i + 1)
}

/// The `elicitation/create` params of a card: the message and the requested schema.
///
/// The schema is a flat object of primitive properties, as MCP requires:
/// - one option among several: `choice`, a string `enum` of the labels (`enumNames` adds the
///   descriptions);
/// - several options: one boolean `option_N` per option, titled with the label;
/// - free text: a string `text`.
///
/// A property is required only when it is the one way to answer.
pub fn elicitation_request(card: &Card) -> (String, Value) {
    let mut message = card.question.trim().to_string();
    if let Some(ctx) = card
        .context
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        message.push_str("\n\n");
        message.push_str(ctx);
    }
    let mut props = Map::new();
    let mut required = Vec::new();
    if !card.options.is_empty() {
        if card.multi_select {
            for (i, o) in card.options.iter().enumerate() {
                let mut p = json!({"type": "boolean", "title": o.label, "default": false});
                if let Some(d) = &o.description {
                    p["description"] = json!(d);
                }
                props.insert(option_property(i), p);
            }
        } else {
            let labels: Vec<&str> = card.options.iter().map(|o| o.label.as_str()).collect();
            let names: Vec<String> = card
                .options
                .iter()
                .map(|o| match &o.description {
                    Some(d) if !d.trim().is_empty() => format!("{} - {}", o.label, d.trim()),
                    _ => o.label.clone(),
                })
                .collect();
            props.insert(
                CHOICE.into(),
                json!({"type": "string", "title": "Choose one", "enum": labels, "enumNames": names}),
            );
            if !card.allow_free_text {
                required.push(CHOICE);
            }
        }
    }
    if card.allow_free_text {
        let title = if card.options.is_empty() {
            "Your answer"
        } else {
            "Or type your own answer"
        };
        props.insert(TEXT.into(), json!({"type": "string", "title": title}));
        if card.options.is_empty() {
            required.push(TEXT);
        }
    }
    let schema = json!({"type": "object", "properties": props, "required": required});
    (message, schema)
}

/// Read an accepted `content` object back into an answer for `card`. `Ok(None)`: accepted with
/// nothing chosen and nothing typed (counted as a skip).
pub fn read_accepted(card: &Card, content: &Value) -> Result<Option<Answer>, String> {
    let empty = Map::new();
    let obj = match content {
        Value::Object(o) => o,
        Value::Null => &empty,
        other => {
            return Err(format!(
                "the client accepted with non-object content `{other}`"
            ));
        }
    };
    let mut answer = Answer::default();
    if card.multi_select {
        for (i, o) in card.options.iter().enumerate() {
            match obj.get(&option_property(i)) {
                None | Some(Value::Bool(false)) | Some(Value::Null) => {}
                Some(Value::Bool(true)) => answer.selected.push(o.label.clone()),
                Some(v) => {
                    return Err(format!(
                        "the client sent `{v}` for `{}`; expected a boolean",
                        option_property(i)
                    ));
                }
            }
        }
    } else {
        match obj.get(CHOICE) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(Value::String(s)) => answer.selected.push(s.clone()),
            Some(v) => {
                return Err(format!(
                    "the client sent `{v}` for `{CHOICE}`; expected a label"
                ));
            }
        }
    }
    match obj.get(TEXT) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.trim().is_empty() => {}
        Some(Value::String(s)) => answer.text = Some(s.trim().to_string()),
        Some(v) => {
            return Err(format!(
                "the client sent `{v}` for `{TEXT}`; expected a string"
            ));
        }
    }
    if answer.selected.is_empty() && answer.text.is_none() {
        return Ok(None);
    }
    card.check_answer(&answer)?;
    Ok(Some(answer))
}

impl AskPort for ElicitationPort {
    fn name(&self) -> &str {
        "elicitation"
    }

    fn ask(&self, card: Card, requester: Option<Arc<dyn Requester>>) -> BoxFuture<'_, AskOutcome> {
        Box::pin(async move {
            let (message, schema) = elicitation_request(&card);
            within(card.timeout, async {
                match self.elicitor.elicit(requester, message, schema).await {
                    Err(reason) => AskOutcome::Unavailable(reason),
                    Ok(ElicitOutcome::Decline) => AskOutcome::Decline,
                    Ok(ElicitOutcome::Cancel) => AskOutcome::Skip,
                    Ok(ElicitOutcome::Accept(content)) => match read_accepted(&card, &content) {
                        Ok(Some(a)) => AskOutcome::Answer(a),
                        Ok(None) => AskOutcome::Skip,
                        Err(e) => AskOutcome::Unavailable(format!(
                            "the client's elicitation reply does not fit the card: {e}"
                        )),
                    },
                }
            })
            .await
        })
    }
}
