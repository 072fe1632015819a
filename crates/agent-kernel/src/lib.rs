//! # agent-kernel — the `eval` tool: persistent Python and JavaScript cells
//!
//! Owns the run's kernel factory: a child process of the project's own Python, or of `node`,
//! running a driver shipped in this crate, talking over dedicated pipes.
//!
//! Never: links an interpreter into the host, opens a port, or starts a sandbox.

use agent_tier::Registry;
use agent_tier::doctor::DoctorEntry;
use std::path::Path;

/// Attach the kernel factory to this run and register `eval`.
pub fn attach(_registry: &Registry) {}

/// Which kernel runtimes are usable for the checkout at `root`.
pub fn doctor(_root: &Path) -> Vec<DoctorEntry> {
    Vec::new()
}
