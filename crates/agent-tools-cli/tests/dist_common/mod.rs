//! What the dist tests share: the packages `cargo xtask dist` built (`AGENT_TOOLS_DIST`, set by
//! `cargo xtask test`; else `<target>/dist`), a scratch root with a file to read and one to
//! search, scratch installs (a fresh venv with the wheel, the npm tarballs in a folder, uvx
//! pointed at the wheel with no index), and the client scripts of `tests/clients` that complete
//! an MCP session through what was installed.

#![allow(dead_code)] // each dist test uses its own part of this module

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// The packages of this version, as `cargo xtask dist` left them.
pub struct Dist {
    pub dir: PathBuf,
    pub manifest: Value,
}

impl Dist {
    pub fn load() -> Dist {
        let dir = std::env::var_os("AGENT_TOOLS_DIST")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::var_os("CARGO_TARGET_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| workspace().join("target"))
                    .join("dist")
            });
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{} cannot be read ({e}): run `cargo xtask dist --dev` (`cargo xtask test` does)",
                path.display()
            )
        });
        let manifest: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            manifest["version"],
            env!("CARGO_PKG_VERSION"),
            "{} is of another version: run `cargo xtask dist --dev`",
            path.display()
        );
        Dist { dir, manifest }
    }

    fn host(&self) -> &str {
        self.manifest["host_target"].as_str().unwrap()
    }

    /// The wheel for this machine.
    pub fn wheel(&self) -> PathBuf {
        let w = self.manifest["wheels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["target"] == self.host())
            .expect("no wheel for the host target");
        PathBuf::from(w["path"].as_str().unwrap())
    }

    pub fn pypi_dir(&self) -> PathBuf {
        self.dir.join("pypi")
    }

    pub fn npm_launcher(&self) -> PathBuf {
        PathBuf::from(self.manifest["npm_launcher"].as_str().unwrap())
    }

    /// The platform tarball for this machine.
    pub fn npm_platform(&self) -> PathBuf {
        let p = self.manifest["npm_platforms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["target"] == self.host())
            .expect("no npm platform package for the host target");
        PathBuf::from(p["path"].as_str().unwrap())
    }
}

/// A root with `hello.txt` to read and `calc.py` to search (what tests/clients/*_session.* ask).
pub fn scratch_root(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("hello.txt"), "hello from the scratch root\n").unwrap();
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
}

/// The venv `cargo xtask setup` fills, with the MCP Python SDK (the client, not the server).
pub fn client_venv() -> PathBuf {
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools/venv"));
    let ok = Command::new(venv.join("bin/python"))
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{}/bin/python cannot import mcp: run `cargo xtask setup`",
        venv.display()
    );
    venv
}

/// PATH with the client venv (python, uv, uvx) and the project's node tools in front.
pub fn tools_path() -> String {
    let venv = client_venv();
    format!(
        "{}:{}:{}",
        venv.join("bin").display(),
        workspace().join(".tools/node/node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Run a client script; it prints `ok <checks>` on success. Returns the checks done.
pub fn expect_ok(cmd: &mut Command, expected: &[&str]) -> Vec<String> {
    let shown = format!("{cmd:?}");
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ok "))
        .unwrap_or_else(|| panic!("no `ok` line from {shown}:\n{stdout}\n{stderr}"));
    let done: Vec<String> = line.split(',').map(str::to_string).collect();
    for c in expected {
        assert!(
            done.iter().any(|d| d == c),
            "check `{c}` not done: {done:?}"
        );
    }
    done
}

/// The checks of tests/clients/python_session.py and ts_session.mjs.
pub const SESSION: &[&str] = &["initialize", "tools", "read", "ast_grep"];

/// One MCP session with the Python SDK through `command args…`, started in `root`.
pub fn python_session_stdio(root: &Path, command: &str, args: &[String], env: &[(String, String)]) {
    let mut cmd = Command::new(client_venv().join("bin/python"));
    cmd.arg(clients().join("python_session.py"))
        .arg("stdio")
        .arg(root)
        .arg(command)
        .args(args)
        .env("PATH", tools_path())
        .envs(env.iter().map(|(k, v)| (k, v)));
    // A command that leaves the file family out is checked for that instead of a `read`.
    let without_files = args
        .windows(2)
        .any(|w| w[0] == "--without" && w[1].split(',').any(|f| f == "files"));
    if without_files {
        expect_ok(
            &mut cmd,
            &["initialize", "tools", "no-file-tools", "ast_grep"],
        );
    } else {
        expect_ok(&mut cmd, SESSION);
    }
}

/// One MCP session with the Python SDK over Streamable HTTP.
pub fn python_session_http(url: &str, headers: &[(String, String)]) {
    let mut cmd = Command::new(client_venv().join("bin/python"));
    cmd.arg(clients().join("python_session.py"))
        .arg("http")
        .arg(url);
    for (k, v) in headers {
        cmd.arg(k).arg(v);
    }
    expect_ok(&mut cmd, SESSION);
}

fn run_ok(cmd: &mut Command) -> String {
    let shown = format!("{cmd:?}");
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh venv (the system's python3, nothing else in it) with the wheel installed from the
/// file, no index; returns the venv.
pub fn venv_with_wheel(dir: &Path, wheel: &Path) -> PathBuf {
    let venv = dir.join("venv");
    run_ok(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--no-index", "--disable-pip-version-check"])
            .arg(wheel),
    );
    venv
}

/// The environment under which `uvx --from agent-tools-cli …` resolves only to the built wheel:
/// a uv.toml with `no-index` and `find-links`, offline, a private cache and tool folder.
pub fn uv_env(dir: &Path, dist: &Dist) -> Vec<(String, String)> {
    let config = dir.join("uv.toml");
    std::fs::write(
        &config,
        format!(
            "no-index = true\nfind-links = [{:?}]\n",
            dist.pypi_dir().display().to_string()
        ),
    )
    .unwrap();
    [
        ("UV_CONFIG_FILE", config),
        ("UV_CACHE_DIR", dir.join("uv-cache")),
        ("UV_TOOL_DIR", dir.join("uv-tools")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.display().to_string()))
    .chain([
        ("UV_OFFLINE".to_string(), "1".to_string()),
        ("UV_PYTHON_DOWNLOADS".to_string(), "never".to_string()),
    ])
    .collect()
}

/// `npm install` of the given tarballs into `dir` (a new package.json there), offline: nothing
/// comes from a registry, so a missing platform package is not fetched from anywhere.
pub fn npm_install(dir: &Path, tarballs: &[PathBuf]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
    run_ok(
        Command::new("npm")
            .current_dir(dir)
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .args(tarballs),
    );
}

/// The MCP TypeScript SDK `cargo xtask setup` installs.
pub fn ts_sdk() -> PathBuf {
    let sdk = workspace().join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.join("package.json").is_file(),
        "{} is missing: run `cargo xtask setup`",
        sdk.display()
    );
    sdk
}
