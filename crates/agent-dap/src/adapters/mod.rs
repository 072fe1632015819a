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
}
