//! # agent-tools — the per-run tool host
//!
//! `agent-tools serve` serves one run's built-in tools over MCP's stdio transport; `call`, `tools`,
//! `doctor` and `repl` are the same registry from a terminal. This binary owns argument parsing,
//! the MCP transport and the generic file tools (`read`, `write`, `edit`, `apply_patch`); the
//! tools themselves belong to the family crates behind the `agent-tools` facade.
//!
//! It never implements a family's tool, and never serves more than one run per process.

mod args;
mod cli;
mod host;
mod http;
mod lifecycle;
mod mcp;
mod repl;
mod stdio;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = lifecycle::as_reaper(&args) {
        return code;
    }
    let cmd = match cli::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agent-tools: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agent-tools: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    if !matches!(cmd, cli::Command::Help(_)) {
        lifecycle::start_reaper();
    }
    let code = rt.block_on(lifecycle::run(cli::run(cmd)));
    // Every child of the run has ended; do not wait for blocking reader threads.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    code
}
