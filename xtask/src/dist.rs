//! `cargo xtask dist` — the packages a user installs without a Rust toolchain, built from the
//! workspace into `<target>/dist` (or `--out DIR`):
//!
//! - `pypi/`: the wheel of `dist/pypi/pyproject.toml`, maturin with `bindings = "bin"` (as ruff
//!   and uv ship theirs): the `agent-tools` binary in `*.data/scripts`, so `pip install` puts it
//!   on the venv's PATH and `uvx --from agent-tools-cli agent-tools serve` runs it. With
//!   `--release` also the sdist.
//! - `npm/`: `agent-tools-cli-VERSION.tgz`, the launcher (`dist/npm/agent-tools-cli`: a `bin`
//!   script that runs the platform's binary), and one `agent-tools-cli-OS-CPU-VERSION.tgz` per
//!   platform built (its `os`/`cpu`/`libc` fields let npm install only the matching one from the
//!   launcher's `optionalDependencies`, the esbuild / biome pattern). Every platform is listed in
//!   the launcher; a platform is built when its rust target is installed (the host's always is).
//! - `manifest.json`: the version and the paths of what was built, which the dist tests read.
//!
//! The binary of the npm package is taken out of the wheel, so both registries ship the same
//! bytes. `--dev` builds with cargo's dev profile (what `cargo xtask test` uses: a release build
//! of the host takes minutes on two cores, docs/decisions.md "Distribution builds in CI").

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Every platform the npm launcher lists: (npm suffix, node `os`, node `cpu`, rust target). The
/// host is Linux-only (`prctl(PR_SET_PDEATHSIG)`, `/proc`, bubblewrap), so no macOS or Windows.
pub(crate) const PLATFORMS: &[(&str, &str, &str, &str)] = &[
    ("linux-x64", "linux", "x64", "x86_64-unknown-linux-gnu"),
    ("linux-arm64", "linux", "arm64", "aarch64-unknown-linux-gnu"),
];

/// The npm name of the launcher, and the prefix of every platform package.
const NPM_NAME: &str = "agent-tools-cli";

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    Dev,
    Release,
}

/// `cargo xtask dist [--dev | --release] [--out DIR]` (release by default).
pub(crate) fn main(root: &Path, args: &[String]) -> Result<()> {
    let mut profile = Profile::Release;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dev" => profile = Profile::Dev,
            "--release" => profile = Profile::Release,
            "--out" => out = Some(PathBuf::from(it.next().context("--out needs a folder")?)),
            other => {
                bail!("cargo xtask dist: unknown argument `{other}` (--dev, --release, --out DIR)")
            }
        }
    }
    let out = out.unwrap_or_else(|| default_out(root));
    build(root, profile, &out)?;
    Ok(())
}

/// `<target>/dist`, where `cargo xtask test` builds and the dist tests look by default.
pub(crate) fn default_out(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("dist")
}

/// Build the wheel and the npm tarballs into `out` (emptied first); returns the manifest.
pub(crate) fn build(root: &Path, profile: Profile, out: &Path) -> Result<Value> {
    let started = Instant::now();
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("cannot empty {}", out.display()))?;
    }
    let (pypi, npm) = (out.join("pypi"), out.join("npm"));
    std::fs::create_dir_all(&pypi)?;
    std::fs::create_dir_all(&npm)?;
    let version = crate_version(root)?;
    let host = host_target()?;
    let installed = installed_targets();

    let mut wheels = Vec::new();
    let mut platforms = Vec::new();
    for &(suffix, os, cpu, target) in PLATFORMS {
        if target != host && !installed.iter().any(|t| t == target) {
            println!("dist: {suffix}: not built (rust target {target} is not installed here)");
            continue;
        }
        let t = Instant::now();
        let wheel = maturin_wheel(root, profile, target, &host, &pypi)?;
        let staged = out.join("stage").join(format!("{NPM_NAME}-{suffix}"));
        extract_binary(root, &wheel, &staged.join("bin/agent-tools"))?;
        let tarball = platform_package(&staged, suffix, os, cpu, &version, &npm)?;
        println!(
            "dist: {suffix}: {} and {} in {:.1}s",
            file_name(&wheel),
            file_name(&tarball),
            t.elapsed().as_secs_f64()
        );
        wheels.push(json!({ "target": target, "path": wheel }));
        platforms.push(json!({ "suffix": suffix, "target": target, "path": tarball }));
    }
    if platforms.is_empty() {
        bail!("no platform could be built: the host target {host} is not in the platform table");
    }
    let launcher = launcher_package(root, &out.join("stage").join(NPM_NAME), &version, &npm)?;
    let sdist = if profile == Profile::Release {
        Some(maturin_sdist(root, &pypi)?)
    } else {
        None
    };
    let manifest = json!({
        "version": version,
        "profile": if profile == Profile::Dev { "dev" } else { "release" },
        "host_target": host,
        "wheels": wheels,
        "sdist": sdist,
        "npm_launcher": launcher,
        "npm_platforms": platforms,
    });
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    std::fs::remove_dir_all(out.join("stage"))?;
    println!(
        "dist: agent-tools {version} ({}) into {} in {:.1}s",
        if profile == Profile::Dev {
            "dev"
        } else {
            "release"
        },
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(manifest)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The version of `agent-tools-cli`, the one every package carries.
fn crate_version(root: &Path) -> Result<String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: Value = serde_json::from_slice(&out.stdout)?;
    meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "agent-tools-cli"))
        .and_then(|p| p["version"].as_str())
        .map(str::to_string)
        .context("agent-tools-cli is not in cargo metadata")
}

