//! Go: `dlv dap` on a TCP port it announces on stdout (its stdout then carries the debuggee's
//! output). Debugs a package directory or its tests (built in a private scratch directory), a
//! `.go` file or a Go binary; attaches to a headless `dlv --headless --accept-multiclient` directly.

use super::kit::{
    Adapter, AttachVia, BoxFuture, Header, Launch, LaunchSpec, Scratch, Transport, has_extension,
    is_executable,
};
use crate::protocol::Configuration;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) struct Delve;

impl Adapter for Delve {
    fn name(&self) -> &'static str {
        "delve"
    }

    fn markers(&self) -> &'static [&'static str] {
        &["go.mod"]
    }

    fn install(&self) -> &'static str {
        "apt install delve golang-go"
    }

    fn binary_names(&self) -> Vec<String> {
        vec!["dlv".into()]
    }

    /// A directory of Go code, a `.go` file, or an executable carrying Go's build-info stamp.
    fn debugs(&self, program: &Path) -> bool {
        if program.is_dir() {
            let has_go = std::fs::read_dir(program)
                .map(|rd| {
                    rd.flatten()
                        .any(|e| e.path().extension().is_some_and(|x| x == "go"))
                })
                .unwrap_or(false);
            return has_go || program.join("go.mod").exists();
        }
        if has_extension(program, "go") {
            return true;
        }
        if !is_executable(program) {
            return false;
        }
        let bytes = std::fs::read(program).unwrap_or_default();
        let stamp = b"\xff Go buildinf:";
        bytes.windows(stamp.len()).any(|w| w == stamp)
    }

    fn command_args(&self) -> &'static [&'static str] {
        &["dap", "--listen", "127.0.0.1:0"]
    }

    fn transport(&self) -> Transport {
        Transport::AnnouncedPort {
            marker: "DAP server listening at:",
        }
    }

    fn launch<'a>(&'a self, spec: &'a LaunchSpec<'a>) -> BoxFuture<'a, Launch> {
        Box::pin(async move {
            let package = spec.program.is_dir();
            // Delve builds a package as `__debug_bin…` in the package directory and leaves it
            // there when it is killed: build it in a private temporary directory instead (on
            // the host only; behind a sandbox prefix that directory may not exist).
            let scratch = if package && spec.prefix.is_empty() {
                Scratch::new().ok()
            } else {
                None
            };
            let arguments = Configuration::of(&DelveLaunch {
                header: Header::launch("go"),
                mode: match (spec.test, package) {
                    (true, _) => "test",
                    (false, true) => "debug",
                    (false, false) => "exec",
                },
                program: spec.program.display().to_string(),
                args: spec.args,
                cwd: spec.cwd.display().to_string(),
                env: spec.env,
                output_mode: "remote",
                stop_on_entry: false,
                output: scratch
                    .as_ref()
                    .map(|dir| dir.path().join("__debug_bin").display().to_string()),
            });
            Launch {
                arguments,
                scratch,
                adapter_env: Vec::new(),
            }
        })
    }

    fn attach(&self, _port: u16) -> Option<(Configuration, AttachVia)> {
        let arguments = Configuration::of(&DelveAttach {
            header: Header::attach("go"),
            mode: "remote",
        });
        Some((arguments, AttachVia::DapServer))
    }

    fn exception_filters(&self) -> &'static [&'static str] {
        &[]
    }

    fn native_exception_stops(&self) -> Option<&'static str> {
        Some("stops on an unrecovered panic")
    }

    fn attach_note(&self) -> Option<&'static str> {
        Some("(delve: connected to the headless server on that port)")
    }
}

/// delve's `launch` configuration: a package (`debug`), its tests (`test`) or a binary
/// (`exec`); the debuggee's output on delve's own stdout (`remote`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DelveLaunch<'a> {
    #[serde(flatten)]
    header: Header,
    mode: &'static str,
    program: String,
    args: &'a [String],
    cwd: String,
    env: &'a BTreeMap<String, String>,
    output_mode: &'static str,
    stop_on_entry: bool,
    /// Where a package's binary is built.
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

/// delve's `attach` configuration: to a headless server (`remote`).
#[derive(Serialize)]
struct DelveAttach {
    #[serde(flatten)]
    header: Header,
    mode: &'static str,
}
