//! `cargo xtask` — the project's own automation: `setup`, `test`, `ci`, `dist`, `codegen`, `bench`.
//!
//! Everything the tests need is installed by `setup`, idempotently: system packages with
//! `apt-get`, Python packages into `<workspace>/.tools/venv`, node packages into
//! `<workspace>/.tools/node`, and `rust-analyzer` with rustup.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod bench_astgrep_rss;
mod bench_calls;
mod bench_hostile;
mod bench_http;
mod bench_kernel;
mod bench_scale;
mod bench_servers;
mod dist;
mod stdio_host;

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

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("setup") => setup(&root),
        Some("test") => {
            setup(&root)?;
            test(&root, &args[1..])
        }
        Some("dist") => dist::main(&root, &args[1..]),
        Some("lint") => lint(&root),
        Some("ci") => {
            lint(&root)?;
            setup(&root)?;
            test(&root, &[])
        }
        Some("codegen") => codegen(&root, args.iter().any(|a| a == "--check")),
        Some("bench") => bench(&root, args.get(1).map(String::as_str).unwrap_or("all")),
        _ => {
            eprintln!(
                "usage: cargo xtask <setup | test [cargo test args] | lint | ci | dist [--dev|--release] [--out DIR] | codegen [--check] | bench [host|calls|astgrep|lsp|dap|kernel|all|scale]>"
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

fn on_path(bin: &str) -> Option<PathBuf> {
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

fn setup(root: &Path) -> Result<()> {
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
const DJANGO_DIR: &str = "django-5.2.8";

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn cargo(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root)
        .env("PATH", test_path(root))
        .env("AGENT_TOOLS_VENV", tools_dir(root).join("venv"))
        .env(
            "AGENT_TOOLS_DJANGO",
            tools_dir(root).join("corpora").join(DJANGO_DIR),
        )
        .env("AGENT_TOOLS_REQUIRE_REAL", "1");
    c
}

/// Run the whole suite, echo its output, and close with one plain `tests: N passed, N failed`
/// line summed over every test binary (cargo's own last line is the doc-tests' count).
fn test(root: &Path, extra: &[String]) -> Result<()> {
    use std::io::{BufRead, BufReader};
    // The wheel and npm tarballs the dist tests install (dev profile: docs/decisions.md).
    let dist = dist::default_out(root);
    dist::build(root, dist::Profile::Dev, &dist)?;
    let mut child = cargo(root)
        .env("AGENT_TOOLS_DIST", &dist)
        .args(["test", "--workspace", "--all-features", "--no-fail-fast"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start cargo test")?;
    let stdout = child.stdout.take().context("cargo test stdout")?;
    let (mut passed, mut failed) = (0u64, 0u64);
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        let (p, f) = counts(&line);
        passed += p;
        failed += f;
    }
    let status = child.wait()?;
    println!("tests: {passed} passed, {failed} failed");
    if !status.success() {
        bail!("cargo test failed with {status}");
    }
    if passed == 0 {
        bail!("cargo test ran no test");
    }
    Ok(())
}

/// The passed/failed counts of one line of test output: libtest's `test result: ok. N passed;
/// M failed; …` or a custom harness's plain `N passed, M failed`.
fn counts(line: &str) -> (u64, u64) {
    let line = line.trim();
    let body = match line.strip_prefix("test result: ") {
        Some(rest) => rest.split_once(". ").map_or(rest, |(_, b)| b),
        None if line.ends_with(" failed") && line.contains(" passed, ") => line,
        None => return (0, 0),
    };
    let mut passed = 0;
    let mut failed = 0;
    for part in body.split([';', ',']) {
        let mut words = part.split_whitespace();
        if let (Some(n), Some(what)) = (words.next(), words.next())
            && let Ok(n) = n.parse::<u64>()
        {
            match what {
                "passed" => passed = n,
                "failed" => failed = n,
                _ => {}
            }
        }
    }
    (passed, failed)
}

/// Everything CI checks before the tests: formatting, clippy, each facade feature alone,
/// packaging and docs (`publishing`), and the generated docs.
fn lint(root: &Path) -> Result<()> {
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
    codegen(root, true)
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
                "{name}: publishable is {publishable}, but PUBLISHED in xtask/src/main.rs says {}",
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

/// The MCP `instructions` a `serve` run sends at initialize to a client that can elicit, with
/// the workspace path shown as `<root>` so that the text does not depend on the checkout.
fn served_instructions(bin: &Path, root: &Path, args: &[&str]) -> Result<String> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(bin)
        .arg("serve")
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("start agent-tools serve")?;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"codegen","version":"0"}}}"#;
    let mut stdin = child.stdin.take().context("serve stdin")?;
    writeln!(stdin, "{init}")?;
    let mut lines = BufReader::new(child.stdout.take().context("serve stdout")?).lines();
    let text = loop {
        let Some(line) = lines.next() else {
            bail!("serve closed stdout before answering initialize");
        };
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if v["id"] == 1 {
            break v["result"]["instructions"]
                .as_str()
                .unwrap_or("")
                .to_string();
        }
    };
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let mut text = text;
    for shown in [root.to_path_buf(), root.canonicalize()?] {
        text = text.replace(&shown.display().to_string(), "<root>");
    }
    Ok(text)
}

/// Put `text` between README's instruction markers (the instructions as served); in `check`
/// mode, fail when what is there differs.
fn readme_instructions(root: &Path, text: &str, check: bool) -> Result<()> {
    const BEGIN: &str = "<!-- instructions: generated by cargo xtask codegen -->\n";
    const END: &str = "<!-- end of instructions -->";
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path)?;
    let (Some(start), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        bail!("README.md has no `{}` … `{END}` block", BEGIN.trim_end());
    };
    let block = format!("```text\n{text}\n```\n");
    let new = format!(
        "{}{block}{}",
        &readme[..start + BEGIN.len()],
        &readme[end..]
    );
    if check {
        if new != readme {
            bail!("README.md's instructions are stale: run `cargo xtask codegen`");
        }
    } else if new != readme {
        std::fs::write(&path, new)?;
        println!("wrote the instructions into {}", path.display());
    }
    Ok(())
}

