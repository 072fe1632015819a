//! Call and type hierarchies: an item prepared at a position, then one step from it (the calls
//! into it and out of it, its supertypes and subtypes).

use super::{List, Offered, Range, ServerCapabilities, SymbolKind, TextDocumentPositionParams};
use agent_rpc::Request;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A `CallHierarchyItem` or `TypeHierarchyItem` (the same fields). What this family does not
/// read (`tags`, `data`) is kept and sent back as it came: servers find the item again by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HierarchyItem {
    pub name: String,
    pub kind: SymbolKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub uri: String,
    pub range: Range,
    pub selection_range: Range,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// The params of every step: the item it starts from.
#[derive(Debug, Clone, Serialize)]
pub struct ItemParams {
    pub item: HierarchyItem,
}

/// A caller: the function that calls, and the ranges of its calls (in its own file).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IncomingCall {
    pub from: HierarchyItem,
    #[serde(default)]
    pub from_ranges: Vec<Range>,
}

/// A callee: the function called, and the ranges of the calls (in the asked item's file).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutgoingCall {
    pub to: HierarchyItem,
    #[serde(default)]
    pub from_ranges: Vec<Range>,
}

/// A request that starts or walks a hierarchy.
macro_rules! step {
    ($name:ident, $method:literal, $params:ty, $result:ty, $cap:ident) => {
        #[doc = concat!("`", $method, "`.")]
        pub enum $name {}

        impl Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = List<$result>;
        }

        impl Offered for $name {
            fn offered(caps: &ServerCapabilities) -> Option<bool> {
                caps.$cap.as_ref().map(|c| c.on())
            }
        }
    };
}

step!(
    PrepareCallHierarchy,
    "textDocument/prepareCallHierarchy",
    TextDocumentPositionParams,
    HierarchyItem,
    call_hierarchy_provider
);
step!(
    IncomingCalls,
    "callHierarchy/incomingCalls",
    ItemParams,
    IncomingCall,
    call_hierarchy_provider
);
step!(
    OutgoingCalls,
    "callHierarchy/outgoingCalls",
    ItemParams,
    OutgoingCall,
    call_hierarchy_provider
);
step!(
    PrepareTypeHierarchy,
    "textDocument/prepareTypeHierarchy",
    TextDocumentPositionParams,
    HierarchyItem,
    type_hierarchy_provider
);
step!(
    Supertypes,
    "typeHierarchy/supertypes",
    ItemParams,
    HierarchyItem,
    type_hierarchy_provider
);
step!(
    Subtypes,
    "typeHierarchy/subtypes",
    ItemParams,
    HierarchyItem,
    type_hierarchy_provider
);
