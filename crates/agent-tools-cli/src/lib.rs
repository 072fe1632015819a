//! # agent-tools-cli — the per-run tool host, as a library
//!
//! The composition of one run and the protocol server the `agent-tools` binary calls:
//!
//! - [`host`]: one run's [`Registry`](agent_tools::Registry) with the file tools and every family
//!   compiled in ([`host::FAMILIES`], one [`host::Family`] per cargo feature), set up by plain
//!   typed options ([`host::HostOptions`]), `doctor`, and [`host::serve`] (the run served over MCP
//!   on stdio or Streamable HTTP);
//! - [`ask`] (feature `ask`): how `ask_user` and approvals reach a person — the terminal card, or
//!   MCP elicitation through the connected client;
//! - [`mcp`]: the `rmcp` server handler over the registry, each MCP session the requester of its
//!   own calls; [`stdio`] and [`http`], its transports;
//! - [`control`]: the stdio host's control socket, through which a client's own hook reports an
//!   edit made by the client's own tools and gets the run's `ChangeChecker` report back;
//! - [`lifecycle`]: the run's reaper, the ending signals, and ending every process of the run;
//! - [`logging`]: the `tracing` subscriber (stderr or `--log-file`, level from `AGENT_TOOLS_LOG`),
//!   and each session's subscription to the log;
//! - the errors of each of these ([`NotAnAddress`], [`LogError`], [`ElicitError`]).
//!
//! The binary keeps argument parsing (`clap`, and `shell-words` for `--sandbox-prefix`), `main`
//! and the terminal commands' printing. This library parses no command line: it never uses
//! `clap` or `shell-words` (`tests/library_parses_no_flags.rs` checks its sources), and both are
//! dependencies of the `cli` feature, which the binary requires. It never implements a family's
//! tool, never writes to stdout except MCP messages, and never serves more than one run per
//! process.
//!
//! # Feature flags
//!
//! `default = ["full", "cli"]`.
//!
//! - `lsp`, `astgrep`, `dap`, `kernel`, `ask`, `vibe`: the families compiled in (`full` is all of
//!   them); the file tools are always in.
//! - `cli`: the `agent-tools` binary and its flag parsing (`clap`, `shell-words`). A program that
//!   embeds the library turns default features off and names the families it wants, and builds
//!   neither.

#[cfg(feature = "ask")]
pub mod ask;
pub mod control;
mod error;
pub mod host;
pub mod http;
pub mod lifecycle;
pub mod logging;
pub mod mcp;
pub mod stdio;

pub use error::{ElicitError, LogError, NotAnAddress};
