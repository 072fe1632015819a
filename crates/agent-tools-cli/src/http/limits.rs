//! The bounds the HTTP transport puts on connections, so that nobody on the machine, token or
//! not, can exhaust the host's file descriptors or hold connections open for ever: how many
//! connections at once, how long a connection may take to send a request head (and, without the
//! token, may stay idle), how long a connection that showed the token may stay idle, and how many
//! MCP sessions are kept. Each has a default and an environment variable that overrides it.

use std::time::Duration;

/// The most connections open at once (default: min(256, the soft fd limit / 4)).
pub const MAX_CONNECTIONS_ENV: &str = "AGENT_TOOLS_HTTP_MAX_CONNECTIONS";
/// Milliseconds a connection gets to send a complete request head (default 10,000).
pub const HEADER_TIMEOUT_ENV: &str = "AGENT_TOOLS_HTTP_HEADER_TIMEOUT_MS";
/// Milliseconds an authenticated connection may sit idle between requests (default 120,000).
pub const IDLE_TIMEOUT_ENV: &str = "AGENT_TOOLS_HTTP_IDLE_TIMEOUT_MS";
/// The most MCP sessions kept at once (default [`MAX_SESSIONS`]).
pub const MAX_SESSIONS_ENV: &str = "AGENT_TOOLS_HTTP_MAX_SESSIONS";
/// The default cap on sessions: far more than one person's clients open, far less than memory
/// allows (a session's room holds its kernels and debug session).
pub const MAX_SESSIONS: u64 = 64;

/// The default cap on connections, when the fd limit allows it.
const MOST_CONNECTIONS: u64 = 256;
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Longer than the 90 s reqwest (the HTTP client of rmcp's SDK) keeps an idle connection pooled,
/// so such a client never sends a request on a connection the host is closing.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The bounds one `serve --listen` runs with.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; beyond it the oldest one without the token is closed to make
    /// room, or, when every one has shown it, the new one is.
    pub max_connections: usize,
    /// From a connection's start, or the end of its last response, to a complete request head;
    /// also how long a connection that never showed the token may sit idle.
    pub header_timeout: Duration,
    /// How long a connection that showed the token may sit idle between requests. A request in
    /// progress, or a response still streaming (an SSE stream), is never idle.
    pub idle_timeout: Duration,
    /// MCP sessions kept at once; beyond it the least recently active one ends, with its room.
    pub max_sessions: usize,
}

impl Limits {
    /// The defaults, overridden by the environment.
    pub fn from_env() -> anyhow::Result<Limits> {
        let max = match positive(MAX_CONNECTIONS_ENV)? {
            Some(n) => n,
            None => default_max(soft_fd_limit()),
        };
        Ok(Limits {
            max_connections: usize::try_from(max).unwrap_or(usize::MAX),
            header_timeout: positive(HEADER_TIMEOUT_ENV)?
                .map_or(HEADER_TIMEOUT, Duration::from_millis),
            idle_timeout: positive(IDLE_TIMEOUT_ENV)?.map_or(IDLE_TIMEOUT, Duration::from_millis),
            max_sessions: usize::try_from(positive(MAX_SESSIONS_ENV)?.unwrap_or(MAX_SESSIONS))
                .unwrap_or(usize::MAX),
        })
    }
}

/// min(256, a quarter of the soft fd limit): connections never take more than a quarter of the
/// descriptors, which leaves the rest to the run's language servers, kernels and files.
fn default_max(soft: Option<u64>) -> u64 {
    soft.map_or(MOST_CONNECTIONS, |s| (s / 4).clamp(1, MOST_CONNECTIONS))
}

/// A positive whole number from the environment; unset or empty is `None`.
fn positive(name: &str) -> anyhow::Result<Option<u64>> {
    let Some(text) = std::env::var_os(name) else {
        return Ok(None);
    };
    let text = text.to_string_lossy();
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u64>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => anyhow::bail!(
            "{name} = `{text}` is not a positive whole number; give one (e.g. {name}=256), or unset it for the default"
        ),
    }
}

/// This process's soft limit on open files, from `/proc/self/limits` (`None`: unlimited or
/// unknown).
fn soft_fd_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_soft_fd_limit(&limits)
}

fn parse_soft_fd_limit(limits: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_follows_the_fd_limit() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_soft_fd_limit(limits), Some(1024));
        assert_eq!(
            parse_soft_fd_limit(
                "Max open files            unlimited            unlimited            files"
            ),
            None
        );
        assert_eq!(default_max(Some(1024)), 256);
        assert_eq!(default_max(Some(20000)), 256);
        assert_eq!(default_max(Some(64)), 16);
        assert_eq!(default_max(Some(2)), 1);
        assert_eq!(default_max(None), 256);
    }
}
