//! `cargo xtask` — the project's own automation: `setup`, `test`, `ci`, `dist`, `codegen`, `bench`.
//! This file routes a command to the module of its job and holds what they share: the
//! workspace's paths, a `cargo` with the installed programs in front, and the host binary.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

mod bench;
mod bench_astgrep_rss;
mod bench_calls;
mod bench_hostile;
mod bench_http;
mod bench_kernel;
mod bench_scale;
mod bench_servers;
mod codegen;
mod dist;
mod lint;
mod parallel;
mod setup;
mod stdio_host;
mod suite;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("setup") => setup::setup(&root),
        // `test` runs `setup` itself, while the tests compile.
        Some("test") => suite::test(&root, suite::Run::parse(&args[1..])?),
        Some("dist") => dist::main(&root, &args[1..]),
        Some("lint") => lint::lint(&root),
        Some("ci") => {
            lint::lint(&root)?;
            suite::test(&root, suite::Run::parse(&[])?)
        }
        Some("codegen") => codegen::codegen(&root, args.iter().any(|a| a == "--check")),
        Some("bench") => bench::bench(&root, args.get(1).map(String::as_str).unwrap_or("all")),
        _ => {
            eprintln!(
                "usage: cargo xtask <setup | test [--long] [--jobs N] [cargo test args] | lint | ci | dist [--dev|--release] [--out DIR] | codegen [--check] | bench [host|calls|astgrep|lsp|dap|kernel|all|scale]>"
            );
            std::process::exit(2)
        }
    }
}

fn workspace_root() -> PathBuf {
    // `cargo xtask` is `cargo run -p xtask`, which sets CARGO_MANIFEST_DIR for this run. The
    // compile-time value names the checkout that built the binary: two checkouts sharing one
    // CARGO_TARGET_DIR reuse the same binary (cargo's fingerprint does not depend on where the
    // sources are), and the other checkout's `.tools` and sources would be used.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

fn tools_dir(root: &Path) -> PathBuf {
    root.join(".tools")
}

/// PATH with the project-local tool folders in front.
fn test_path(root: &Path) -> String {
    let t = tools_dir(root);
    format!(
        "{}:{}:{}",
        t.join("venv/bin").display(),
        t.join("node/node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

fn cargo(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root)
        .env("PATH", test_path(root))
        .env("AGENT_TOOLS_VENV", tools_dir(root).join("venv"))
        .env(
            "AGENT_TOOLS_DJANGO",
            tools_dir(root).join("corpora").join(setup::DJANGO_DIR),
        )
        .env("AGENT_TOOLS_REQUIRE_REAL", "1");
    c
}

fn host_binary(root: &Path, release: bool) -> Result<PathBuf> {
    let mut c = cargo(root);
    c.args(["build", "-q", "-p", "agent-tools-cli"]);
    if release {
        c.arg("--release");
    }
    run(&mut c)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target
        .join(if release { "release" } else { "debug" })
        .join("agent-tools"))
}
