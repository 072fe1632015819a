//! # agent-tools — the per-run tool host
//!
//! `agent-tools serve` serves one run's built-in tools over MCP (stdio, or Streamable HTTP with
//! `--listen`); `call`, `tools`, `doctor` and `repl` are the same registry from a terminal;
//! `hook claude-code` is a client's own hook ([`hook`]). This binary owns argument parsing
//! ([`args`]), `main`, the terminal commands' printing ([`cli`], [`repl`], [`out`]) and the
//! allocator of parsed trees ([`alloc`]); composing the run, the MCP server and the process
//! lifecycle are the `agent_tools_cli` library's.
//!
//! It never implements a family's tool, and never serves more than one run per process.

mod alloc;
mod args;
mod cli;
mod hook;
mod out;
mod repl;

use agent_tools_cli::{lifecycle, logging};
use std::process::ExitCode;

fn main() -> ExitCode {
    alloc::trees_in_mimalloc();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = lifecycle::as_reaper(&args) {
        return code;
    }
    let invocation = match args::parse(&args) {
        Ok(inv) => inv,
        Err(e) => {
            out::stderr(&format!("agent-tools: {e}\n\n{}", args::USAGE));
            return ExitCode::from(2);
        }
    };
    let cmd = invocation.command;
    if let args::Command::Help(text) = &cmd {
        return out::finish(out::stdout(text), ExitCode::SUCCESS);
    }
    if let Err(e) = logging::init(invocation.log_file.as_deref()) {
        out::stderr(&format!("agent-tools: {e}"));
        return ExitCode::from(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            out::stderr(&format!("agent-tools: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    tracing::debug!(command = ?cmd, "starting");
    lifecycle::arm_reaper();
    let code = rt.block_on(lifecycle::run(cli::run(cmd)));
    // Every child of the run has ended; do not wait for blocking reader threads.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    code
}
