//! The adapter table, call-time detection (root marker AND binary) and which adapter debugs a
//! program. Each adapter — how it is found, started, and what it is told to launch or attach —
//! is one file implementing [`kit::Adapter`]; `spawn` starts them.

mod dart;
mod debugpy;
mod delve;
mod kit;
mod lldb;
mod spawn;

pub(crate) use kit::{Adapter, AttachVia, LaunchSpec, Scratch};
pub(crate) use spawn::{Started, connect_server, start};

use agent_tier::doctor::DoctorEntry;
use agent_tier::process;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

    /// The adapter behind the id: the one table from id to implementation.
    pub(crate) fn adapter(self) -> &'static dyn Adapter {
        match self {
            AdapterId::Dart => &dart::Dart,
            AdapterId::Debugpy => &debugpy::Debugpy,
            AdapterId::Lldb => &lldb::Lldb,
            AdapterId::Delve => &delve::Delve,
        }
    }

    /// The id as the model writes it.
    pub fn name(self) -> &'static str {
        self.adapter().name()
    }

    /// The root markers, any one of which makes a checkout this adapter's.
    pub fn markers(self) -> &'static [&'static str] {
        self.adapter().markers()
    }

    /// How to install the binary.
    pub fn install(self) -> &'static str {
        self.adapter().install()
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
                self.id.adapter().binary_names()[0],
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

/// Detect one adapter for a program at `start` inside `root`.
pub(crate) fn detect(id: AdapterId, root: &Path, start: &Path, extra: &[PathBuf]) -> Detected {
    let marker = process::find_root_marker(root, start, id.markers());
    let (binary, problem) = id.adapter().find(root, marker.as_deref(), extra);
    Detected {
        id,
        marker,
        binary,
        problem,
    }
}

/// Why no adapter debugs a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Undebuggable {
    #[error("it is a directory without Go sources")]
    DirectoryWithoutGo,
    #[error("it is neither a .py/.dart/.go file, a Go package directory nor an executable")]
    UnknownKind,
}

