//! Starting an adapter's process (through `agent-proc`) and reaching its DAP stream, over
//! stdio or a port it announces; connecting to a DAP server's port.

use super::kit::{Adapter, Transport};
use crate::DapError;
use agent_proc::{Child, Launcher, Tail};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

/// A started adapter: its process (if we own one) and the two ends of its DAP stream.
pub(crate) struct Started {
    /// Dropping it ends the adapter and everything it started (the debuggee included).
    pub child: Option<Child>,
    pub stderr: Tail,
    /// Whether pids the adapter reports are in the host's pid namespace (no sandbox prefix).
    pub owns_reported_pids: bool,
    pub command: String,
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// Delve prints the debuggee's output on its own stdout; this is the rest of that stream.
    pub program_stdout: Option<Box<dyn AsyncRead + Send + Unpin>>,
}

fn spawn_err(adapter: &dyn Adapter, command: &str, detail: impl Into<String>) -> DapError {
    DapError::Spawn {
        adapter: adapter.name(),
        command: command.to_string(),
        detail: detail.into(),
    }
}

/// Start `adapter` whose program is `binary`, with its working directory `cwd`.
pub(crate) async fn start(
    adapter: &dyn Adapter,
    binary: &Path,
    prefix: &[String],
    cwd: &Path,
    env: &[(String, String)],
    connect_timeout: Duration,
) -> Result<Started, DapError> {
    let args = adapter.command_args();
    let command = std::iter::once(binary.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let launcher = Launcher::prefixed(prefix);
    let mut cmd = agent_proc::Command::new(&launcher, binary)
        .args(args)
        .current_dir(cwd);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let transport = adapter.transport();
    if transport == Transport::Stdio {
        cmd = cmd.stdin_piped();
    }
    let child = cmd
        .spawn()
        .await
        .map_err(|e| spawn_err(adapter, &command, e.to_string()))?;
    let stderr = child.stderr();
    let owns_reported_pids = launcher.owns_reported_pids();
    // Invariant: agent-proc pipes stdout, and stdin was piped above for stdio adapters.
    let stdout = child
        .take_stdout()
        .ok_or_else(|| spawn_err(adapter, &command, "no stdout pipe"))?;
    let marker = match transport {
        Transport::AnnouncedPort { marker } => marker,
        Transport::Stdio => {
            let stdin = child
                .take_stdin()
                .ok_or_else(|| spawn_err(adapter, &command, "no stdin pipe"))?;
            return Ok(Started {
                child: Some(child),
                stderr,
                owns_reported_pids,
                command,
                reader: Box::new(stdout),
                writer: Box::new(stdin),
                program_stdout: None,
            });
        }
    };
    // The first stdout line after `marker` names the port.
    let mut lines = BufReader::new(stdout);
    let port = tokio::time::timeout(connect_timeout, async {
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Some(rest) = line.split(marker).nth(1) {
                return rest.trim().rsplit(':').next()?.parse::<u16>().ok();
            }
        }
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| {
        spawn_err(
            adapter,
            &command,
            format!(
                "it did not print `{marker}` within {} s; stderr: {}",
                connect_timeout.as_secs(),
                stderr.text().trim()
            ),
        )
    })?;
    let stream = connect(port, connect_timeout)
        .await
        .map_err(|e| spawn_err(adapter, &command, e.to_string()))?;
    let (r, w) = stream.into_split();
    Ok(Started {
        child: Some(child),
        stderr,
        owns_reported_pids,
        command,
        reader: Box::new(r),
        writer: Box::new(w),
        program_stdout: Some(Box::new(lines)),
    })
}

/// Connect to the DAP server on 127.0.0.1:`port` (retrying while it comes up), as a session's
/// stream with no process of ours behind it.
pub(crate) async fn connect_server(port: u16, timeout: Duration) -> Result<Started, Unreachable> {
    let stream = connect(port, timeout).await?;
    let (r, w) = stream.into_split();
    Ok(Started {
        child: None,
        stderr: Tail::new(1024),
        owns_reported_pids: false,
        command: format!("tcp 127.0.0.1:{port}"),
        reader: Box::new(r),
        writer: Box::new(w),
        program_stdout: None,
    })
}

/// Nothing accepted a connection on 127.0.0.1:`port` in time.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to 127.0.0.1:{port}: {error}")]
pub(crate) struct Unreachable {
    port: u16,
    /// The last attempt's error.
    error: std::io::Error,
}

/// Connect to a DAP server on 127.0.0.1 (retrying while it comes up).
async fn connect(port: u16, timeout: Duration) -> Result<tokio::net::TcpStream, Unreachable> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(s) => {
                // DAP messages are small and come in bursts: never hold one back (Nagle).
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(error) if tokio::time::Instant::now() >= deadline => {
                return Err(Unreachable { port, error });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
