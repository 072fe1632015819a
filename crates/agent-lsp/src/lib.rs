//! # agent-lsp — language servers: `lsp`, `lsp_rename`, diagnostics on write
//!
//! Owns the run's language-server supervisor: one server per (server id, root), started at call
//! time when a root marker AND a binary are both present. Registers `lsp` (read) and
//! `lsp_rename` (write), and a wrapper around the host's `write`, `edit` and `apply_patch` that
//! appends the diagnostics a write newly introduced.
//!
//! Never: speaks any protocol but LSP, depends on another family crate, or lets an `lsp_types`
//! value leak into a tool result (results are plain text and JSON).

use agent_tier::Registry;
use agent_tier::doctor::DoctorEntry;
use std::path::Path;

/// Attach the language-server supervisor to this run and register its tools.
pub fn attach(_registry: &Registry) {}

/// What this family could start for the checkout at `root`.
pub fn doctor(_root: &Path) -> Vec<DoctorEntry> {
    Vec::new()
}
