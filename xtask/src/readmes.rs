//! The examples of every published crate's README, compiled and run as doctests: `cargo test
//! -p xtask --doc` (part of `cargo xtask test`, which tests the whole workspace). The crates'
//! own `lib.rs` files stay as they are (the facade may hold re-exports only); this library holds
//! nothing outside `cfg(doctest)`. The README of `agent-tools-cli` has no Rust example.

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-tier/README.md")]
pub struct AgentTier;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-proc/README.md")]
pub struct AgentProc;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-rpc/README.md")]
pub struct AgentRpc;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-files/README.md")]
pub struct AgentFiles;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-lsp/README.md")]
pub struct AgentLsp;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-astgrep/README.md")]
pub struct AgentAstgrep;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-dap/README.md")]
pub struct AgentDap;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-kernel/README.md")]
pub struct AgentKernel;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-ask/README.md")]
pub struct AgentAsk;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-vibe/README.md")]
pub struct AgentVibe;

#[cfg(doctest)]
#[doc = include_str!("../../crates/agent-tools/README.md")]
pub struct AgentTools;
