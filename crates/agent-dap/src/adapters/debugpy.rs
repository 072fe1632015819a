//! Python: `<python> -m debugpy.adapter` over stdio; the python is the project's virtual
//! environment's when it has one. Attaches to `python -m debugpy --listen PORT` directly.

use super::kit::Header;
use super::kit::{
    Adapter, AttachVia, BoxFuture, Launch, LaunchSpec, Scratch, find_binary, has_extension,
};
use crate::protocol::Configuration;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) struct Debugpy;

impl Adapter for Debugpy {
    fn name(&self) -> &'static str {
        "debugpy"
    }

    fn markers(&self) -> &'static [&'static str] {
        &["pyproject.toml", "setup.py", "requirements.txt"]
    }

    fn install(&self) -> &'static str {
        "pip install debugpy (into the project's .venv)"
    }

    fn binary_names(&self) -> Vec<String> {
        vec!["python3".into()]
    }

    fn find(
        &self,
        root: &Path,
        marker: Option<&Path>,
        extra: &[PathBuf],
    ) -> (Option<PathBuf>, Option<String>) {
        let py = find_python(root, marker, extra);
        let problem = py.as_deref().and_then(debugpy_problem);
        (py, problem)
    }

    fn debugs(&self, program: &Path) -> bool {
        has_extension(program, "py")
    }

    fn command_args(&self) -> &'static [&'static str] {
        &["-m", "debugpy.adapter"]
    }

    fn launch<'a>(&'a self, spec: &'a LaunchSpec<'a>) -> BoxFuture<'a, Launch> {
        Box::pin(async move {
            let mut env = spec.env.clone();
            // On the host only: behind a sandbox prefix the scratch directory may not exist.
            let scratch = if spec.prefix.is_empty() {
                nodelay_site(&mut env)
            } else {
                None
            };
            // The adapter's end of the socket too (it runs no project code).
            let adapter_env = match &scratch {
                Some(dir) => {
                    let ours = dir.path().display().to_string();
                    let path = match std::env::var("PYTHONPATH") {
                        Ok(rest) if !rest.is_empty() => format!("{ours}:{rest}"),
                        _ => ours,
                    };
                    vec![("PYTHONPATH".into(), path)]
                }
                None => Vec::new(),
            };
            let (module, program) = match spec.module {
                Some(m) => (Some(m), None),
                None => (None, Some(spec.program.display().to_string())),
            };
            let arguments = Configuration::of(&DebugpyLaunch {
                header: Header::launch("python"),
                module,
                program,
                args: spec.args,
                cwd: spec.cwd.display().to_string(),
                env,
                python: [spec.binary.display().to_string()],
                console: "internalConsole",
                options: DebugpyOptions::ours(),
                stop_on_entry: false,
            });
            Launch {
                arguments,
                scratch,
                adapter_env,
            }
        })
    }

    fn attach(&self, _port: u16) -> Option<(Configuration, AttachVia)> {
        let arguments = Configuration::of(&DebugpyAttach {
            header: Header::attach("python"),
            options: DebugpyOptions::ours(),
        });
        Some((arguments, AttachVia::DapServer))
    }

    fn exception_filters(&self) -> &'static [&'static str] {
        &["raised", "uncaught", "userUnhandled"]
    }

    fn evaluate_context(&self) -> &'static str {
        "repl"
    }
}

/// debugpy's `launch` configuration: a `module` or a `program`, run by `python`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DebugpyLaunch<'a> {
    #[serde(flatten)]
    header: Header,
    #[serde(skip_serializing_if = "Option::is_none")]
    module: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<String>,
    args: &'a [String],
    cwd: String,
    env: BTreeMap<String, String>,
    python: [String; 1],
    /// Output as `output` events (not a terminal).
    console: &'static str,
    #[serde(flatten)]
    options: DebugpyOptions,
    stop_on_entry: bool,
}

/// debugpy's `attach` configuration (to `python -m debugpy --listen PORT`).
#[derive(Serialize)]
struct DebugpyAttach {
    #[serde(flatten)]
    header: Header,
    #[serde(flatten)]
    options: DebugpyOptions,
}

/// What launching and attaching both say: the project's code only, its output redirected to
/// `output` events, no child processes debugged.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DebugpyOptions {
    just_my_code: bool,
    redirect_output: bool,
    sub_process: bool,
}

impl DebugpyOptions {
    fn ours() -> Self {
        DebugpyOptions {
            just_my_code: true,
            redirect_output: true,
            sub_process: false,
        }
    }
}

/// The `sitecustomize` that sets `TCP_NODELAY` on the debuggee's sockets, then chains to the
/// project's own `sitecustomize`, if any.
const NODELAY_SITE: &str = include_str!("nodelay_sitecustomize.py");

/// Put [`NODELAY_SITE`] in a private scratch directory prepended to the debuggee's
/// `PYTHONPATH` (the one the model passed, else the inherited one).
///
/// debugpy's adapter and the debuggee (pydevd) talk over a local TCP socket on which pydevd
/// leaves Nagle's algorithm on: a stop's small messages then wait for delayed ACKs, and a step
/// takes ~88 ms instead of ~3 ms. The debuggee's side is the one that matters (the adapter's
/// alone does not help; both is a little faster than the debuggee's alone); the project's files
/// are never touched. Without a scratch directory the launch goes on untreated.
fn nodelay_site(env: &mut BTreeMap<String, String>) -> Option<Scratch> {
    let dir = Scratch::new().ok()?;
    std::fs::write(dir.path().join("sitecustomize.py"), NODELAY_SITE).ok()?;
    let inherited = env
        .get("PYTHONPATH")
        .cloned()
        .or_else(|| std::env::var("PYTHONPATH").ok())
        .filter(|p| !p.is_empty());
    let ours = dir.path().display().to_string();
    let path = match inherited {
        Some(rest) => format!("{ours}:{rest}"),
        None => ours,
    };
    env.insert("PYTHONPATH".into(), path);
    Some(dir)
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
            if super::kit::is_executable(&p) {
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
