//! C, C++ and Rust: `lldb-dap` (or an older `lldb-vscode`) over stdio, with the Rust
//! toolchain's formatters loaded for a Rust program. Attaches to a gdb-remote server (such as
//! `lldb-server gdbserver`) through the adapter.

use super::kit::{Adapter, AttachVia, BoxFuture, Header, Launch, LaunchSpec, is_executable};
use crate::protocol::Configuration;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) struct Lldb;

impl Adapter for Lldb {
    fn name(&self) -> &'static str {
        "lldb"
    }

    fn markers(&self) -> &'static [&'static str] {
        &["Cargo.toml", "CMakeLists.txt"]
    }

    fn install(&self) -> &'static str {
        "apt install lldb-19"
    }

    fn binary_names(&self) -> Vec<String> {
        let mut v = vec!["lldb-dap".to_string()];
        v.extend((11..=30).rev().map(|n| format!("lldb-dap-{n}")));
        v.push("lldb-vscode".into());
        v.extend((6..=18).rev().map(|n| format!("lldb-vscode-{n}")));
        v
    }

    /// Any executable the more specific adapters did not claim.
    fn debugs(&self, program: &Path) -> bool {
        is_executable(program)
    }

    fn command_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn launch<'a>(&'a self, spec: &'a LaunchSpec<'a>) -> BoxFuture<'a, Launch> {
        Box::pin(async move {
            let init_commands = if is_rust_binary(spec.program, spec.marker)
                && let Some(etc) = rust_formatters(spec.prefix, spec.marker).await
            {
                Some(vec![
                    format!(
                        "command script import \"{}\"",
                        etc.join("lldb_lookup.py").display()
                    ),
                    format!(
                        "command source -s 1 \"{}\"",
                        etc.join("lldb_commands").display()
                    ),
                ])
            } else {
                None
            };
            Configuration::of(&LldbLaunch {
                header: Header::launch("lldb-dap"),
                program: spec.program.display().to_string(),
                args: spec.args,
                cwd: spec.cwd.display().to_string(),
                env: spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                stop_on_entry: false,
                init_commands,
            })
            .into()
        })
    }

    fn exception_filters(&self) -> &'static [&'static str] {
        &["cpp_catch", "cpp_throw", "objc_catch", "objc_throw"]
    }

    fn native_exception_stops(&self) -> Option<&'static str> {
        Some("a crash stops as a signal")
    }

    fn attach(&self, port: u16) -> Option<(Configuration, AttachVia)> {
        let arguments = Configuration::of(&LldbAttach {
            header: Header::attach("lldb-dap"),
            gdb_remote_port: port,
            gdb_remote_hostname: "127.0.0.1",
        });
        Some((arguments, AttachVia::Adapter))
    }
}

/// lldb-dap's `launch` configuration; `initCommands` load the Rust formatters.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LldbLaunch<'a> {
    #[serde(flatten)]
    header: Header,
    program: String,
    args: &'a [String],
    cwd: String,
    /// `KEY=VALUE` strings.
    env: Vec<String>,
    stop_on_entry: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    init_commands: Option<Vec<String>>,
}

/// lldb-dap's `attach` configuration: to a gdb-remote server on 127.0.0.1.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct LldbAttach {
    #[serde(flatten)]
    header: Header,
    gdb_remote_port: u16,
    gdb_remote_hostname: &'static str,
}

/// Whether an executable was built by rustc (std's source paths are in its debug info), or sits
/// in a Cargo project.
fn is_rust_binary(program: &Path, marker: &Path) -> bool {
    let stamp = b"/rustc/";
    let in_binary = std::fs::read(program)
        .map(|b| b.windows(stamp.len()).any(|w| w == stamp))
        .unwrap_or(false);
    in_binary || marker.join("Cargo.toml").exists()
}

/// The toolchain's `lib/rustlib/etc`, holding lldb's Rust formatters.
async fn rust_formatters(prefix: &[String], dir: &Path) -> Option<PathBuf> {
    let out = agent_proc::Command::new(&agent_proc::Launcher::prefixed(prefix), "rustc")
        .args(["--print", "sysroot"])
        .current_dir(dir)
        .output(Duration::from_secs(20))
        .await
        .ok()?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let etc = Path::new(&sysroot).join("lib/rustlib/etc");
    etc.join("lldb_lookup.py").exists().then_some(etc)
}
