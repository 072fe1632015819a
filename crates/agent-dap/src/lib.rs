//! # agent-dap — the `debug` tool
//!
//! Owns the run's debug-session supervisor: at most one session per conversation, driven over
//! the Debug Adapter Protocol against real adapters (debugpy, lldb-dap, delve, dart).
//!
//! Never: speaks any protocol but DAP, keeps a session past its TTL, or leaves an adapter or
//! debuggee process behind.

use agent_tier::Registry;
use agent_tier::doctor::DoctorEntry;
use std::path::Path;

/// Attach the debug-session supervisor to this run and register `debug`.
pub fn attach(_registry: &Registry) {}

/// What adapters this family could start for the checkout at `root`.
pub fn doctor(_root: &Path) -> Vec<DoctorEntry> {
    Vec::new()
}