/// Which adapter debugs `program`: by extension, a Go build-info stamp, or a directory of Go
/// code; any other executable goes to lldb.
pub(crate) fn infer(program: &Path) -> Result<AdapterId, Undebuggable> {
    // The most specific first: lldb takes any executable.
    let order = [
        AdapterId::Debugpy,
        AdapterId::Dart,
        AdapterId::Delve,
        AdapterId::Lldb,
    ];
    if let Some(id) = order.into_iter().find(|id| id.adapter().debugs(program)) {
        return Ok(id);
    }
    Err(if program.is_dir() {
        Undebuggable::DirectoryWithoutGo
    } else {
        Undebuggable::UnknownKind
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Which adapter `infer` picks for each kind of program (or why none).
    #[test]
    fn infer_picks_the_adapter_by_what_the_program_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |name: &str, bytes: &[u8], exec: bool| {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            let mode = if exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write("a.py", b"x = 1", false);
        write("b.dart", b"void main() {}", false);
        write("c.go", b"package main", false);
        write("pkg/main.go", b"package main", false);
        write("gobin", b"\x7fELF...\xff Go buildinf:...", true);
        write("native", b"\x7fELF...", true);
        write("notes.txt", b"", false);
        std::fs::create_dir(root.join("empty")).unwrap();
        let cases = [
            ("a.py", "debugpy"),
            ("b.dart", "dart"),
            ("c.go", "delve"),
            ("pkg", "delve"),
            ("gobin", "delve"),
            ("native", "lldb"),
            ("empty", "it is a directory without Go sources"),
            (
                "notes.txt",
                "it is neither a .py/.dart/.go file, a Go package directory nor an executable",
            ),
        ];
        for (program, expect) in cases {
            let got = match infer(&root.join(program)) {
                Ok(id) => id.name().to_string(),
                Err(why) => why.to_string(),
            };
            assert_eq!(got, expect, "{program}");
        }
    }

    #[test]
    fn dart_is_the_one_adapter_that_cannot_attach() {
        let can: Vec<&str> = AdapterId::ALL
            .iter()
            .filter(|id| id.adapter().attach(5678).is_some())
            .map(|id| id.name())
            .collect();
        assert_eq!(can, ["debugpy", "lldb", "delve"]);
    }

    /// What each adapter is told to launch and attach: the configuration each adapter's file
    /// declares, as the request carries it.
    #[tokio::test]
    async fn each_adapter_is_told_its_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("prog");
        let (args, env) = (
            vec!["-v".to_string()],
            std::collections::BTreeMap::from([("K".to_string(), "V".to_string())]),
        );
        // Behind a sandbox prefix: no scratch directories, so nothing varies.
        let prefix = vec!["sandbox".to_string()];
        let spec = |module: Option<&'static str>, test: bool| LaunchSpec {
            program: &program,
            module,
            test,
            args: &args,
            cwd: dir.path(),
            env: &env,
            binary: Path::new("/venv/bin/python"),
            marker: dir.path(),
            prefix: &prefix,
        };
        let root = dir.path().display().to_string();
        let shown =
            |c: &crate::protocol::Configuration| c.json().to_string().replace(&root, "[root]");
        let cases = [
            (
                shown(
                    &AdapterId::Debugpy
                        .adapter()
                        .launch(&spec(None, false))
                        .await
                        .arguments,
                ),
                r#"{"args":["-v"],"console":"internalConsole","cwd":"[root]","env":{"K":"V"},"justMyCode":true,"name":"agent-dap","program":"[root]/prog","python":["/venv/bin/python"],"redirectOutput":true,"request":"launch","stopOnEntry":false,"subProcess":false,"type":"python"}"#,
            ),
            (
                shown(
                    &AdapterId::Debugpy
                        .adapter()
                        .launch(&spec(Some("pkg.main"), false))
                        .await
                        .arguments,
                ),
                r#"{"args":["-v"],"console":"internalConsole","cwd":"[root]","env":{"K":"V"},"justMyCode":true,"module":"pkg.main","name":"agent-dap","python":["/venv/bin/python"],"redirectOutput":true,"request":"launch","stopOnEntry":false,"subProcess":false,"type":"python"}"#,
            ),
            (
                shown(
                    &AdapterId::Lldb
                        .adapter()
                        .launch(&spec(None, false))
                        .await
                        .arguments,
                ),
                r#"{"args":["-v"],"cwd":"[root]","env":["K=V"],"name":"agent-dap","program":"[root]/prog","request":"launch","stopOnEntry":false,"type":"lldb-dap"}"#,
            ),
            (
                shown(
                    &AdapterId::Delve
                        .adapter()
                        .launch(&spec(None, true))
                        .await
                        .arguments,
                ),
                r#"{"args":["-v"],"cwd":"[root]","env":{"K":"V"},"mode":"test","name":"agent-dap","outputMode":"remote","program":"[root]/prog","request":"launch","stopOnEntry":false,"type":"go"}"#,
            ),
            (
                shown(
                    &AdapterId::Dart
                        .adapter()
                        .launch(&spec(None, false))
                        .await
                        .arguments,
                ),
                r#"{"args":["-v"],"console":"debugConsole","cwd":"[root]","env":{"K":"V"},"name":"agent-dap","program":"[root]/prog","request":"launch","type":"dart"}"#,
            ),
        ];
        for (got, expect) in cases {
            assert_eq!(got, expect);
        }
        let attach: Vec<String> = AdapterId::ALL
            .iter()
            .filter_map(|id| id.adapter().attach(5678))
            .map(|(c, _)| c.json().to_string())
            .collect();
        assert_eq!(
            attach,
            [
                r#"{"justMyCode":true,"name":"agent-dap","redirectOutput":true,"request":"attach","subProcess":false,"type":"python"}"#,
                r#"{"gdb-remote-hostname":"127.0.0.1","gdb-remote-port":5678,"name":"agent-dap","request":"attach","type":"lldb-dap"}"#,
                r#"{"mode":"remote","name":"agent-dap","request":"attach","type":"go"}"#,
            ]
        );
        // On the host, delve builds a package's binary in a scratch directory it is told of.
        let host = LaunchSpec {
            program: dir.path(),
            prefix: &[],
            ..spec(None, false)
        };
        let launch = AdapterId::Delve.adapter().launch(&host).await;
        let scratch = launch.scratch.expect("a scratch directory");
        assert_eq!(launch.arguments.json()["mode"], "debug");
        assert_eq!(
            launch.arguments.json()["output"],
            scratch.path().join("__debug_bin").display().to_string()
        );
    }
}
