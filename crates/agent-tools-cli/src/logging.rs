//! The host's log: `tracing` events and spans written as text to stderr, or appended to a file
//! (`--log-file`); never to stdout, which carries the protocol. The level comes from
//! [`LOG_ENV`] in `EnvFilter` syntax (`info`, `warn,agent_tier=debug`), default [`DEFAULT`].
//!
//! Each tool call is one span (`tool_call`, opened by the registry with the tool's name, the
//! surface and the origin); its close is logged at `info` with the time it took
//! (`time.busy` + `time.idle`).

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// The environment variable holding the log filter.
pub const LOG_ENV: &str = "AGENT_TOOLS_LOG";

/// The filter when [`LOG_ENV`] is unset or empty: warnings and errors only.
pub const DEFAULT: &str = "warn";

/// Install the process-wide subscriber: to `log_file` (appended, created if missing) or stderr.
/// An unreadable filter falls back to [`DEFAULT`] with a warning on stderr; a log file that
/// cannot be opened is an error (the caller refuses to start rather than log nowhere).
pub fn init(log_file: Option<&Path>) -> Result<(), String> {
    let filter = match std::env::var(LOG_ENV) {
        Ok(text) if !text.trim().is_empty() => EnvFilter::try_new(&text).unwrap_or_else(|e| {
            let _ = writeln!(
                std::io::stderr(),
                "agent-tools: `{LOG_ENV}` = `{text}` is not a log filter ({e}); logging at `{DEFAULT}`"
            );
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false);
    let installed = match log_file {
        Some(path) => {
            let file = File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("`--log-file` = `{}`: {e}", path.display()))?;
            builder.with_writer(Mutex::new(file)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    installed.map_err(|e| format!("cannot install the log subscriber: {e}"))
}
