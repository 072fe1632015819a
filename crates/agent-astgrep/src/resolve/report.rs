//! What `resolve` returns: [`ResolveReport`], and the text a model reads, rendered from it.

use super::ResolveAction;
use crate::shown::escape;
use agent_tier::Report;
use agent_tier::display::plural;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;

/// The result of `resolve`: which edit, what was done with it, and the files it wrote.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResolveReport {
    /// The edit's id (`edit_1`).
    pub edit_id: String,
    /// `accept` or `discard`.
    pub operation: ResolveAction,
    /// The files written, relative to the workspace root (none for `discard`).
    pub changed_files: Vec<String>,
    /// Files the edit changes.
    #[serde(skip)]
    pub(crate) staged_files: usize,
    /// Replacements the edit makes.
    #[serde(skip)]
    pub(crate) replacements: usize,
}

impl Report for ResolveReport {
    fn text(&self) -> String {
        let id = &self.edit_id;
        match self.operation {
            ResolveAction::Discard => format!(
                "discarded {id}: nothing was written ({} staged)",
                plural(self.staged_files, "file was", "files were")
            ),
            ResolveAction::Accept => format!(
                "accepted {id}: wrote {} in {}: {}",
                plural(self.replacements, "replacement", "replacements"),
                plural(self.changed_files.len(), "file", "files"),
                self.changed_files
                    .iter()
                    .map(|f| escape(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}
