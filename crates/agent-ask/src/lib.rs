//! # agent-ask — `ask_user`, and the card that approvals render through
//!
//! Owns the run's ask port (terminal, MCP elicitation, scripted).
//!
//! Never: invents an answer, or blocks when nobody is attached.

use agent_tier::Registry;

/// Attach an ask port to this run and register `ask_user`.
pub fn attach(_registry: &Registry) {}
