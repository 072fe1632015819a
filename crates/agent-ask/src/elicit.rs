//! The MCP elicitation port: the card as an `elicitation/create` request that the host sends to
//! a client that declared the `elicitation` capability.
//!
//! This module knows the shape of the request (a message and a flat object schema of primitive
//! properties) but not the MCP transport: the host implements [`Elicitor`].

use crate::card::{Answer, AskOutcome, Card};
use crate::error::ContentError;
use crate::port::{AskPort, BoxFuture, within};
use agent_tier::Requester;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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
/// Resolve to an error saying why at once when there is no requester, it is not one of the host's
/// sessions, its client did not declare the `elicitation` capability or its connection is gone;
/// the card then fails closed. Never send the card to another client.
pub trait Elicitor: Send + Sync {
    /// Send `{message, requestedSchema}` to `requester`'s client and resolve with its reply.
    fn elicit(
        &self,
        requester: Option<Arc<dyn Requester>>,
        message: String,
        requested_schema: Value,
    ) -> BoxFuture<'_, Result<ElicitOutcome, agent_tier::BoxError>>;
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

/// The `requestedSchema` of an `elicitation/create` request: a flat object of primitive
/// properties, as MCP requires. Its fields (and each property's) are declared in the order a
/// JSON object sorts them, so that it reads the same written directly or as a JSON value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestedSchema {
    /// The properties by name ([`CHOICE`], [`TEXT`], [`option_property`]).
    pub properties: BTreeMap<String, Property>,
    /// The properties that must be answered.
    pub required: Vec<&'static str>,
    /// Always [`JsonType::Object`].
    #[serde(rename = "type")]
    pub kind: JsonType,
}

/// One property of a [`RequestedSchema`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Property {
    /// The value when the person leaves it (a multi-select option: unchosen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// What choosing it means (a multi-select option's description).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The labels one may choose from (single choice).
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// What each label is shown as: the label and its description.
    #[serde(rename = "enumNames", skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// What the client shows above it.
    pub title: String,
    /// Its JSON type.
    #[serde(rename = "type")]
    pub kind: JsonType,
}

impl Property {
    fn new(kind: JsonType, title: impl Into<String>) -> Self {
        Property {
            default: None,
            description: None,
            labels: None,
            names: None,
            title: title.into(),
            kind,
        }
    }
}

/// The JSON type of a schema or a property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    /// The schema itself.
    Object,
    /// A multi-select option: chosen or not.
    Boolean,
    /// A label or typed text.
    String,
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
pub fn elicitation_request(card: &Card) -> (String, RequestedSchema) {
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
    let mut properties = BTreeMap::new();
    let mut required = Vec::new();
    if !card.options.is_empty() {
        if card.multi_select {
            for (i, o) in card.options.iter().enumerate() {
                let p = Property {
                    default: Some(false),
                    description: o.description.clone(),
                    ..Property::new(JsonType::Boolean, o.label.as_str())
                };
                properties.insert(option_property(i), p);
            }
        } else {
            let labels = card.options.iter().map(|o| o.label.clone()).collect();
            let names = card
                .options
                .iter()
                .map(|o| match &o.description {
                    Some(d) if !d.trim().is_empty() => format!("{} - {}", o.label, d.trim()),
                    _ => o.label.clone(),
                })
                .collect();
            let p = Property {
                labels: Some(labels),
                names: Some(names),
                ..Property::new(JsonType::String, "Choose one")
            };
            properties.insert(CHOICE.into(), p);
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
        properties.insert(TEXT.into(), Property::new(JsonType::String, title));
        if card.options.is_empty() {
            required.push(TEXT);
        }
    }
    let schema = RequestedSchema {
        properties,
        required,
        kind: JsonType::Object,
    };
    (message, schema)
}

/// One property of an accepted reply, as the client sent it (`null` reads as absent).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Sent {
    Flag(bool),
    Text(String),
    /// Any other JSON: not what the schema asked for.
    Other(serde_json::Value),
}

impl Sent {
    /// The value as JSON, for an error that quotes it.
    fn json(&self) -> String {
        match self {
            Sent::Flag(b) => b.to_string(),
            Sent::Text(s) => serde_json::to_string(s).unwrap_or_else(|_| s.clone()),
            Sent::Other(v) => v.to_string(),
        }
    }
}

/// Read an accepted `content` object back into an answer for `card`. `Ok(None)`: accepted with
/// nothing chosen and nothing typed (counted as a skip).
pub fn read_accepted(
    card: &Card,
    content: &serde_json::Value,
) -> Result<Option<Answer>, ContentError> {
    let sent: BTreeMap<String, Option<Sent>> = if content.is_null() {
        BTreeMap::new()
    } else {
        BTreeMap::deserialize(content).map_err(|_| ContentError::NotAnObject {
            sent: content.to_string(),
        })?
    };
    let get = |property: &str| sent.get(property).and_then(Option::as_ref);
    let wrong = |property: &str, v: &Sent, expected| ContentError::WrongType {
        property: property.to_string(),
        sent: v.json(),
        expected,
    };
    let mut answer = Answer::default();
    if card.multi_select {
        for (i, o) in card.options.iter().enumerate() {
            let property = option_property(i);
            match get(&property) {
                None | Some(Sent::Flag(false)) => {}
                Some(Sent::Flag(true)) => answer.selected.push(o.label.clone()),
                Some(v) => return Err(wrong(&property, v, "a boolean")),
            }
        }
    } else {
        match get(CHOICE) {
            None => {}
            Some(Sent::Text(s)) if s.is_empty() => {}
            Some(Sent::Text(s)) => answer.selected.push(s.clone()),
            Some(v) => return Err(wrong(CHOICE, v, "a label")),
        }
    }
    match get(TEXT) {
        None => {}
        Some(Sent::Text(s)) if s.trim().is_empty() => {}
        Some(Sent::Text(s)) => answer.text = Some(s.trim().to_string()),
        Some(v) => return Err(wrong(TEXT, v, "a string")),
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
            // A derived `Serialize` of strings, booleans and string-keyed maps cannot fail.
            let schema = match serde_json::to_value(&schema) {
                Ok(schema) => schema,
                Err(e) => {
                    return AskOutcome::Unavailable(format!(
                        "the elicitation request could not be written: {e}"
                    ));
                }
            };
            within(card.timeout, async {
                match self.elicitor.elicit(requester, message, schema).await {
                    Err(reason) => AskOutcome::Unavailable(reason.to_string()),
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
