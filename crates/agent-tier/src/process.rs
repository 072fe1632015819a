//! The one configuration every child process of a family gets, and the helpers around it.
//!
//! This module never spawns anything: [`command`] returns a configured
//! `tokio::process::Command`, and the family crate that owns the resource spawns it. Every child
//! gets its own process group (so that killing the group leaves nothing behind), stdin null
//! unless the caller pipes it, stdout and stderr piped, and `kill_on_drop(true)`.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;

/// A command configured the project's way: own process group, stdin null, stdout and stderr
/// piped, killed on drop. `prefix` (a sandbox launcher such as `docker exec -i box`) is put in
/// front when non-empty.
pub fn command(
    prefix: &[String],
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = impl AsRef<OsStr>>,
) -> tokio::process::Command {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = tokio::process::Command::new(first);
            c.args(rest);
            c.arg(program);
            c
        }
        None => tokio::process::Command::new(program),
    };
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kill a whole process group (the child and everything it started). Errors are ignored: the
/// group may already be gone.
pub fn kill_group(pid: u32) {
    #[allow(unsafe_code)]
    // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
    unsafe {
        libc::killpg(pid as libc::pid_t, libc::SIGKILL);
    }
}

/// Send a signal to a whole process group (e.g. `libc::SIGINT` to interrupt a kernel cell).
pub fn signal_group(pid: u32, signal: i32) {
    #[allow(unsafe_code)]
    // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
    unsafe {
        libc::killpg(pid as libc::pid_t, signal);
    }
}

/// Kills the process group when dropped; hold one next to every child.
#[derive(Debug)]
pub struct GroupGuard {
    pid: Option<u32>,
}

impl GroupGuard {
    /// Guard the group led by `pid` (the child's pid, since it leads its own group).
    pub fn new(pid: Option<u32>) -> Self {
        GroupGuard { pid }
    }

    /// The group's pid.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Kill now.
    pub fn kill(&mut self) {
        if let Some(pid) = self.pid.take() {
            kill_group(pid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A bounded buffer that keeps the last `cap` bytes written to it (a child's stderr).
#[derive(Debug, Clone)]
pub struct Tail {
    buf: Arc<Mutex<VecDeque<u8>>>,
    cap: usize,
}

impl Tail {
    /// A tail that keeps `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Tail {
            buf: Arc::new(Mutex::new(VecDeque::with_capacity(cap.min(1 << 16)))),
            cap,
        }
    }

    /// Append bytes, dropping the oldest beyond the cap.
    pub fn push(&self, bytes: &[u8]) {
        let mut b = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        b.extend(bytes.iter().copied());
        let excess = b.len().saturating_sub(self.cap);
        b.drain(..excess);
    }

    /// The kept bytes as lossy UTF-8.
    pub fn text(&self) -> String {
        let b = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        let (a, c) = b.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(c);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// Read `reader` to its end into this tail, on a background task.
    pub fn capture(&self, mut reader: impl tokio::io::AsyncRead + Unpin + Send + 'static) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = reader.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                tail.push(&chunk[..n]);
            }
        });
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Resolve the first of `names` that exists: first in each of `local_dirs` (relative to
/// `root`, e.g. `node_modules/.bin`, `.venv/bin`), then on `$PATH`.
pub fn resolve_binary(root: &Path, local_dirs: &[&str], names: &[&str]) -> Option<PathBuf> {
    for name in names {
        for dir in local_dirs {
            let p = root.join(dir).join(name);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    for name in names {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    None
}

/// The nearest ancestor of `start` (inclusive), not above `root`, that contains one of
/// `markers`.
pub fn find_root_marker(root: &Path, start: &Path, markers: &[&str]) -> Option<PathBuf> {
    let mut dir = if start.is_dir() {
        start.to_path_buf()
    } else {
        start.parent()?.to_path_buf()
    };
    loop {
        if markers.iter().any(|m| dir.join(m).exists()) {
            return Some(dir);
        }
        if dir == root || !dir.starts_with(root) || !dir.pop() {
            return None;
        }
    }
}
