//! `cargo xtask lint`: what CI checks before the tests — formatting, clippy, each facade
//! feature alone, the architecture tests, crates.io readiness, the docs and the generated files.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

use crate::{cargo, codegen, run};

/// The crates published on their own; every other member is `publish = false` (`lint` checks).
const PUBLISHED: &[&str] = &[
    "agent-tier",
    "agent-proc",
    "agent-rpc",
    "agent-files",
    "agent-lsp",
    "agent-astgrep",
    "agent-dap",
    "agent-kernel",
    "agent-ask",
    "agent-vibe",
    "agent-tools",
    "agent-tools-cli",
];

/// Everything CI checks before the tests: formatting, clippy, each facade feature alone,
/// packaging and docs (`publishing`), and the generated docs.
pub(crate) fn lint(root: &Path) -> Result<()> {
    run(cargo(root).args(["fmt", "--all", "--check"]))?;
    run(cargo(root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    for feature in [
        "files", "lsp", "astgrep", "dap", "kernel", "ask", "vibe", "full",
    ] {
        run(cargo(root).args([
            "check",
            "-q",
            "-p",
            "agent-tools",
            "--no-default-features",
            "--features",
            feature,
        ]))?;
    }
    run(cargo(root).args(["check", "-q", "-p", "agent-tools", "--no-default-features"]))?;
    // The layering and room invariants of docs/ARCHITECTURE.md.
    run(cargo(root).args(["test", "-q", "-p", "xtask", "--test", "architecture"]))?;
    publishing(root)?;
    codegen::codegen(root, true)
}

/// The workspace's `[profile.dev]`, which `publishing` checks the packages under.
const PROFILE_DEV_DEBUG: &str = "[profile.dev]\ndebug = \"line-tables-only\"";
const PROFILE_DEV_DEPS_OPT: &str = "[profile.dev.package.\"*\"]\nopt-level = 1";

/// crates.io readiness: exactly the crates in [`PUBLISHED`] are publishable (xtask and the test
/// kit are `publish = false`); `cargo package --workspace` packages every crate, and each is
/// checked from its package ([`check_packages`]); and the docs of every crate build without a
/// warning.
fn publishing(root: &Path) -> Result<()> {
    let meta = cargo(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()?;
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout)?;
    for p in meta["packages"]
        .as_array()
        .context("cargo metadata: no packages")?
    {
        let name = p["name"].as_str().unwrap_or_default();
        // `publish`: null = anywhere, [] = nowhere
        let publishable = p["publish"].as_array().is_none_or(|r| !r.is_empty());
        if publishable != PUBLISHED.contains(&name) {
            bail!(
                "{name}: publishable is {publishable}, but PUBLISHED in xtask/src/lint.rs says {}",
                !publishable
            );
        }
    }
    // Checked under the workspace's own [profile.dev] (the packages' workspace has the default
    // profile otherwise), so that the dependencies it builds are the ones the other checks use:
    // compiled once on a fresh machine, not twice (docs/decisions.md).
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    for line in [PROFILE_DEV_DEBUG, PROFILE_DEV_DEPS_OPT] {
        if !manifest.contains(line) {
            bail!(
                "Cargo.toml's [profile.dev] no longer has `{line}`: update `publishing` in xtask"
            );
        }
    }
    run(cargo(root).args([
        "package",
        "--workspace",
        "--allow-dirty",
        "--quiet",
        "--no-verify",
    ]))?;
    check_packages(root, &meta)?;
    run(cargo(root)
        .args([
            "doc",
            "--no-deps",
            "--workspace",
            "--all-features",
            "--quiet",
        ])
        .env("RUSTDOCFLAGS", "-D warnings"))
}

/// Every published crate checked as cargo's verification of a package builds it, but without
/// code generation: the `.crate` files `cargo package` wrote are unpacked side by side under
/// `<target>/package-check` (the same folder each run, so the dependencies' artifacts are
/// reused), made one workspace whose `[patch.crates-io]` stands the unpacked packages in for the
/// registry, and `cargo check`ed with every feature under this workspace's `[profile.dev]` and
/// toolchain: a file a package leaves out, a dependency only a path gave, or a feature another
/// crate's package lacks fails here as it would on crates.io (docs/decisions.md, "crates.io").
fn check_packages(root: &Path, meta: &serde_json::Value) -> Result<()> {
    let target = PathBuf::from(
        meta["target_directory"]
            .as_str()
            .context("cargo metadata: no target_directory")?,
    );
    let packages: Vec<(String, String)> = meta["packages"]
        .as_array()
        .context("cargo metadata: no packages")?
        .iter()
        .filter_map(|p| {
            Some((
                p["name"].as_str()?.to_string(),
                p["version"].as_str()?.to_string(),
            ))
        })
        .filter(|(name, _)| PUBLISHED.contains(&name.as_str()))
        .collect();
    let check = target.join("package-check");
    if check.exists() {
        std::fs::remove_dir_all(&check).with_context(|| format!("removing {}", check.display()))?;
    }
    std::fs::create_dir_all(&check)?;
    let mut members = String::new();
    let mut patches = String::new();
    for (name, version) in &packages {
        let dir = format!("{name}-{version}");
        run(std::process::Command::new("tar")
            .arg("-xzf")
            .arg(target.join("package").join(format!("{dir}.crate")))
            .arg("-C")
            .arg(&check))?;
        members.push_str(&format!("  \"{dir}\",\n"));
        patches.push_str(&format!("{name} = {{ path = \"{dir}\" }}\n"));
    }
    std::fs::write(
        check.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [\n{members}]\n\n[patch.crates-io]\n{patches}\n{PROFILE_DEV_DEBUG}\n\n{PROFILE_DEV_DEPS_OPT}\n"
        ),
    )?;
    // The workspace's resolved versions, so the check compiles the dependencies the tests use.
    std::fs::copy(root.join("Cargo.lock"), check.join("Cargo.lock"))?;
    // The toolchain is found from the working directory (the workspace's, pinned); the
    // workspace's own `.cargo/config.toml` applies the same way.
    run(cargo(root)
        .args([
            "check",
            "--quiet",
            "--workspace",
            "--all-features",
            "--manifest-path",
        ])
        .arg(check.join("Cargo.toml")))
}
