//! What code means: definition, declaration, type definition, implementation, references,
//! hover, a file's symbols and a workspace symbol search.

use super::{
    DocumentParams, List, Locations, Offered, Position, Range, ServerCapabilities,
    TextDocumentIdentifier, TextDocumentPositionParams,
};
use agent_rpc::Request;
use serde::{Deserialize, Serialize};

/// A request answered with locations, at a position.
macro_rules! located {
    ($name:ident, $method:literal, $cap:ident, $doc:literal) => {
        #[doc = $doc]
        pub enum $name {}

        impl Request for $name {
            const METHOD: &'static str = $method;
            type Params = TextDocumentPositionParams;
            type Result = Locations;
        }

        impl Offered for $name {
            fn offered(caps: &ServerCapabilities) -> Option<bool> {
                caps.$cap.as_ref().map(|c| c.on())
            }
        }
    };
}

located!(
    Definition,
    "textDocument/definition",
    definition_provider,
    "`textDocument/definition`."
);
located!(
    Declaration,
    "textDocument/declaration",
    declaration_provider,
    "`textDocument/declaration`."
);
located!(
    TypeDefinition,
    "textDocument/typeDefinition",
    type_definition_provider,
    "`textDocument/typeDefinition`."
);
located!(
    Implementation,
    "textDocument/implementation",
    implementation_provider,
    "`textDocument/implementation`."
);

/// `textDocument/references`.
pub enum References {}

impl Request for References {
    const METHOD: &'static str = "textDocument/references";
    type Params = ReferenceParams;
    type Result = Locations;
}

impl Offered for References {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.references_provider.as_ref().map(|c| c.on())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
    pub context: ReferenceContext,
}

impl ReferenceParams {
    /// The references of the symbol at `at`, its declaration included.
    pub fn with_declaration(at: TextDocumentPositionParams) -> Self {
        ReferenceParams {
            text_document: at.text_document,
            position: at.position,
            context: ReferenceContext {
                include_declaration: true,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceContext {
    pub include_declaration: bool,
}

/// `textDocument/hover`.
pub enum HoverRequest {}

impl Request for HoverRequest {
    const METHOD: &'static str = "textDocument/hover";
    type Params = TextDocumentPositionParams;
    type Result = Option<Hover>;
}

impl Offered for HoverRequest {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.hover_provider.as_ref().map(|c| c.on())
    }
}

/// A hover. `contents` may be `null` or left out (no information).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Hover {
    pub contents: Option<HoverContents>,
}

/// Hover contents: a `MarkedString` (a string, or `{language, value}`), `MarkupContent`
/// (`{kind, value}`), or an array of them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum HoverContents {
    Text(String),
    Block(MarkedBlock),
    Many(Vec<HoverContents>),
}

/// `{language, value}` (a code block) or `{kind, value}` (markdown or plain text).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MarkedBlock {
    pub value: String,
    pub language: Option<String>,
}

/// A `SymbolKind` (1 = file … 26 = type parameter).
pub type SymbolKind = u32;

/// `textDocument/documentSymbol`.
pub enum DocumentSymbols {}

impl Request for DocumentSymbols {
    const METHOD: &'static str = "textDocument/documentSymbol";
    type Params = DocumentParams;
    type Result = List<DocumentSymbolItem>;
}

impl Offered for DocumentSymbols {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.document_symbol_provider.as_ref().map(|c| c.on())
    }
}

/// One symbol of a file: hierarchical (`DocumentSymbol`, with its whole range and children) or
/// flat (`SymbolInformation`, with a location); told apart by `location`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "WireSymbol")]
pub enum DocumentSymbolItem {
    Nested(DocumentSymbol),
    Flat(SymbolInformation),
}

/// A symbol as it comes: a `DocumentSymbol`'s fields, or a `SymbolInformation`'s.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSymbol {
    name: String,
    kind: SymbolKind,
    location: Option<SymbolLocation>,
    container_name: Option<String>,
    range: Option<Range>,
    selection_range: Option<Range>,
    #[serde(default)]
    children: List<DocumentSymbolItem>,
}

