//! `agent-tools serve --listen ADDR`: the run's tools over MCP's Streamable HTTP transport
//! (`rmcp`'s `StreamableHttpService` on a `hyper` HTTP/1 server), at `http://ADDR/mcp`.
//!
//! Every request must carry `Authorization: Bearer <token>` (401 otherwise: no token, no tools);
//! a browser `Origin` that is not loopback is refused (403) before anything else, and `rmcp`
//! checks the `Host` header against loopback names (DNS rebinding) unless the host was asked to
//! listen on another address. Every session serves the same run — one registry, one set of
//! language servers and caches — and has its own room: its kernels, debug session, staged edits,
//! ledgers and workers, ended when the session is deleted or idle for [`SESSION_IDLE`].
//!
//! Nothing a client does ends the host: an `accept` that fails is retried (after 100 ms when the
//! process is out of descriptors or memory), connections are capped and closed when they send
//! no request head in time or sit idle (the bounds in `limits`, the connections in
//! `connections`), and clients without the token cannot crowd out one with it.

mod capped;
mod connections;
mod limits;

use crate::error::NotAnAddress;
use crate::mcp::{Host, Sessions};
use agent_tools::tier::{Registry, Surface};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The environment variable that carries the bearer token when `--token-file` is not given.
pub const TOKEN_ENV: &str = "AGENT_TOOLS_TOKEN";

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// `--listen` as an address: `HOST:PORT`, or a bare port on loopback.
pub fn parse_listen(text: &str) -> Result<SocketAddr, NotAnAddress> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(NotAnAddress(text.to_string()))
}

/// A token file the host generated: removed with its directory when the host ends (a normal exit
/// or an ending signal; a SIGKILL leaves it, 0600 in a 0700 directory).
struct Generated(PathBuf);

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The bearer token: `--token-file`, else `AGENT_TOOLS_TOKEN`, else a fresh random one written
/// 0600 to a file in a private temp directory, whose path is printed on stderr.
fn token(token_file: Option<&Path>) -> anyhow::Result<(String, Option<Generated>)> {
    if let Some(path) = token_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("`--token-file` = `{}`: {e}", path.display()))?;
        let token = text.trim().to_string();
        anyhow::ensure!(
            !token.is_empty(),
            "`--token-file` = `{}` is empty",
            path.display()
        );
        return Ok((token, None));
    }
    if let Some(token) = std::env::var(TOKEN_ENV)
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok((token.trim().to_string(), None));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = write_token_file(&token)?;
    say(&format!(
        "agent-tools serve: bearer token written to {}",
        path.display()
    ));
    Ok((token, Some(Generated(path))))
}

