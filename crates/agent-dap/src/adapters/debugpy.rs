//! Python: `<python> -m debugpy.adapter` over stdio; the python is the project's virtual
//! environment's when it has one. Attaches to `python -m debugpy --listen PORT` directly.

use super::kit::{Adapter, AttachVia, BoxFuture, Launch, LaunchSpec, find_binary, has_extension};
use serde_json::{Value, json};
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
            json!({
                "name": "agent-dap", "type": "python", "request": "launch",
                "program": spec.program.display().to_string(), "args": spec.args,
                "cwd": spec.cwd.display().to_string(), "env": spec.env,
                "python": [spec.binary.display().to_string()],
                "console": "internalConsole", "redirectOutput": true, "subProcess": false,
                "justMyCode": true, "stopOnEntry": false,
            })
            .into()
        })
    }

    fn attach(&self, _port: u16) -> Option<(Value, AttachVia)> {
        let arguments = json!({
            "name": "agent-dap", "type": "python", "request": "attach",
            "justMyCode": true, "redirectOutput": true, "subProcess": false,
        });
        Some((arguments, AttachVia::DapServer))
    }

    fn evaluate_context(&self) -> &'static str {
        "repl"
    }
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