fn codegen(root: &Path, check: bool) -> Result<()> {
    let bin = host_binary(root, false)?;
    let mut doc = String::from(
        "# Tools\n\nGenerated by `cargo xtask codegen` from the registry of `agent-tools serve --vibe` \
         with every family compiled in. Do not edit by hand.\n\n\
         | tool | tier | parallel-safe | plan / read-only surfaces |\n|---|---|---|---|\n",
    );
    let out = Command::new(&bin)
        .args(["tools", "--json", "--vibe", "--root"])
        .arg(root)
        .output()?;
    if !out.status.success() {
        bail!(
            "agent-tools tools failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let tools: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)?;
    for t in &tools {
        let tier = t["_meta"]["tier"].as_str().unwrap_or("?");
        doc.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            t["name"].as_str().unwrap_or("?"),
            tier,
            t["_meta"]["parallelSafe"].as_bool().unwrap_or(false),
            if tier == "read" {
                "visible"
            } else {
                "hidden and refused"
            }
        ));
    }
    for t in &tools {
        doc.push_str(&format!(
            "\n## `{}`\n\n{}\n\n```json\n{}\n```\n",
            t["name"].as_str().unwrap_or("?"),
            t["description"].as_str().unwrap_or(""),
            serde_json::to_string_pretty(&t["inputSchema"])?
        ));
    }
    // What the model reads, measured as characters / 4 (a token estimate) on three surfaces: a
    // tool's name, description and input schema as compact JSON, as MCP clients put them before
    // the model; the annotations and `_meta` (hints for the client) counted apart.
    let size = |args: &[&str]| -> Result<(usize, usize)> {
        let out = Command::new(&bin)
            .args(["tools", "--json", "--root"])
            .arg(root)
            .args(args)
            .output()?;
        let tools: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)?;
        let (mut read, mut extra) = (0, 0);
        for t in &tools {
            let shown = serde_json::json!({
                "name": t["name"],
                "description": t["description"],
                "inputSchema": t["inputSchema"],
            });
            read += shown.to_string().chars().count();
            for key in ["annotations", "_meta"] {
                if !t[key].is_null() {
                    extra += format!("\"{key}\":{},", t[key]).chars().count();
                }
            }
        }
        Ok((read / 4, extra / 4))
    };
    let ((full_vibe, extra), (full, _), (plan, _)) = (
        size(&["--vibe"])?,
        size(&[])?,
        size(&["--vibe", "--surface", "plan"])?,
    );
    let served = served_instructions(&bin, root, &["--vibe"])?;
    readme_instructions(root, &served, check)?;
    let instr = served.chars().count() / 4;
    let with = full_vibe + instr;
    // Issue 42 raised the budget from 4,000 to 4,300 for what the peers give a model.
    let verdict = if with <= 4300 { "met" } else { "NOT met" };
    let report = format!(
        "Size of what a model reads (characters / 4; name, description and input schema of each \
         tool, plus the MCP instructions): full surface with vibe {with} tokens — tool list \
         {full_vibe} + instructions {instr} (goal ≤ 4,300: {verdict}); without vibe {full} (tool \
         list), plan surface with vibe {plan} (tool list). Annotations and `_meta`, which clients \
         read and do not show the model, add {extra}.\n"
    );
    print!("{report}");
    doc = doc.replacen("\n\n| tool |", &format!("\n\n{report}\n| tool |"), 1);
    let path = root.join("docs/tools.md");
    if check {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != doc {
            bail!("docs/tools.md is stale: run `cargo xtask codegen`");
        }
        println!("docs/tools.md is up to date");
    } else {
        std::fs::write(&path, doc)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn bench(root: &Path, which: &str) -> Result<()> {
    let all = which == "all";
    if all || which == "host" {
        bench_host(root)?;
    }
    if all || which == "calls" {
        println!("== bench calls: ast_grep per process and in one serve run, against the CLI ==");
        // `AGENT_TOOLS_BENCH_BIN` measures a binary built elsewhere (an earlier commit's).
        let bin = match std::env::var_os("AGENT_TOOLS_BENCH_BIN") {
            Some(b) => PathBuf::from(b),
            None => host_binary(root, true)?,
        };
        bench_calls::run(root, &bin)?;
    }
    // Not in `all`: it unpacks a 1.2 GB tree on first use.
    if which == "scale" {
        println!("== bench scale: grep and ast_grep at three sizes of the Linux tree ==");
        let bin = match std::env::var_os("AGENT_TOOLS_BENCH_BIN") {
            Some(b) => PathBuf::from(b),
            None => host_binary(root, true)?,
        };
        bench_scale::run(root, &bin)?;
    }
    for family in ["astgrep", "lsp", "dap", "kernel"] {
        if all || which == family {
            let krate = format!("agent-{family}");
            // `examples/bench.rs`, or `examples/bench/main.rs` for a bench of several files.
            let examples = root.join("crates").join(&krate).join("examples");
            if !examples.join("bench.rs").exists() && !examples.join("bench/main.rs").exists() {
                bail!(
                    "bench {family}: no benchmark in crates/{krate}/examples/bench.rs or examples/bench/main.rs"
                );
            }
            println!("== bench {family} ==");
            let example = format!("{family}-bench");
            run(cargo(root).args([
                "run",
                "-q",
                "--release",
                "-p",
                &krate,
                "--example",
                &example,
            ]))?;
            if family == "lsp" {
                // The identifier witness on Django and a warm `references` with it (the facade
                // composes the lsp and astgrep families; issue 22).
                println!("== bench lsp: witness ==");
                run(cargo(root).args([
                    "run",
                    "-q",
                    "--release",
                    "-p",
                    "agent-tools",
                    "--features",
                    "full",
                    "--example",
                    "witness",
                ]))?;
            }
        }
    }
    Ok(())
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn bench_host(root: &Path) -> Result<()> {
    use std::io::{BufRead, BufReader, Write};
    let bin = host_binary(root, true)?;
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("hello.txt"), "hello\n")?;
    let mut child = Command::new(&bin)
        .args(["serve", "--vibe", "--root"])
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    let mut rpc = |id: u64, method: &str, params: serde_json::Value| -> Result<f64> {
        let t = Instant::now();
        writeln!(
            stdin,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("agent-tools serve closed its stdout");
            }
            let v: serde_json::Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                return Ok(t.elapsed().as_secs_f64() * 1e6);
            }
        }
    };
    rpc(
        0,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
    )?;
    rpc(1, "tools/list", serde_json::json!({}))?;
    std::thread::sleep(std::time::Duration::from_millis(500));
    let rss = rss_kib(child.id()).unwrap_or(0);
    let mut times = Vec::new();
    for i in 0..500 {
        times.push(rpc(
            10 + i,
            "tools/call",
            serde_json::json!({"name": "read", "arguments": {"path": "hello.txt"}}),
        )?);
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    println!("== bench host ==");
    println!(
        "idle RSS of `agent-tools serve --vibe` with every family attached: {:.1} MB (goal <= 25 MB)",
        rss as f64 / 1024.0
    );
    println!(
        "tools/call `read` round trip over stdio, 500 calls: {}",
        bench_http::percentiles(&mut times)
    );
    bench_http::run(&bin, rss_kib)?;
    bench_hostile::run(&bin)?;
    bench_astgrep_rss::run(&bin)?;
    bench_kernel::run(&bin, rss_kib)?;
    bench_servers::run(root, &bin, rss_kib)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::counts;

    #[test]
    fn reads_test_counts() {
        assert_eq!(
            counts(
                "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s"
            ),
            (12, 0)
        );
        assert_eq!(
            counts("test result: FAILED. 3 passed; 1 failed; 0 ignored"),
            (3, 1)
        );
        assert_eq!(counts("8 passed, 0 failed"), (8, 0));
        assert_eq!(counts("running 8 tests"), (0, 0));
    }
}