fn write_token_file(token: &str) -> anyhow::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = std::env::temp_dir().join(format!("agent-tools-{}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("token");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
    writeln!(f, "{token}")?;
    Ok(path)
}

/// Whether an `Origin` names a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`).
fn loopback_origin(origin: &str) -> bool {
    let Some((_, rest)) = origin.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Equal without an early exit on the first differing byte.
fn same_token(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A line for the operator on stderr (a closed stderr is no reason to stop serving).
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn refusal(status: StatusCode, text: &'static str) -> Response<Body> {
    tracing::info!(
        status = status.as_u16(),
        reason = text.trim_end(),
        "request refused"
    );
    let mut resp = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *resp.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    resp
}

/// The answer to a request that may not reach the tools, if it may not.
fn gate(req: &Request<Incoming>, token: &str) -> Option<Response<Body>> {
    if let Some(origin) = req.headers().get(hyper::header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(loopback_origin);
        if !ok {
            return Some(refusal(
                StatusCode::FORBIDDEN,
                "Forbidden: this host serves loopback origins only\n",
            ));
        }
    }
    let given = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if !given.is_some_and(|g| same_token(g.as_bytes(), token.as_bytes())) {
        return Some(refusal(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send Authorization: Bearer <token> (--token-file or AGENT_TOOLS_TOKEN)\n",
        ));
    }
    if req.uri().path() != "/mcp" {
        return Some(refusal(
            StatusCode::NOT_FOUND,
            "Not Found: the endpoint is /mcp\n",
        ));
    }
    None
}

/// How long `accept` pauses after a failure that is not one connection's own (out of
/// descriptors or memory): the pending connections wait in the backlog meanwhile.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections the kernel may hold for the listener before it accepts them (capped by
/// `net.core.somaxconn`).
const BACKLOG: u32 = 1024;

/// How long an MCP session may go without a message before it ends, with its room.
pub const SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Serve over Streamable HTTP on `addr` the registry `make_registry` composes once the host can
/// listen. Returns only if the host cannot start serving (no token, the address taken, a limit
/// misconfigured); once listening, it serves until the run ends. Every session serves the same
/// registry; each is the requester of its own calls.
pub async fn serve(
    surface: Surface,
    addr: SocketAddr,
    token_file: Option<PathBuf>,
    make_registry: impl FnOnce() -> Registry,
) -> anyhow::Result<()> {
    let limits = limits::Limits::from_env()?;
    let (token, _generated) = token(token_file.as_deref())?;
    let token: Arc<str> = token.into();
    let listener = listen(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let host = Host::new(make_registry(), surface, Sessions::default());
    let mut config = StreamableHttpServerConfig::default();
    // No SSE priming event (rmcp's default sends one with empty data and a `retry` field before
    // each response): Gemini CLI's SDK parses every event's data as JSON, fails on the empty one
    // and drops the server (it then lists no tools). Nothing here resumes a stream by event id,
    // so the priming event served no one.
    config.sse_retry = None;
    if !addr.ip().is_loopback() {
        // Asked to listen beyond loopback: any Host name may reach it; the token still gates.
        config = config.disable_allowed_hosts();
    }
    // A session idle for SESSION_IDLE ends, and its room with it (its kernels, debug session,
    // staged edits, workers): rmcp's default of 5 minutes would end a conversation whose
    // person is reading a long answer.
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    // The session layer prepends its own priming event to each request's stream: none either.
    sessions.session_config.sse_retry = None;
    let sessions = capped::Capped::new(sessions, limits.max_sessions);
    let service = StreamableHttpService::new(move || Ok(host.clone()), Arc::new(sessions), config);
    say(&format!(
        "agent-tools serve: listening on http://{local}/mcp"
    ));
    tracing::info!(%local, ?limits, "listening");
    let table = connections::Table::new(limits.max_connections);
    let mut turned_away = 0u64;
    loop {
        table.room().await;
        let (stream, remote) = accept(&listener).await;
        let Some((conn, evicted)) = table.admit() else {
            // Dropped unserved: every place is held by a client with the token.
            turned_away += 1;
            if turned_away.is_power_of_two() {
                tracing::warn!(
                    %remote,
                    turned_away,
                    max = limits.max_connections,
                    "connection closed at once: {} connections are open, all with the token (raise {} to allow more)",
                    limits.max_connections,
                    limits::MAX_CONNECTIONS_ENV
                );
            }
            continue;
        };
        turned_away = 0;
        // A reply goes out in small writes: without TCP_NODELAY the second waits for the
        // client's delayed ACK of the first (measured: 44 ms per call, 0.25 ms with it).
        let _ = stream.set_nodelay(true);
        tracing::debug!(%remote, "connection accepted");
        let service = service.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn({
                let conn = conn.clone();
                move |req: Request<Incoming>| {
                    let mut service = service.clone();
                    let request = conn.request();
                    let refused = gate(&req, &token);
                    if refused.is_none() {
                        conn.showed_token();
                    }
                    async move {
                        let resp = match refused {
                            Some(resp) => resp,
                            None => {
                                let delete = req.method() == hyper::Method::DELETE;
                                let mut resp = tower_call(&mut service, req).await?;
                                // The session is gone when DELETE returns: say 200, which every
                                // SDK takes as success (the Python SDK logs 202 as a failed
                                // termination).
                                if delete && resp.status() == StatusCode::ACCEPTED {
                                    *resp.status_mut() = StatusCode::OK;
                                }
                                resp
                            }
                        };
                        Ok::<_, Infallible>(
                            resp.map(|body| connections::Guarded::new(body, request)),
                        )
                    }
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let served = hyper::server::conn::http1::Builder::new().serve_connection(io, handler);
            tokio::select! {
                _ = served => {}
                Ok(()) = evicted => {
                    tracing::debug!(%remote, "closed a connection without the token to make room");
                }
                () = conn.quiet(&limits) => {
                    tracing::debug!(%remote, "closed a connection with no request in progress for longer than its bound (header or idle timeout)");
                }
            }
        });
    }
}

/// A listener on `addr` whose backlog holds [`BACKLOG`] connections not yet accepted (the
/// default, 128, overflows under a burst of connections, and each one dropped waits a second
/// for its SYN to be sent again).
fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The next connection. A failure never ends the host: one connection's own (reset or aborted
/// before it was accepted) is skipped; any other (out of descriptors, out of memory) is logged
/// and retried after [`ACCEPT_BACKOFF`].
async fn accept(listener: &tokio::net::TcpListener) -> (tokio::net::TcpStream, SocketAddr) {
    use std::io::ErrorKind;
    let mut failures = 0u64;
    loop {
        match listener.accept().await {
            Ok(accepted) => {
                if failures > 0 {
                    tracing::info!(failures, "accepting connections again");
                }
                return accepted;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionAborted
                        | ErrorKind::ConnectionReset
                        | ErrorKind::ConnectionRefused
                        | ErrorKind::Interrupted
                        | ErrorKind::WouldBlock
                        | ErrorKind::TimedOut
                        | ErrorKind::PermissionDenied
                ) =>
            {
                tracing::debug!(error = %e, "a connection failed before it was accepted");
            }
            Err(e) => {
                failures += 1;
                if failures.is_power_of_two() {
                    tracing::warn!(
                        error = %e,
                        failures,
                        "accept failed; retrying in {} ms (if out of file descriptors: raise `ulimit -n`, or lower {})",
                        ACCEPT_BACKOFF.as_millis(),
                        limits::MAX_CONNECTIONS_ENV
                    );
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

async fn tower_call(
    service: &mut StreamableHttpService<Host, capped::Capped>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    use tower_service::Service;
    service.call(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_listen_addresses() {
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
        ] {
            assert!(loopback_origin(ok), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://10.0.0.2:80",
            "http://localhost.evil.example",
        ] {
            assert!(!loopback_origin(bad), "{bad}");
        }
        assert_eq!(parse_listen("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(parse_listen("0.0.0.0:9").unwrap().to_string(), "0.0.0.0:9");
        assert!(
            parse_listen("localhost:x")
                .unwrap_err()
                .to_string()
                .contains("--listen")
        );
        assert!(
            same_token(b"abc", b"abc") && !same_token(b"abc", b"abd") && !same_token(b"ab", b"abc")
        );
    }
}
