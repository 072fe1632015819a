//! Go: `dlv dap` on a TCP port it announces on stdout (its stdout then carries the debuggee's
//! output). Debugs a package directory or its tests (built in a private scratch directory), a
//! `.go` file or a Go binary; attaches to a headless `dlv --headless --accept-multiclient` directly.

use super::kit::{
    Adapter, AttachVia, BoxFuture, Launch, LaunchSpec, Scratch, Transport, has_extension,
    is_executable,
};
use serde_json::{Value, json};
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
            let mut a = json!({
                "name": "agent-dap", "type": "go", "request": "launch",
                "mode": match (spec.test, package) {
                    (true, _) => "test",
                    (false, true) => "debug",
                    (false, false) => "exec",
                },
                "program": spec.program.display().to_string(), "args": spec.args,
                "cwd": spec.cwd.display().to_string(), "env": spec.env,
                "outputMode": "remote", "stopOnEntry": false,
            });
            // Delve builds a package as `__debug_bin…` in the package directory and leaves it
            // there when it is killed: build it in a private temporary directory instead (on
            // the host only; behind a sandbox prefix that directory may not exist).
            let mut scratch = None;
            if package
                && spec.prefix.is_empty()
                && let Ok(dir) = Scratch::new()
            {
                a["output"] = json!(dir.path().join("__debug_bin").display().to_string());
                scratch = Some(dir);
            }
            Launch {
                arguments: a,
                scratch,
                adapter_env: Vec::new(),
            }
        })
    }

    fn attach(&self, _port: u16) -> Option<(Value, AttachVia)> {
        let arguments = json!({
            "name": "agent-dap", "type": "go", "request": "attach", "mode": "remote",
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