fn host_target() -> Result<String> {
    let out = Command::new("rustc").arg("-vV").output()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV names no host")
}

fn installed_targets() -> Vec<String> {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn venv_bin(root: &Path, name: &str) -> PathBuf {
    crate::tools_dir(root).join("venv/bin").join(name)
}

fn maturin(root: &Path) -> Result<Command> {
    let bin = venv_bin(root, "maturin");
    if !bin.is_file() {
        bail!("{} is missing: run `cargo xtask setup`", bin.display());
    }
    let mut c = Command::new(bin);
    c.current_dir(root.join("dist/pypi"))
        .env("PATH", crate::test_path(root));
    Ok(c)
}

/// `maturin build` of dist/pypi for `target`; returns the one wheel it wrote.
fn maturin_wheel(
    root: &Path,
    profile: Profile,
    target: &str,
    host: &str,
    pypi: &Path,
) -> Result<PathBuf> {
    let dir = pypi.join(target);
    let mut c = maturin(root)?;
    c.args(["build", "--quiet", "--out"]).arg(&dir);
    match profile {
        Profile::Dev => c.args(["--profile", "dev"]),
        Profile::Release => c.arg("--release"),
    };
    if target != host {
        c.args(["--target", target]);
    }
    crate::run(&mut c)?;
    let wheel = only_file(&dir, ".whl")?;
    let dest = pypi.join(file_name(&wheel));
    std::fs::rename(&wheel, &dest)?;
    std::fs::remove_dir(&dir)?;
    Ok(dest)
}

fn maturin_sdist(root: &Path, pypi: &Path) -> Result<PathBuf> {
    let dir = pypi.join("sdist");
    let mut c = maturin(root)?;
    c.args(["sdist", "--out"]).arg(&dir).stdout(Stdio::null());
    crate::run(&mut c)?;
    let sdist = only_file(&dir, ".tar.gz")?;
    let dest = pypi.join(file_name(&sdist));
    std::fs::rename(&sdist, &dest)?;
    std::fs::remove_dir(&dir)?;
    Ok(dest)
}

fn only_file(dir: &Path, ext: &str) -> Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| file_name(p).ends_with(ext))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!("expected one {ext} in {}, found {found:?}", dir.display()),
    }
}

/// Copy the wheel's `*.data/scripts/agent-tools` to `dest` (mode 0755), with the venv's Python
/// (the wheel is a zip file; xtask carries no zip reader).
fn extract_binary(root: &Path, wheel: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest.parent().context("binary path has no folder")?)?;
    const SCRIPT: &str = "import shutil, sys, zipfile\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        [name] = [n for n in z.namelist() if n.endswith('.data/scripts/agent-tools')]\n\
        with z.open(name) as src, open(sys.argv[2], 'wb') as dst:\n    shutil.copyfileobj(src, dst)\n";
    crate::run(
        Command::new(venv_bin(root, "python"))
            .args(["-c", SCRIPT])
            .arg(wheel)
            .arg(dest),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// `npm pack` of `dir` into `dest`; returns the tarball.
fn npm_pack(dir: &Path, dest: &Path) -> Result<PathBuf> {
    let out = Command::new("npm")
        .current_dir(dir)
        .args(["pack", "--loglevel=error", "--pack-destination"])
        .arg(dest)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run npm pack")?;
    if !out.status.success() {
        bail!("npm pack in {} failed with {}", dir.display(), out.status);
    }
    let name = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| l.trim().to_string())
        .context("npm pack printed no file name")?;
    Ok(dest.join(name))
}

fn platform_package(
    staged: &Path,
    suffix: &str,
    os: &str,
    cpu: &str,
    version: &str,
    dest: &Path,
) -> Result<PathBuf> {
    let name = format!("{NPM_NAME}-{suffix}");
    let mut manifest = json!({
        "name": name,
        "version": version,
        "description": format!("The {suffix} binary of agent-tools-cli (installed by the `agent-tools-cli` package; not meant to be installed on its own)"),
        "license": "MIT OR Apache-2.0",
        "os": [os],
        "cpu": [cpu],
        "files": ["bin/agent-tools", "README.md"],
        "preferUnplugged": true,
    });
    if os == "linux" {
        // The binary links glibc; a musl system gets the launcher's message instead.
        manifest["libc"] = json!(["glibc"]);
    }
    std::fs::write(
        staged.join("package.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    std::fs::write(
        staged.join("README.md"),
        format!(
            "# {name}\n\nThe `agent-tools` binary for {suffix}, installed by \
             [`agent-tools-cli`](https://www.npmjs.com/package/agent-tools-cli) as an optional \
             dependency. Run it with `npx -y agent-tools-cli serve`.\n"
        ),
    )?;
    npm_pack(staged, dest)
}

/// The launcher from dist/npm/agent-tools-cli, with this version and every platform listed.
fn launcher_package(root: &Path, staged: &Path, version: &str, dest: &Path) -> Result<PathBuf> {
    let src = root.join("dist/npm").join(NPM_NAME);
    std::fs::create_dir_all(staged.join("bin"))?;
    for f in ["bin/agent-tools.js", "README.md"] {
        std::fs::copy(src.join(f), staged.join(f))
            .with_context(|| format!("cannot copy {}", src.join(f).display()))?;
    }
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("package.json"))?)?;
    manifest["version"] = json!(version);
    manifest["optionalDependencies"] = PLATFORMS
        .iter()
        .map(|(suffix, ..)| (format!("{NPM_NAME}-{suffix}"), json!(version)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    std::fs::write(
        staged.join("package.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    npm_pack(staged, dest)
}
