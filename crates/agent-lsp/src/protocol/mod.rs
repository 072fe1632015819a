//! The LSP edges this family speaks, each declared once: every request it sends and every
//! notification it reads is a type implementing [`agent_rpc::Request`] or
//! [`agent_rpc::Notification`] (what it sends as notifications implements [`Sent`]), with the
//! types of what it carries. A reply of another shape is a [`agent_rpc::Malformed`] naming the
//! method and the field, which the client turns into
//! [`LspError::Malformed`](crate::LspError::Malformed) — never a silent default.
//!
//! The types are lenient where real servers are (docs/decisions.md): `null` where the
//! specification says a list ([`List`], [`Locations`]); a single `Location`, `Location[]` or
//! `LocationLink[]` for a definition ([`Locations`]); `MarkupContent`, `MarkedString` or an
//! array of them for a hover ([`HoverContents`]); `DocumentSymbol[]` or `SymbolInformation[]`
//! for a file's symbols ([`DocumentSymbolItem`]); a field some servers leave out is an
//! `Option`. Fields nobody here reads are not declared (extra fields are ignored), except on a
//! [`Diagnostic`], whose other fields are kept and sent back with `codeAction` (servers find
//! their fixes through them). Settings and `initializationOptions` pass through as opaque JSON.
//! A shape told apart by its fields (a `LocationLink` by `targetUri`, a flat symbol by
//! `location`, a file operation by `kind`) is read through a private wire struct of optional
//! fields and then checked (`serde(try_from)`), so what is missing is named.
//!
//! By area: [`lifecycle`] (initialize, capabilities, shutdown), [`documents`] (document sync),
//! [`navigation`] (definition and its kin, references, hover, symbols), [`hierarchy`]
//! (call and type hierarchies), [`edit`] (rename and
//! the workspace edit), [`diagnostics`] (published and pulled diagnostics, code actions,
//! typescript-language-server's tsserver passthrough), [`server`] (what the server sends the
//! client: progress, status, its own requests).

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub mod diagnostics;
pub mod documents;
pub mod edit;
pub mod hierarchy;
pub mod lifecycle;
pub mod navigation;
pub mod server;

pub use diagnostics::*;
pub use documents::*;
pub use edit::*;
pub use hierarchy::*;
pub use lifecycle::*;
pub use navigation::*;
pub use server::*;

/// A notification this family sends: its method and what it carries.
pub trait Sent {
    /// The method.
    const METHOD: &'static str;
    /// What it carries (`()` is sent as `null`).
    type Params: Serialize;
}

/// A request the server answers only if it offers it: statically, by its capability, or by
/// dynamic registration of the method.
pub trait Offered: agent_rpc::Request {
    /// What the server's capabilities say: `None` when they do not mention it.
    fn offered(caps: &ServerCapabilities) -> Option<bool>;
}

/// A reply that may hold nothing: `null`, no location, no item.
pub trait MaybeEmpty {
    /// Nothing was found.
    fn is_empty(&self) -> bool;
}

impl<T> MaybeEmpty for Option<T> {
    fn is_empty(&self) -> bool {
        self.is_none()
    }
}

/// A position: 0-based line, column in the negotiated encoding's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// A range of positions, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// A document, by its URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextDocumentIdentifier {
    pub uri: String,
}

/// A position in a document: what most requests carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentPositionParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
}

impl TextDocumentPositionParams {
    /// `position` in the document at `uri`.
    pub fn new(uri: String, line: u32, character: u32) -> Self {
        TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri },
            position: Position { line, character },
        }
    }
}

/// What only names a document (`documentSymbol`, `diagnostic`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentParams {
    pub text_document: TextDocumentIdentifier,
}

impl DocumentParams {
    /// The document at `uri`.
    pub fn new(uri: String) -> Self {
        DocumentParams {
            text_document: TextDocumentIdentifier { uri },
        }
    }
}

/// A list that a server may also send as `null` (read as empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(List(
            Option::<Vec<T>>::deserialize(d)?.unwrap_or_else(Vec::new),
        ))
    }
}

impl<T> MaybeEmpty for List<T> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> std::ops::Deref for List<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

/// A place in a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    pub uri: String,
    pub range: Range,
}

