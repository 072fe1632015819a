//! # agent-vibe — the five `vibe_*` tools that direct background workers
//!
//! Owns the run's worker roster and the backend that runs workers.
//!
//! Never: gates a worker's own tools (that gate belongs to the workers' tools), or drops a
//! finished worker's result before someone reads it.

use agent_tier::Registry;

/// Attach the vibe roster to this run and register the `vibe_*` tools.
pub fn attach(_registry: &Registry) {}
