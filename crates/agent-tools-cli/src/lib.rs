//! # agent-tools-cli — the per-run tool host, as a library
//!
//! The composition of one run and the protocol server the `agent-tools` binary calls:
//!
//! - [`host`]: one run's [`Registry`](agent_tools::Registry) with the file tools and every family
//!   compiled in, `doctor`, and [`host::serve`] (the run served over MCP on stdio or Streamable
//!   HTTP);
//! - [`ask`] (feature `ask`): how `ask_user` and approvals reach a person — the terminal card, or
//!   MCP elicitation through the connected client;
//! - [`mcp`]: the `rmcp` server handler over the registry; [`stdio`] and [`http`], its
//!   transports;
//! - [`lifecycle`]: the run's reaper, the ending signals, and ending every process of the run;
//! - [`logging`]: the `tracing` subscriber (stderr or `--log-file`, level from `AGENT_TOOLS_LOG`).
//!
//! The binary keeps argument parsing, `main` and the terminal commands' printing. This library
//! never implements a family's tool, never writes to stdout except MCP messages, and never serves
//! more than one run per process.
//!
//! # Feature flags
//!
//! `lsp`, `astgrep`, `dap`, `kernel`, `ask`, `vibe`: the families compiled in (`full`, the
//! default, is all of them); the file tools are always in.

#[cfg(feature = "ask")]
pub mod ask;
pub mod host;
pub mod http;
pub mod lifecycle;
pub mod logging;
pub mod mcp;
pub mod stdio;
