//! A session's life: `initialize` (what we are, what the adapter offers), `launch` or `attach`
//! (the adapter's own configuration), `configurationDone`, and `disconnect`.

use super::List;
use agent_rpc::Request;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `initialize`; an adapter that answers without a body offers nothing.
pub(crate) enum Initialize {}

impl Request for Initialize {
    const METHOD: &'static str = "initialize";
    type Params = InitializeArguments;
    type Result = Option<Capabilities>;
}

/// What we tell an adapter about ourselves: paths, 1-based lines and columns, and none of the
/// optional client features (no terminal, no child sessions, no paging, no progress).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeArguments {
    #[serde(rename = "clientID")]
    pub client_id: &'static str,
    pub client_name: &'static str,
    #[serde(rename = "adapterID")]
    pub adapter_id: &'static str,
    pub path_format: &'static str,
    pub lines_start_at1: bool,
    pub columns_start_at1: bool,
    pub supports_variable_type: bool,
    pub supports_variable_paging: bool,
    pub supports_run_in_terminal_request: bool,
    pub supports_start_debugging_request: bool,
    pub supports_progress_reporting: bool,
    pub supports_memory_references: bool,
    pub supports_invalidated_event: bool,
    pub locale: &'static str,
}

impl InitializeArguments {
    /// agent-dap's arguments for the adapter `adapter_id`.
    pub fn new(adapter_id: &'static str) -> Self {
        InitializeArguments {
            client_id: "agent-dap",
            client_name: "agent-dap",
            adapter_id,
            path_format: "path",
            lines_start_at1: true,
            columns_start_at1: true,
            supports_variable_type: true,
            supports_variable_paging: false,
            supports_run_in_terminal_request: false,
            supports_start_debugging_request: false,
            supports_progress_reporting: false,
            supports_memory_references: false,
            supports_invalidated_event: false,
            locale: "en-us",
        }
    }
}

/// What an adapter offers, of what this family asks about; a capability left out is not offered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Capabilities {
    pub supports_configuration_done_request: bool,
    pub supports_function_breakpoints: bool,
    pub supports_conditional_breakpoints: bool,
    pub supports_hit_conditional_breakpoints: bool,
    pub supports_log_points: bool,
    pub supports_exception_info_request: bool,
    pub exception_breakpoint_filters: List<ExceptionBreakpointsFilter>,
}

impl Capabilities {
    /// The ids of the exception filters it advertises.
    pub fn filter_ids(&self) -> Vec<&str> {
        self.exception_breakpoint_filters
            .0
            .iter()
            .map(|f| f.filter.as_str())
            .collect()
    }
}

/// One exception filter an adapter advertises (`uncaught`, `raised`, `cpp_throw`…).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ExceptionBreakpointsFilter {
    pub filter: String,
}

/// `launch`: what to start is each adapter's own configuration (`adapters` builds it).
pub(crate) enum Launch {}

impl Request for Launch {
    const METHOD: &'static str = "launch";
    type Params = Configuration;
    type Result = IgnoredAny;
}

/// `attach`: what to attach to is each adapter's own configuration.
pub(crate) enum Attach {}

impl Request for Attach {
    const METHOD: &'static str = "attach";
    type Params = Configuration;
    type Result = IgnoredAny;
}

/// An adapter's own `launch` or `attach` configuration. The DAP leaves its fields to each
/// adapter: every adapter file declares them in a type of its own, and this carries that value
/// as the request's JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub(crate) struct Configuration(Value);

impl Configuration {
    /// `fields` as the request carries them.
    pub fn of(fields: &impl Serialize) -> Configuration {
        // Invariant: the configuration types are structs of strings, booleans, numbers, lists
        // and string-keyed maps, whose derived `Serialize` cannot fail.
        Configuration(serde_json::to_value(fields).expect("a configuration serializes"))
    }

    /// The JSON the request carries.
    #[cfg(test)]
    pub fn json(&self) -> &Value {
        &self.0
    }
}

/// `configurationDone`: the breakpoints and filters are set; the debuggee may run.
pub(crate) enum ConfigurationDone {}

impl Request for ConfigurationDone {
    const METHOD: &'static str = "configurationDone";
    type Params = super::NoArguments;
    type Result = IgnoredAny;
}

/// `disconnect`: end the session, ending a launched debuggee or leaving an attached one running.
pub(crate) enum Disconnect {}

impl Request for Disconnect {
    const METHOD: &'static str = "disconnect";
    type Params = DisconnectArguments;
    type Result = IgnoredAny;
}

/// Whether the debuggee ends with the session.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DisconnectArguments {
    pub terminate_debuggee: bool,
}