impl TryFrom<WireSymbol> for DocumentSymbolItem {
    type Error = &'static str;

    fn try_from(w: WireSymbol) -> Result<Self, &'static str> {
        match w.location {
            Some(location) => Ok(DocumentSymbolItem::Flat(SymbolInformation {
                name: w.name,
                kind: w.kind,
                location,
                container_name: w.container_name,
            })),
            None => Ok(DocumentSymbolItem::Nested(DocumentSymbol {
                name: w.name,
                kind: w.kind,
                range: w.range.ok_or("missing field `range` (or `location`)")?,
                selection_range: w.selection_range,
                children: w.children,
            })),
        }
    }
}

impl DocumentSymbolItem {
    pub fn name(&self) -> &str {
        match self {
            DocumentSymbolItem::Nested(s) => &s.name,
            DocumentSymbolItem::Flat(s) => &s.name,
        }
    }

    pub fn kind(&self) -> SymbolKind {
        match self {
            DocumentSymbolItem::Nested(s) => s.kind,
            DocumentSymbolItem::Flat(s) => s.kind,
        }
    }

    /// A flat symbol's `containerName`.
    pub fn container(&self) -> Option<&str> {
        match self {
            DocumentSymbolItem::Nested(_) => None,
            DocumentSymbolItem::Flat(s) => s.container_name.as_deref(),
        }
    }

    /// The whole definition's range: a hierarchical symbol's only (a flat one's range may be
    /// its name alone).
    pub fn whole_range(&self) -> Option<Range> {
        match self {
            DocumentSymbolItem::Nested(s) => Some(s.range),
            DocumentSymbolItem::Flat(_) => None,
        }
    }

    /// Its range: the whole definition's, else the flat location's.
    pub fn range(&self) -> Option<Range> {
        match self {
            DocumentSymbolItem::Nested(s) => Some(s.range),
            DocumentSymbolItem::Flat(s) => s.location.range,
        }
    }

    /// Where its name starts: the selection range, else the start of its range.
    pub fn name_start(&self) -> Option<Position> {
        match self {
            DocumentSymbolItem::Nested(s) => Some(s.selection_range.unwrap_or(s.range).start),
            DocumentSymbolItem::Flat(s) => s.location.range.map(|r| r.start),
        }
    }

    /// The symbols inside it.
    pub fn children(&self) -> &[DocumentSymbolItem] {
        match self {
            DocumentSymbolItem::Nested(s) => &s.children,
            DocumentSymbolItem::Flat(_) => &[],
        }
    }
}

/// A hierarchical symbol.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSymbol {
    pub name: String,
    pub kind: SymbolKind,
    pub range: Range,
    /// Required by the specification; a server that leaves it out gets `range`'s start.
    pub selection_range: Option<Range>,
    pub children: List<DocumentSymbolItem>,
}

/// A flat symbol (`SymbolInformation`, or a `WorkspaceSymbol` whose location may have no
/// range).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolInformation {
    pub name: String,
    pub kind: SymbolKind,
    pub location: SymbolLocation,
    pub container_name: Option<String>,
}

/// A symbol's location: a `WorkspaceSymbol`'s may be the URI alone.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SymbolLocation {
    pub uri: String,
    pub range: Option<Range>,
}

/// `workspace/symbol`.
pub enum WorkspaceSymbols {}

impl Request for WorkspaceSymbols {
    const METHOD: &'static str = "workspace/symbol";
    type Params = WorkspaceSymbolParams;
    type Result = List<SymbolInformation>;
}

impl Offered for WorkspaceSymbols {
    fn offered(caps: &ServerCapabilities) -> Option<bool> {
        caps.workspace_symbol_provider.as_ref().map(|c| c.on())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceSymbolParams {
    pub query: String,
}
