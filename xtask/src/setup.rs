//! `cargo xtask setup`: every real program the tests use, installed idempotently — system
//! packages with `apt-get`, Python packages into `<workspace>/.tools/venv`, node packages into
//! `<workspace>/.tools/node`, `rust-analyzer` with rustup, and the Django corpus.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{run, tools_dir};

// bubblewrap: the sandbox standing in for a container in tests/sandbox_bwrap.rs; podman (with
// runc), debootstrap and kubectl: docs/deploy, built and parsed by tests/deploy.rs
const APT_PACKAGES: &[&str] = &[
    "clangd-19",
    "lldb-19",
    "golang-go",
    "gopls",
    "delve",
    "bubblewrap",
    "podman",
    "runc",
    "debootstrap",
    "kubernetes-client",
    "ripgrep",
];
/// (binary that proves the package is there, package)
const APT_PROBES: &[(&str, &str)] = &[
    ("clangd-19", "clangd-19"),
    ("lldb-dap-19", "lldb-19"),
    ("go", "golang-go"),
    ("gopls", "gopls"),
    ("dlv", "delve"),
    ("bwrap", "bubblewrap"),
    ("podman", "podman"),
    ("runc", "runc"),
    ("debootstrap", "debootstrap"),
    ("kubectl", "kubernetes-client"),
    ("rg", "ripgrep"),
];
const PIP_PACKAGES: &[&str] = &[
    "basedpyright",
    "python-lsp-server",
    "pyflakes",
    "ty",
    "debugpy",
    // `debug launch` with `module: "pytest"` runs a test under debugpy (crates/agent-dap tests)
    "pytest",
    "pandas",
    "matplotlib",
    "jupyter_client",
    "ipykernel",
    // the official MCP Python SDK: a real client of `agent-tools serve` (tests/clients)
    "mcp",
    // `cargo xtask dist` builds the wheel with maturin; the dist tests run it with uvx (uv)
    "maturin>=1.9,<2",
    "uv",
];
const NPM_PACKAGES: &[&str] = &[
    "pyright",
    "typescript-language-server",
    "typescript@6",
    "@ast-grep/cli@0.51",
    // the official MCP TypeScript SDK: a real client of `agent-tools serve` (tests/clients)
    "@modelcontextprotocol/sdk",
    // the agent clients people run, driven headless against a stand-in model
    // (tests/agent_clients.rs; tests/clients/agents/FINDINGS.md)
    "@anthropic-ai/claude-code@2.1.332",
    "@openai/codex@0.171.0",
    "@google/gemini-cli@0.61.0",
];

pub(crate) fn on_path(bin: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(bin))
        .find(|p| p.is_file())
}

fn step(name: &str, f: impl FnOnce() -> Result<String>) -> Result<()> {
    let t = Instant::now();
    let what = f().with_context(|| format!("setup step `{name}`"))?;
    println!(
        "setup: {name:<14} {:>6.1}s  {what}",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

pub(crate) fn setup(root: &Path) -> Result<()> {
    let tools = tools_dir(root);
    std::fs::create_dir_all(&tools)?;

    step("apt", || {
        let missing: Vec<&str> = APT_PROBES
            .iter()
            .filter(|(bin, _)| on_path(bin).is_none())
            .map(|(_, pkg)| *pkg)
            .collect();
        if missing.is_empty() {
            return Ok(format!("already installed: {}", APT_PACKAGES.join(" ")));
        }
        let sudo = if on_path("sudo").is_some() && !is_root() {
            vec!["sudo"]
        } else {
            vec![]
        };
        let apt = |args: &[&str]| {
            let mut c = Command::new(if sudo.is_empty() { "apt-get" } else { "sudo" });
            if !sudo.is_empty() {
                c.arg("apt-get");
            }
            c.args(args).env("DEBIAN_FRONTEND", "noninteractive");
            c
        };
        run(apt(&["update", "-q"]).stdout(Stdio::null()))?;
        // Only what is missing: a kubectl from another source must not meet kubernetes-client.
        let mut install = apt(&["install", "-y", "-q", "--no-install-recommends"]);
        install.args(&missing).stdout(Stdio::null());
        run(&mut install)?;
        Ok(format!("installed {} (system, apt-get)", missing.join(" ")))
    })?;

    step("pip", || {
        let venv = tools.join("venv");
        if !venv.join("bin/python").exists() {
            run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        }
        run(Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--disable-pip-version-check"])
            .args(PIP_PACKAGES))?;
        Ok(format!(
            "{} into {}",
            PIP_PACKAGES.join(" "),
            venv.display()
        ))
    })?;

    step("npm", || {
        let node = tools.join("node");
        std::fs::create_dir_all(&node)?;
        let pkg = node.join("package.json");
        if !pkg.exists() {
            std::fs::write(&pkg, "{\"private\": true}\n")?;
        }
        run(Command::new("npm")
            .current_dir(&node)
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .args(NPM_PACKAGES)
            .stdout(Stdio::null()))?;
        Ok(format!(
            "{} into {}",
            NPM_PACKAGES.join(" "),
            node.display()
        ))
    })?;

    step("rust-analyzer", || {
        // For the toolchain this workspace pins, and for the default one that fixtures outside
        // the workspace (temp dirs) get from the rustup proxy.
        run(Command::new("rustup")
            .current_dir(root)
            .args(["component", "add", "rust-analyzer"])
            .stderr(Stdio::null()))?;
        run(Command::new("rustup")
            .current_dir("/")
            .args(["component", "add", "rust-analyzer"])
            .stderr(Stdio::null()))?;
        Ok("rustup component rust-analyzer (pinned and default toolchains)".into())
    })?;

    step("django", || {
        // The cold-server witness tests (issue 22) run on a real project: Django's sdist, with
        // its tests (about 2,800 Python files).
        let corpora = tools.join("corpora");
        let dest = corpora.join(DJANGO_DIR);
        if dest.join("django/shortcuts.py").is_file() {
            return Ok(format!("already in {}", dest.display()));
        }
        std::fs::create_dir_all(&corpora)?;
        run(Command::new(tools.join("venv/bin/pip"))
            .args(["download", "-q", "--disable-pip-version-check", "--no-deps"])
            .args(["--no-binary", ":all:", DJANGO, "-d"])
            .arg(&corpora))?;
        run(Command::new("tar")
            .current_dir(&corpora)
            .args(["xzf", &format!("{DJANGO_DIR}.tar.gz")]))?;
        Ok(format!("{DJANGO} sdist into {}", dest.display()))
    })?;
    Ok(())
}

/// The Django release the witness tests run on, and the folder its sdist unpacks to.
const DJANGO: &str = "django==5.2.8";
pub(crate) const DJANGO_DIR: &str = "django-5.2.8";

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
