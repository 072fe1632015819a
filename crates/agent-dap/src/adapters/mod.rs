//! The adapter table, call-time detection (root marker AND binary) and how each adapter is
//! started.

use crate::DapError;
use agent_proc::{Child, Launcher, Tail};
use agent_tier::doctor::DoctorEntry;
use agent_tier::process;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

/// A debug adapter this crate can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum AdapterId {
    /// Dart and Flutter: `dart debug_adapter`.
    Dart,
    /// Python: `<python> -m debugpy.adapter`.
    Debugpy,
    /// C, C++, Rust: `lldb-dap`.
    Lldb,
    /// Go: `dlv dap`.
    Delve,
}

impl AdapterId {
    /// Every adapter, in the order `adapters` lists them.
    pub const ALL: [AdapterId; 4] = [
        AdapterId::Dart,
        AdapterId::Debugpy,
        AdapterId::Lldb,
        AdapterId::Delve,
    ];

    /// The id as the model writes it.
    pub fn name(self) -> &'static str {
        match self {
            AdapterId::Dart => "dart",
            AdapterId::Debugpy => "debugpy",
            AdapterId::Lldb => "lldb",
            AdapterId::Delve => "delve",
        }
    }

    /// The root markers, any one of which makes a checkout this adapter's.
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            AdapterId::Dart => &["pubspec.yaml"],
            AdapterId::Debugpy => &["pyproject.toml", "setup.py", "requirements.txt"],
            AdapterId::Lldb => &["Cargo.toml", "CMakeLists.txt"],
            AdapterId::Delve => &["go.mod"],
        }
    }

    /// How to install the binary.
    pub fn install(self) -> &'static str {
        match self {
            AdapterId::Dart => "install the Dart SDK (https://dart.dev/get-dart)",
            AdapterId::Debugpy => "pip install debugpy (into the project's .venv)",
            AdapterId::Lldb => "apt install lldb-19",
            AdapterId::Delve => "apt install delve golang-go",
        }
    }
}

/// What call-time detection found for one adapter.
#[derive(Debug, Clone)]
pub(crate) struct Detected {
    pub id: AdapterId,
    /// The nearest directory (not above the root) holding a marker.
    pub marker: Option<PathBuf>,
    /// The adapter's program (for debugpy: the python that runs it).
    pub binary: Option<PathBuf>,
    /// Why the binary does not count although it exists (a python without debugpy).
    pub problem: Option<String>,
}

impl Detected {
    pub fn usable(&self) -> bool {
        self.marker.is_some() && self.binary.is_some() && self.problem.is_none()
    }