/// A link to a place: the whole target (a definition's body) and the part to show (its name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationLink {
    pub target_uri: String,
    pub target_range: Range,
    pub target_selection_range: Option<Range>,
}

/// One location of a navigation answer: a `Location` or a `LocationLink` (told apart by
/// `targetUri`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "WireLocation")]
pub enum AnyLocation {
    Location(Location),
    Link(LocationLink),
}

impl AnyLocation {
    /// The URI it points into.
    pub fn uri(&self) -> &str {
        match self {
            AnyLocation::Location(l) => &l.uri,
            AnyLocation::Link(l) => &l.target_uri,
        }
    }

    /// Where the place starts: a link's selection (the name), else its whole range.
    pub fn start(&self) -> Position {
        match self {
            AnyLocation::Location(l) => l.range.start,
            AnyLocation::Link(l) => l.target_selection_range.unwrap_or(l.target_range).start,
        }
    }
}

/// A location as it comes: a `Location`'s fields, or a `LocationLink`'s.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireLocation {
    uri: Option<String>,
    range: Option<Range>,
    target_uri: Option<String>,
    target_range: Option<Range>,
    target_selection_range: Option<Range>,
}

impl TryFrom<WireLocation> for AnyLocation {
    type Error = &'static str;

    fn try_from(w: WireLocation) -> Result<Self, &'static str> {
        match w {
            WireLocation {
                target_uri: Some(target_uri),
                target_range,
                target_selection_range,
                ..
            } => Ok(AnyLocation::Link(LocationLink {
                target_uri,
                target_range: target_range.ok_or("a LocationLink without `targetRange`")?,
                target_selection_range,
            })),
            WireLocation {
                uri: Some(uri),
                range: Some(range),
                ..
            } => Ok(AnyLocation::Location(Location { uri, range })),
            WireLocation { uri: None, .. } => Err("missing field `uri` (or `targetUri`)"),
            WireLocation { .. } => Err("missing field `range`"),
        }
    }
}

/// A navigation answer: `null`, one `Location`, or an array of `Location`s or `LocationLink`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations(pub Vec<AnyLocation>);

impl<'de> Deserialize<'de> for Locations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Shapes;
        impl<'de> Visitor<'de> for Shapes {
            type Value = Locations;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Location, an array of Locations or LocationLinks, or null")
            }
            fn visit_unit<E>(self) -> Result<Locations, E> {
                Ok(Locations::default())
            }
            fn visit_none<E>(self) -> Result<Locations, E> {
                Ok(Locations::default())
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Locations, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Locations, A::Error> {
                let mut out = Vec::new();
                loop {
                    match seq.next_element::<AnyLocation>() {
                        Ok(Some(l)) => out.push(l),
                        Ok(None) => return Ok(Locations(out)),
                        Err(e) => {
                            return Err(A::Error::custom(format_args!(
                                "location {}: {e}",
                                out.len()
                            )));
                        }
                    }
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Locations, A::Error> {
                AnyLocation::deserialize(MapAccessDeserializer::new(map))
                    .map(|l| Locations(vec![l]))
            }
        }
        d.deserialize_any(Shapes)
    }
}

impl MaybeEmpty for Locations {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An object's entries in the order it has them; `None` for `null`.
type Pairs<V> = Option<Vec<(String, V)>>;

/// Read an ordered JSON object as `(key, value)` pairs in the order it has them.
pub(crate) fn ordered_map<'de, D, V>(d: D) -> Result<Pairs<V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Entries<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
        type Value = Pairs<V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object or null")
        }
        fn visit_unit<E>(self) -> Result<Pairs<V>, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Pairs<V>, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Pairs<V>, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pairs<V>, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, V>()? {
                out.push((k, v));
            }
            Ok(Some(out))
        }
    }
    d.deserialize_option(Entries(std::marker::PhantomData))
}

/// The params of a request the server sent us, read as `R` declares them (a request the
/// server makes of the client is declared like one we make: its params and its result).
pub fn incoming<R>(params: Value) -> Result<R::Params, agent_rpc::Malformed>
where
    R: agent_rpc::Request,
    R::Params: DeserializeOwned,
{
    serde_json::from_value(params).map_err(|e| agent_rpc::Malformed {
        method: R::METHOD,
        what: "params",
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests;
