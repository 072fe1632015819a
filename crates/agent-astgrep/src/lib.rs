//! # agent-astgrep — structural search and staged rewrite: `ast_grep`, `ast_edit`, `resolve`
//!
//! Owns the run's parser resource (bundled tree-sitter grammars) and its staged edits.
//!
//! Never: starts a process, downloads a grammar, or writes a file outside `resolve`.

use agent_tier::Registry;

/// Attach the parser resource to this run and register its tools.
pub fn attach(_registry: &Registry) {}