    /// Why it is not usable, or `None`.
    pub fn why_not(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.marker.is_none() {
            why.push(format!(
                "no root marker ({}) in the program's directory or above it up to the workspace root",
                self.id.markers().join(", ")
            ));
        }
        match (&self.binary, &self.problem) {
            (None, _) => why.push(format!(
                "{} not found (install: {})",
                binary_names(self.id)[0],
                self.id.install()
            )),
            (Some(_), Some(p)) => why.push(p.clone()),
            _ => {}
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    pub fn doctor(&self) -> DoctorEntry {
        DoctorEntry {
            family: "dap".to_string(),
            id: self.id.name().to_string(),
            marker: self.marker.clone(),
            markers: self.id.markers().iter().map(|m| m.to_string()).collect(),
            binary: if self.problem.is_some() {
                None
            } else {
                self.binary.clone()
            },
            install: self.id.install().to_string(),
        }
    }
}

fn binary_names(id: AdapterId) -> Vec<String> {
    match id {
        AdapterId::Dart => vec!["dart".into()],
        AdapterId::Debugpy => vec!["python3".into()],
        AdapterId::Delve => vec!["dlv".into()],
        AdapterId::Lldb => {
            let mut v = vec!["lldb-dap".to_string()];
            v.extend((11..=30).rev().map(|n| format!("lldb-dap-{n}")));
            v.push("lldb-vscode".into());
            v.extend((6..=18).rev().map(|n| format!("lldb-vscode-{n}")));
            v
        }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The first of `names` found in `extra` directories, then on `$PATH`.
fn find_binary(root: &Path, extra: &[PathBuf], names: &[String]) -> Option<PathBuf> {
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

/// The python that runs debugpy: the project's `.venv/bin/python`, else `venv/bin/python`
/// (looked up in the marker directory, then the workspace root), else `python3` on `$PATH`.
fn find_python(root: &Path, marker: Option<&Path>, extra: &[PathBuf]) -> Option<PathBuf> {
    let mut dirs: Vec<&Path> = Vec::new();
    if let Some(m) = marker {
        dirs.push(m);
    }
    dirs.push(root);
    for d in dirs {
        for venv in [".venv", "venv"] {
            let p = d.join(venv).join("bin").join("python");
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    find_binary(root, extra, &["python3".to_string()])
}

/// A python inside a virtual environment without `debugpy` in its site-packages cannot run the
/// adapter; one outside a venv is given the benefit of the doubt (the launch error says more).
fn debugpy_problem(python: &Path) -> Option<String> {
    let prefix = python.parent()?.parent()?;
    if !prefix.join("pyvenv.cfg").exists() {
        return None;
    }
    let has = [prefix.join("lib"), prefix.join("lib64")]
        .iter()
        .filter_map(|lib| std::fs::read_dir(lib).ok())
        .flatten()
        .flatten()
        .any(|e| e.path().join("site-packages").join("debugpy").is_dir());
    (!has).then(|| {
        format!(
            "{} has no debugpy (install: {} -m pip install debugpy)",
            python.display(),
            python.display()
        )
    })
}

/// Detect one adapter for a program at `start` inside `root`.
pub(crate) fn detect(id: AdapterId, root: &Path, start: &Path, extra: &[PathBuf]) -> Detected {
    let marker = process::find_root_marker(root, start, id.markers());
    let (binary, problem) = match id {
        AdapterId::Debugpy => {
            let py = find_python(root, marker.as_deref(), extra);
            let problem = py.as_deref().and_then(debugpy_problem);
            (py, problem)
        }
        _ => (find_binary(root, extra, &binary_names(id)), None),
    };
    Detected {
        id,
        marker,
        binary,
        problem,
    }
}

/// Which adapter debugs `program`: by extension, a Go build-info stamp, or a directory of Go
/// code; any other executable goes to lldb.
pub(crate) fn infer(program: &Path) -> Result<AdapterId, String> {
    if program.is_dir() {
        let has_go = std::fs::read_dir(program)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "go"))
            })
            .unwrap_or(false);
        if has_go || program.join("go.mod").exists() {
            return Ok(AdapterId::Delve);
        }
        return Err("it is a directory without Go sources".into());
    }
    match program.extension().and_then(|e| e.to_str()) {
        Some("py") => return Ok(AdapterId::Debugpy),
        Some("dart") => return Ok(AdapterId::Dart),
        Some("go") => return Ok(AdapterId::Delve),
        _ => {}
    }
    if is_executable(program) {
        let bytes = std::fs::read(program).unwrap_or_default();
        let stamp = b"\xff Go buildinf:";
        if bytes.windows(stamp.len()).any(|w| w == stamp) {
            return Ok(AdapterId::Delve);
        }
        return Ok(AdapterId::Lldb);
    }
    Err("it is neither a .py/.dart/.go file, a Go package directory nor an executable".into())
}

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

fn spawn_err(id: AdapterId, command: &str, detail: impl Into<String>) -> DapError {
    DapError::Spawn {
        adapter: id.name(),
        command: command.to_string(),
        detail: detail.into(),
    }
}

/// Start the adapter `id` whose program is `binary`, with its working directory `cwd`.
pub(crate) async fn start(
    id: AdapterId,
    binary: &Path,
    prefix: &[String],
    cwd: &Path,
    connect_timeout: Duration,
) -> Result<Started, DapError> {
    let args: Vec<&str> = match id {
        AdapterId::Debugpy => vec!["-m", "debugpy.adapter"],
        AdapterId::Lldb => vec![],
        AdapterId::Delve => vec!["dap", "--listen", "127.0.0.1:0"],
        AdapterId::Dart => vec!["debug_adapter"],
    };
    let command = std::iter::once(binary.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let launcher = Launcher::prefixed(prefix);
    let mut cmd = agent_proc::Command::new(&launcher, binary)
        .args(&args)
        .current_dir(cwd);
    if id != AdapterId::Delve {
        cmd = cmd.stdin_piped();
    }
    let child = cmd
        .spawn()
        .await
        .map_err(|e| spawn_err(id, &command, e.to_string()))?;
    let stderr = child.stderr();
    let owns_reported_pids = launcher.owns_reported_pids();
    // Invariant: agent-proc pipes stdout, and stdin was piped above for stdio adapters.
    let stdout = child
        .take_stdout()
        .ok_or_else(|| spawn_err(id, &command, "no stdout pipe"))?;
    if id != AdapterId::Delve {
        let stdin = child
            .take_stdin()
            .ok_or_else(|| spawn_err(id, &command, "no stdin pipe"))?;
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
    // Delve: TCP only. Its first stdout line names the port.
    let mut lines = BufReader::new(stdout);
    let port = tokio::time::timeout(connect_timeout, async {
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Some(rest) = line.split("DAP server listening at:").nth(1) {
                return rest.trim().rsplit(':').next()?.parse::<u16>().ok();
            }
        }
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| {
        spawn_err(
            id,
            &command,
            format!(
                "it did not print `DAP server listening at:` within {} s; stderr: {}",
                connect_timeout.as_secs(),
                stderr.text().trim()
            ),
        )
    })?;
    let stream = connect(port, connect_timeout)
        .await
        .map_err(|e| spawn_err(id, &command, e))?;
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

/// Connect to a DAP server on 127.0.0.1 (retrying while it comes up).
pub(crate) async fn connect(port: u16, timeout: Duration) -> Result<tokio::net::TcpStream, String> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(s) => return Ok(s),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(format!("cannot connect to 127.0.0.1:{port}: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
