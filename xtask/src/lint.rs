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

/// The workspace's `[profile.dev]`, which `publishing` verifies the packages under.
const PROFILE_DEV_DEBUG: &str = "[profile.dev]\ndebug = \"line-tables-only\"";
const PROFILE_DEV_DEPS_OPT: &str = "[profile.dev.package.\"*\"]\nopt-level = 1";

/// crates.io readiness: exactly the crates in [`PUBLISHED`] are publishable (xtask and the test
/// kit are `publish = false`); `cargo package --workspace` packages every crate and builds each
/// from its package, the workspace's unpublished crates standing in for the registry; and the
/// docs of every crate build without a warning.
/// `cargo package --workspace` verifies each package against the others through a local registry
/// that it extracts under `$CARGO_HOME/registry/src/-<hash>/`; an extracted `NAME-VERSION` folder
/// is reused as long as it exists, so after a change that kept the version the verification
/// compiled the code of an earlier run (seen: agent-ask verified against agent-tier as it was
/// hours before). Our own packages' extracted folders are removed first, so each run verifies
/// what is in the tree. Cargo also never rebuilds a registry package whose version it has built
/// (it takes them as immutable): our packages' fingerprints under the target's `debug` go too
/// (seen: agent-tools-cli verified against an agent-astgrep built before its change), so they
/// are compiled again; on a fresh target there is nothing to remove.
fn forget_extracted_packages(meta: &serde_json::Value) -> Result<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let ours: Vec<String> = meta["packages"]
        .as_array()
        .context("cargo metadata: no packages")?
        .iter()
        .filter_map(|p| {
            Some(format!(
                "{}-{}",
                p["name"].as_str()?,
                p["version"].as_str()?
            ))
        })
        .collect();
    if let Some(target) = meta["target_directory"].as_str() {
        let fingerprints = Path::new(target).join("debug/.fingerprint");
        let names: Vec<String> = meta["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some(format!("{}-", p["name"].as_str()?)))
            .collect();
        if let Ok(entries) = std::fs::read_dir(&fingerprints) {
            for entry in entries.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                // `NAME-<16 hex digits>`: the hash alone after our package's name.
                let ours = names.iter().any(|n| {
                    file.strip_prefix(n.as_str())
                        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                });
                if ours {
                    std::fs::remove_dir_all(entry.path()).with_context(|| {
                        format!("removing the fingerprint {}", entry.path().display())
                    })?;
                }
            }
        }
    }
    let Ok(registries) = std::fs::read_dir(home.join("registry/src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        // Local registries are named `-<hash>`; crates.io's `index.crates.io-<hash>` is left alone.
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for name in &ours {
            let dir = registry.path().join(name);
            if dir.is_dir() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing the stale {}", dir.display()))?;
            }
        }
    }
    Ok(())
}

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
    // Verified under the workspace's own [profile.dev] (cargo builds each package as a workspace
    // of its own, with the default profile otherwise), so that the dependencies it builds are the
    // ones the tests use: compiled once on a fresh machine, not twice (docs/decisions.md).
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    for line in [PROFILE_DEV_DEBUG, PROFILE_DEV_DEPS_OPT] {
        if !manifest.contains(line) {
            bail!(
                "Cargo.toml's [profile.dev] no longer has `{line}`: update `publishing` in xtask"
            );
        }
    }
    forget_extracted_packages(&meta)?;
    run(cargo(root).args([
        "package",
        "--workspace",
        "--allow-dirty",
        "--quiet",
        "--config",
        "profile.dev.debug=\"line-tables-only\"",
        "--config",
        "profile.dev.package.\"*\".opt-level=1",
    ]))?;
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
