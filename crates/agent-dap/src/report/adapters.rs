//! `adapters`: which debug adapters can start in this workspace, and why the others cannot.

use agent_tier::Report;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;

/// Every adapter, detected for the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Adapters {
    pub adapters: Vec<AdapterRow>,
}

/// One adapter: whether it can start (a root marker AND its program), and how to install it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct AdapterRow {
    pub id: &'static str,
    pub usable: bool,
    /// The directory holding its root marker, relative to the root.
    pub marker: Option<String>,
    /// The root markers it looks for.
    pub markers: Vec<&'static str>,
    /// Its program.
    pub binary: Option<String>,
    /// Why it is not usable.
    pub problem: Option<String>,
    pub install: &'static str,
    /// The exception filters it advertises.
    pub exception_filters: Vec<&'static str>,
    /// The filters `uncaught` and `all` turn on, and what it stops on by itself.
    #[serde(skip)]
    pub exceptions: ExceptionMapping,
}

/// How `exceptions` maps onto an adapter's filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExceptionMapping {
    pub uncaught: Vec<&'static str>,
    pub all: Vec<&'static str>,
    /// Exceptions it stops on whatever the filters ("a crash stops as a signal").
    pub native: Option<&'static str>,
}

impl AdapterRow {
    /// "raised, uncaught, userUnhandled (uncaught → uncaught; all → raised, uncaught)".
    fn exception_line(&self) -> String {
        let mapped = |f: &[&str]| {
            if f.is_empty() {
                "none".to_string()
            } else {
                f.join(", ")
            }
        };
        let mut line = if self.exception_filters.is_empty() {
            "none advertised".to_string()
        } else {
            format!(
                "{} (uncaught → {}; all → {})",
                self.exception_filters.join(", "),
                mapped(&self.exceptions.uncaught),
                mapped(&self.exceptions.all)
            )
        };
        if let Some(native) = self.exceptions.native {
            line.push_str("; ");
            line.push_str(native);
        }
        line
    }
}

impl Report for Adapters {
    fn text(&self) -> String {
        let mut text =
            String::from("debug adapters for this workspace (root marker AND binary):\n");
        for d in &self.adapters {
            let status = match &d.problem {
                None => "usable".to_string(),
                Some(why) => format!("not usable: {why}"),
            };
            let _ = writeln!(
                text,
                "- {}: {status}\n    marker ({}): {}\n    program: {}\n    install: {}\n    exception filters: {}",
                d.id,
                d.markers.join(", "),
                d.marker
                    .as_deref()
                    .map_or_else(|| "missing".to_string(), |m| format!("{m} found")),
                d.binary.as_deref().unwrap_or("missing"),
                d.install,
                d.exception_line(),
            );
        }
        text.push_str("markers are looked for from the program's directory up to the workspace root; `launch` checks again for its program");
        text
    }
}
