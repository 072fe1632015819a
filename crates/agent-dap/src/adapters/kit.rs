//! What every adapter file implements ([`Adapter`]), and the small tools they share: finding a
//! program, a private scratch directory. Knows no particular adapter.

use crate::protocol::Configuration;
use agent_tier::process;
use serde::Serialize;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

/// A future an adapter returns from a trait method (the trait is used as `dyn Adapter`).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How the DAP stream reaches an adapter we start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Its stdin and stdout.
    Stdio,
    /// A TCP port on 127.0.0.1 that it prints on its first stdout line after `marker`; the rest
    /// of its stdout is the debuggee's output.
    AnnouncedPort { marker: &'static str },
}

/// How `attach` reaches the debuggee's port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttachVia {
    /// The port is a DAP server itself (`python -m debugpy --listen`, a headless delve):
    /// connect to it, start nothing.
    DapServer,
    /// Start the adapter, which connects to the port (lldb-dap to a gdb-remote server).
    Adapter,
}

/// What `launch` knows when it asks an adapter for its `launch` arguments.
pub(crate) struct LaunchSpec<'a> {
    /// The program, absolute: inside the workspace, or a test binary the launch built. For a
    /// `module` launch, the working directory (where the root marker was looked for).
    pub program: &'a Path,
    /// A Python module to run as `python -m` instead of `program` (debugpy only).
    pub module: Option<&'a str>,
    /// `program` is a Go package whose tests run (delve's test mode; `args` hold `-test.run`).
    pub test: bool,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<String, String>,
    /// The adapter's program as detection found it (for debugpy: the python).
    pub binary: &'a Path,
    /// The directory holding the root marker.
    pub marker: &'a Path,
    /// The sandbox prefix every process is started under (empty on the host).
    pub prefix: &'a [String],
}

/// An adapter's `launch` arguments, the scratch directory they name (kept for the session), and
/// environment variables for the adapter's own process.
pub(crate) struct Launch {
    pub arguments: Configuration,
    pub scratch: Option<Scratch>,
    pub adapter_env: Vec<(String, String)>,
}

impl From<Configuration> for Launch {
    fn from(arguments: Configuration) -> Self {
        Launch {
            arguments,
            scratch: None,
            adapter_env: Vec::new(),
        }
    }
}

/// What every adapter's configuration starts with: its name, the adapter's `type`, and which
/// request it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Header {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub request: &'static str,
}

impl Header {
    /// The header of a `launch` configuration for the adapter type `ty`.
    pub fn launch(ty: &'static str) -> Header {
        Header {
            name: "agent-dap",
            ty,
            request: "launch",
        }
    }

    /// The header of an `attach` configuration for the adapter type `ty`.
    pub fn attach(ty: &'static str) -> Header {
        Header {
            request: "attach",
            ..Header::launch(ty)
        }
    }
}

/// One debug adapter: how it is detected, started, and what it is told to launch or attach.
/// Each lives in its own file; `AdapterId::adapter` is the table.
pub(crate) trait Adapter: Sync {
    /// The id as the model writes it.
    fn name(&self) -> &'static str;
    /// The root markers, any one of which makes a checkout this adapter's.
    fn markers(&self) -> &'static [&'static str];
    /// How to install its program.
    fn install(&self) -> &'static str;
    /// The program names looked for, in order; the first is the one error messages name.
    fn binary_names(&self) -> Vec<String>;
    /// Find the adapter's program for a checkout whose marker directory is `marker`: the program,
    /// and why it does not count although it exists. Default: the first of
    /// [`Adapter::binary_names`] in `extra`, then on `$PATH`.
    fn find(
        &self,
        root: &Path,
        _marker: Option<&Path>,
        extra: &[PathBuf],
    ) -> (Option<PathBuf>, Option<String>) {
        (find_binary(root, extra, &self.binary_names()), None)
    }
    /// Whether this adapter debugs `program` (an existing path); asked in the order `infer` uses.
    fn debugs(&self, program: &Path) -> bool;
    /// The adapter's own command-line arguments.
    fn command_args(&self) -> &'static [&'static str];
    /// How its DAP stream is reached.
    fn transport(&self) -> Transport {
        Transport::Stdio
    }
    /// The `launch` request's arguments.
    fn launch<'a>(&'a self, spec: &'a LaunchSpec<'a>) -> BoxFuture<'a, Launch>;
    /// The `attach` request's arguments for a debuggee on 127.0.0.1:`port`, and how the port is
    /// reached; `None` when this adapter cannot attach.
    fn attach(&self, port: u16) -> Option<(Configuration, AttachVia)>;
    /// The `exceptionBreakpointFilters` ids the adapter advertises (as observed in its
    /// `initialize` response; a live session uses what it really advertises).
    fn exception_filters(&self) -> &'static [&'static str];
    /// Exceptions it stops on by itself, whatever the filters.
    fn native_exception_stops(&self) -> Option<&'static str> {
        None
    }
    /// A line added to a successful `attach` result.
    fn attach_note(&self) -> Option<&'static str> {
        None
    }
    /// The `context` of `evaluate` requests: where the adapter runs a statement as well as an
    /// expression.
    fn evaluate_context(&self) -> &'static str {
        "watch"
    }
}

pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Whether `program` (not a directory) has the extension `ext`.
pub(crate) fn has_extension(program: &Path, ext: &str) -> bool {
    !program.is_dir() && program.extension().is_some_and(|x| x == ext)
}

/// The first of `names` found in `extra` directories, then on `$PATH`.
pub(crate) fn find_binary(root: &Path, extra: &[PathBuf], names: &[String]) -> Option<PathBuf> {
    for name in names {
        for d in extra {
            let p = d.join(name);
            if is_executable(&p) {
                return Some(p);
            }
        }
        if let Some(p) = process::resolve_binary(root, &[], &[name.as_str()]) {
            return Some(p);
        }
    }
    None
}

/// A private temporary directory, removed with everything in it when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub fn new() -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agent-dap-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(false)
            .create(&dir)?;
        Ok(Scratch(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
