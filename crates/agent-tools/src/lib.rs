//! # agent-tools — the facade
//!
//! Re-exports [`agent_tier`] (tiers, the tool trait, the registry) and each tool family behind
//! its cargo feature. It composes; it holds no logic of its own.
//!
//! # Feature flags
//!
//! `default` is empty: a harness names the families it wants.
//!
//! | feature   | crate            | tools |
//! |-----------|------------------|-------|
//! | `files`   | [`agent-files`](https://docs.rs/agent-files)   | `read`, `grep`, `glob`, `write`, `edit`, `apply_patch` |
//! | `lsp`     | [`agent-lsp`](https://docs.rs/agent-lsp)     | `lsp`, `lsp_rename`, diagnostics on write |
//! | `astgrep` | [`agent-astgrep`](https://docs.rs/agent-astgrep) | `ast_grep`, `ast_edit`, `resolve` |
//! | `dap`     | [`agent-dap`](https://docs.rs/agent-dap)     | `debug` |
//! | `kernel`  | [`agent-kernel`](https://docs.rs/agent-kernel)  | `eval` |
//! | `ask`     | [`agent-ask`](https://docs.rs/agent-ask)     | `ask_user` |
//! | `vibe`    | [`agent-vibe`](https://docs.rs/agent-vibe)    | `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill`, `vibe_list` |
//! | `full`    | all of the above | |
//!
//! It never: starts a process, speaks a protocol, or decides anything a family crate decides.

pub use agent_tier as tier;
pub use agent_tier::{Registry, RunInfo, Surface, Tier, Tool, ToolInfo, ToolOutput};

#[cfg(feature = "ask")]
pub use agent_ask as ask;
#[cfg(feature = "astgrep")]
pub use agent_astgrep as astgrep;
#[cfg(feature = "dap")]
pub use agent_dap as dap;
#[cfg(feature = "files")]
pub use agent_files as files;
#[cfg(feature = "kernel")]
pub use agent_kernel as kernel;
#[cfg(feature = "lsp")]
pub use agent_lsp as lsp;
#[cfg(feature = "vibe")]
pub use agent_vibe as vibe;
