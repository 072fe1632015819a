//! The host's control socket: how a client's own tools reach the running host from outside MCP.
//!
//! Its one use: Claude Code's `PostToolUse` hook (`agent-tools hook claude-code`) tells the host
//! which file Claude Code's own `Edit` or `Write` just changed and what it held before, and gets
//! back the problems that change introduced — checked by the run's [`ChangeChecker`] (the
//! language servers) with the same ledger as our own writes — to hand to the model at once.
//!
//! - The socket is `<dir>/<host pid>.sock`, `dir` being `$XDG_RUNTIME_DIR/agent-tools`, else
//!   `/tmp/agent-tools-<uid>`: a folder of this user's, mode 0700 (one that is not ours or is
//!   open to others is refused, and no socket is made); the socket is 0600 and is removed when
//!   the host ends (one a killed host left is removed by the next hook that finds its pid gone).
//! - A peer of another user is refused (`SO_PEERCRED`); a request names a file, which must be
//!   inside the root (the checker confines it), and the answer is one JSON line.
//! - The hook picks, among the live hosts, the one whose process ancestry meets its own soonest:
//!   the host its own client started.
//!
//! Served over stdio only (over HTTP several sessions share a host, and a hook cannot say whose
//! turn it is in).

use agent_tools::tier::outside::{Before, ChangeChecker};
use agent_tools::tier::{Registry, RoomId};
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a changed file held before, on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireBefore {
    /// This text.
    Content(String),
    /// The change created the file.
    Absent,
    /// Not known: the servers' last copy is the baseline.
    Unknown,
}

/// One request: a file changed outside the run's write tools.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// The changed file (absolute, or relative to the root).
    pub file: PathBuf,
    /// What it held before.
    pub before: WireBefore,
}

/// The answer: the report's text, empty when there is nothing to say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Answer {
    /// The problems the change introduced, or what could not be checked.
    pub text: String,
}

/// This process's user id (from a file it owns: its own `/proc` entry).
fn my_uid() -> io::Result<u32> {
    Ok(std::fs::metadata("/proc/self")?.uid())
}

/// The folder the sockets live in, made 0700 if missing; an error if it is not this user's or is
/// open to others.
pub fn socket_dir() -> io::Result<PathBuf> {
    let uid = my_uid()?;
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("agent-tools"),
        None => std::env::temp_dir().join(format!("agent-tools-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let m = std::fs::symlink_metadata(&dir)?;
    if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a folder of this user's with mode 0700: no control socket",
                dir.display()
            ),
        ));
    }
    Ok(dir)
}

/// The listening socket; dropping it removes the socket file.
pub struct Listening {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Listening {
    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listen for hooks on behalf of `registry`; each check goes to the room `room()` names.
pub fn listen(
    registry: Registry,
    room: Arc<dyn Fn() -> RoomId + Send + Sync>,
) -> io::Result<Listening> {
    let dir = socket_dir()?;
    let path = dir.join(format!("{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    let uid = my_uid()?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let registry = registry.clone();
            let room = room.clone();
            tokio::spawn(async move {
                if let Err(e) = serve_one(stream, uid, &registry, room()).await {
                    tracing::debug!(error = %e, "a control request failed");
                }
            });
        }
    });
    tracing::debug!(socket = %path.display(), "control socket");
    Ok(Listening { path, task })
}

async fn serve_one(
    stream: tokio::net::UnixStream,
    uid: u32,
    registry: &Registry,
    room: RoomId,
) -> io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let peer = stream.peer_cred()?;
    if peer.uid() != uid {
        tracing::warn!(
            peer_uid = peer.uid(),
            "a control request from another user was refused"
        );
        return Ok(());
    }
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    // One request of at most 64 MiB (a file's old content).
    let mut reader = tokio::io::BufReader::new(read.take(64 << 20));
    reader.read_line(&mut line).await?;
    let answer = match serde_json::from_str::<Request>(&line) {
        Ok(req) => Answer {
            text: check(registry, req, &room).await,
        },
        Err(e) => Answer {
            text: format!("agent-tools: the hook's request was not understood: {e}"),
        },
    };
    let mut out = serde_json::to_string(&answer).unwrap_or_default();
    out.push('\n');
    write.write_all(out.as_bytes()).await?;
    write.shutdown().await
}

async fn check(registry: &Registry, req: Request, room: &RoomId) -> String {
    let Some(checker): Option<Arc<dyn ChangeChecker>> = registry.change_checker() else {
        return String::new();
    };
    let file = if req.file.is_absolute() {
        req.file
    } else {
        registry.run().root.join(req.file)
    };
    let before = match req.before {
        WireBefore::Content(t) => Before::Content(t.into_bytes()),
        WireBefore::Absent => Before::Absent,
        WireBefore::Unknown => Before::Unknown,
    };
    checker.check(&file, before, room).await
}

/// `pid`'s parent, from `/proc/<pid>/stat`.
fn parent(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text[text.rfind(')')? + 2..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `pid` and its ancestors, nearest first, up to (not including) pid 1.
fn lineage(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut p = pid;
    while let Some(up) = parent(p).filter(|u| *u > 1) {
        if out.contains(&up) || out.len() > 256 {
            break;
        }
        out.push(up);
        p = up;
    }
    out
}

/// The socket of the live host whose ancestry meets this process's soonest (the host this
/// process's own client started); sockets of hosts that are gone are removed.
pub fn find_host() -> Option<PathBuf> {
    let dir = socket_dir().ok()?;
    let mine = lineage(std::process::id());
    let mut best: Option<(usize, PathBuf)> = None;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let path = entry.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let theirs = lineage(pid);
        let Some(meet) = mine.iter().position(|p| theirs[1..].contains(p)) else {
            continue;
        };
        if best.as_ref().is_none_or(|(d, _)| meet < *d) {
            best = Some((meet, path));
        }
    }
    best.map(|(_, p)| p)
}

/// Ask the host listening at `socket` (blocking, bounded by `timeout`).
pub fn ask(socket: &Path, req: &Request, timeout: Duration) -> io::Result<Answer> {
    let mut stream = std::os::unix::net::UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut line = serde_json::to_string(req).map_err(io::Error::other)?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    let mut reply = String::new();
    io::BufReader::new(stream).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(io::Error::other)
}
