//! Containment of the language servers of a project the user does not trust.
//!
//! A language server loads the project: rust-analyzer runs `cargo metadata`, which honours the
//! repository's `.cargo/config.toml` (a `rustc-wrapper` is the project's program, run on a
//! read-only hover); the rustup proxies honour its `rust-toolchain.toml` (`path = "tc"` makes
//! `tc/bin/cargo` the cargo); pyright may run the interpreter a project's config names. Two
//! layers keep that code from acting on the host when the user's own config does not trust the
//! root:
//!
//! 1. **bubblewrap** ([`Containment::wrap`]): the server runs with the whole host read-only, the
//!    workspace read-only, a private `/tmp`, a private empty home with only the toolchain folders
//!    bound back read-only, and no network; in its own pid and user namespaces with every
//!    capability dropped and in a new session (the host's processes, its `/proc` entries and the
//!    person's terminal are out of reach); with an environment built from [`KEPT_ENV`]; it dies
//!    with the host. When the host already runs its children behind a sandbox prefix (`docker
//!    exec -i box`), that sandbox is the containment and bubblewrap is not added inside it.
//! 2. **cargo and rustup neutralised** ([`Containment::env`]): the host's own toolchain named by
//!    `RUSTUP_TOOLCHAIN` (it outranks `rust-toolchain.toml`), `CARGO`/`RUSTC` set to that
//!    toolchain's binaries (they outrank `build.rustc` and the proxies), and the wrappers emptied
//!    (`RUSTC_WRAPPER=""` outranks `build.rustc-wrapper`; an empty value means none), and
//!    `GOTOOLCHAIN=local` (a `go.mod` cannot make gopls fetch and run another Go). This holds
//!    even where bubblewrap is turned off.
//!
//! Owns: the bubblewrap argv and the environment of an untrusted server. Never: decides trust
//! (that is [`crate::config`]) or starts a process itself (beyond asking rustup where the
//! host's toolchain is).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod landlock;

use landlock::{PrivateDir, beside, landlock};

/// How the servers of an untrusted project are contained (the user's own config file's
/// `untrusted_sandbox`; a project's file cannot set it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UntrustedSandbox {
    /// Inside bubblewrap (`bwrap`) where it is installed and can make its namespaces, else under
    /// Landlock; a server that can be contained by neither does not start.
    #[default]
    Bubblewrap,
    /// Under Landlock even where bubblewrap works.
    Landlock,
    /// Without either: only the cargo/rustup environment layer applies. The project's
    /// config may still run code through the server (a `rust-analyzer.toml`, a pyright
    /// `venvPath`); choose this only where the host itself is a sandbox.
    None,
}

/// How one untrusted server is launched: argv in front of the server, and environment.
#[derive(Debug, Clone, Default)]
pub struct Containment {
    /// The bubblewrap argv (empty when not wrapped).
    pub wrap: Vec<String>,
    /// The Landlock confinement (where bubblewrap is not used).
    pub landlock: Option<agent_proc::Confinement>,
    /// Environment for the server and every process it starts.
    pub env: BTreeMap<String, String>,
    /// What contains it, in words (for `status`).
    pub summary: String,
    /// The server's private folder under Landlock (its temp and cache), held so that it is
    /// removed with the last clone of this containment.
    _private: Option<std::sync::Arc<PrivateDir>>,
}

/// The host variables a contained server is given (besides its own [`Containment::env`] and the
/// server entry's `env`): what finding its toolchain needs, never the host's secrets (the HTTP
/// token, credentials the person exported).
pub const KEPT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "PYENV_ROOT",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "JAVA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
];

/// Why an untrusted server cannot be contained.
#[derive(Debug, Clone)]
pub struct Uncontained(pub String);

/// The containment of an untrusted project's servers at `ws`. `prefix` is the run's sandbox
/// prefix (non-empty: the harness's sandbox contains the server). Order: the run's sandbox
/// prefix; else bubblewrap where it is installed and can make its namespaces; else Landlock;
/// else none, and the reason names `user_file`, the one place trust or a mode is set.
pub fn untrusted(
    ws: &Path,
    prefix: &[String],
    mode: UntrustedSandbox,
    user_file: Option<&Path>,
) -> Result<Containment, Uncontained> {
    let (env, toolchain) = neutral_env();
    let layer2 = match &toolchain {
        Some(t) => format!("cargo and rustup pinned to the host's toolchain {t}, no rustc wrapper"),
        None => "no rustc wrapper (no rustup found)".to_string(),
    };
    let plain = |summary: String| Containment {
        env: env.clone(),
        summary,
        ..Default::default()
    };
    if !prefix.is_empty() {
        return Ok(plain(format!(
            "the run's sandbox prefix ({}); {layer2}",
            prefix.join(" ")
        )));
    }
    if mode == UntrustedSandbox::None {
        return Ok(plain(format!(
            "not sandboxed (`untrusted_sandbox: \"none\"` in your own config); {layer2}"
        )));
    }
    let bwrap = agent_proc::Launcher::host().which("bwrap");
    let bwrap_state = match &bwrap {
        None => "bubblewrap is not installed",
        Some(_) if mode == UntrustedSandbox::Landlock => "Landlock was chosen in your own config",
        Some(b) if !bwrap_works(Path::new(b)) => {
            "bubblewrap cannot make its namespaces here (a container, or user namespaces off)"
        }
        Some(b) => {
            return Ok(Containment {
                wrap: bwrap_argv(
                    &PathBuf::from(b),
                    ws,
                    &hidden_areas(),
                    &std::env::var_os("PATH")
                        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                        .unwrap_or_default(),
                ),
                env,
                summary: format!(
                    "bubblewrap (workspace and host read-only, private /tmp and home, no network, own pid and user namespaces, no capabilities, no terminal); {layer2}"
                ),
                ..Default::default()
            });
        }
    };
    if agent_proc::landlock_abi().is_some() {
        return landlock(ws, env, bwrap_state, &layer2);
    }
    let file = user_file
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "~/.config/agent-tools/lsp.json".to_string());
    Err(Uncontained(format!(
        "the project is not trusted and its language server cannot be contained ({bwrap_state}, and \
         this kernel has no Landlock): install bubblewrap, or trust the project by adding \
         `\"trusted_projects\": [\"{}\"]` to your own config {file} (or start the host with \
         `--trust`)",
        ws.display()
    )))
}

/// Whether bubblewrap can make the namespaces the wall needs here (asked once per process: a
/// container usually forbids user namespaces, and bwrap then fails at every start).
fn bwrap_works(bwrap: &Path) -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let mut args: Vec<String> = bwrap_argv(bwrap, Path::new("/"), &[], &[])
            .into_iter()
            .skip(1)
            .collect();
        args.push("true".to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_blocking(bwrap, &args, Path::new("/")).is_some()
    })
}

/// The folders the sandbox hides: `/tmp` and the home folder (each replaced by an empty tmpfs).
fn hidden_areas() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/tmp")];
    if let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && h != Path::new("/") && !h.starts_with("/tmp"))
    {
        out.push(home);
    }
    out
}

/// `bwrap … --` for a server of the workspace `ws`. Later mounts go on top of earlier ones, so
/// the workspace and the toolchains stay visible even when they lie under `/tmp` or the home
/// folder (a checkout in `/tmp` whose `.tools` holds the servers, say).
fn bwrap_argv(bwrap: &Path, ws: &Path, hidden: &[PathBuf], path: &[PathBuf]) -> Vec<String> {
    let s = |p: &Path| p.display().to_string();
    let mut a: Vec<String> = vec![s(bwrap)];
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|x| x.to_string()));
    // A wall, not a curtain: its own pid namespace (the host's `/proc/<pid>/root`, `environ`
    // and `fd` and its signals are out of reach; the server is told no client `processId`), a
    // user namespace in which it is root of nothing with every capability dropped, a new
    // session (no controlling terminal: no `TIOCSTI` into the person's shell), no network, and
    // death with the host.
    push(&[
        "--die-with-parent",
        "--new-session",
        "--unshare-net",
        "--unshare-pid",
    ]);
    push(&[
        "--unshare-user",
        "--cap-drop",
        "ALL",
        "--unshare-cgroup-try",
    ]);
    push(&["--unshare-ipc", "--unshare-uts", "--ro-bind", "/", "/"]);
    push(&["--dev", "/dev", "--proc", "/proc"]);
    for h in hidden {
        a.extend(["--tmpfs".to_string(), s(h)]);
    }
    for dir in toolchain_dirs(hidden, path) {
        a.extend(["--ro-bind".to_string(), s(&dir), s(&dir)]);
    }
    a.extend(["--ro-bind".to_string(), s(ws), s(ws)]);
    a.extend(["--chdir".to_string(), s(ws)]);
    for (k, v) in [("TMPDIR", "/tmp"), ("XDG_CACHE_HOME", "/tmp/cache")] {
        a.extend(["--setenv".to_string(), k.to_string(), v.to_string()]);
    }
    a.push("--".to_string());
    a
}

/// The top-level folder of a hidden area that holds `p` (`/tmp/ci/.tools/x` → `/tmp/ci`).
fn top_in(hidden: &[PathBuf], p: &Path) -> Option<PathBuf> {
    hidden.iter().find_map(|h| {
        let top = p.strip_prefix(h).ok()?.components().next()?;
        Some(h.join(top))
    })
}

/// The folders under the hidden areas a server's toolchain needs, read-only: rustup's and
/// cargo's homes, pyenv, Go's module folder, and every `$PATH` entry (as it is and resolved),
/// each as a whole top-level folder of its area, so a toolchain's neighbours come along.
fn toolchain_dirs(hidden: &[PathBuf], path: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        for p in [p.canonicalize().ok(), Some(p)].into_iter().flatten() {
            if let Some(dir) = top_in(hidden, &p).filter(|d| d.is_dir())
                && !out.contains(&dir)
            {
                out.push(dir);
            }
        }
    };
    for var in ["RUSTUP_HOME", "CARGO_HOME", "PYENV_ROOT", "GOPATH"] {
        if let Some(v) = std::env::var_os(var) {
            add(PathBuf::from(v));
        }
    }
    if let Some(home) = hidden.get(1) {
        for d in [".rustup", ".cargo", ".pyenv", "go", ".local"] {
            add(home.join(d));
        }
    }
    path.iter().cloned().for_each(&mut add);
    out.sort();
    out
}

/// The project files through which a server of an untrusted root would find and run a
/// compiler of the repository's choosing, closed: the `initializationOptions` to merge into the
/// server's, or why the server cannot be started safely.
///
/// rust-analyzer takes a `rust-project.json` (or `.rust-project.json`) in the root or any folder
/// above it over `Cargo.toml`, and runs `<its sysroot>/bin/rustc` — the repository's program —
/// even with `RUSTC` pinned. For an untrusted root it is told which project to load
/// (`linkedProjects`: the root's `Cargo.toml`), so no such file is read; a root without a
/// `Cargo.toml` whose project would be a `rust-project.json` is refused, with the reason.
pub fn toolchain_doors(
    linked_cargo_project: bool,
    root: &Path,
) -> Result<Option<serde_json::Value>, Uncontained> {
    if !linked_cargo_project {
        return Ok(None);
    }
    let manifest = root.join("Cargo.toml");
    if manifest.is_file() {
        return Ok(Some(
            serde_json::json!({"linkedProjects": [manifest.display().to_string()]}),
        ));
    }
    let project_json = root.ancestors().find_map(|dir| {
        ["rust-project.json", ".rust-project.json"]
            .into_iter()
            .map(|name| dir.join(name))
            .find(|p| p.exists())
    });
    match project_json {
        Some(p) => Err(Uncontained(format!(
            "the project is not trusted and rust-analyzer would load {}, whose `sysroot` names              the compiler it runs (the repository's own program): trust the project in your own              config (`trusted_projects`) to load it",
            p.display()
        ))),
        None => Ok(None),
    }
}

impl Containment {
    /// The Landlock confinement for `binary` in workspace `ws`: [`Containment::landlock`] with
    /// the folder of the binary, as named and resolved (a `node_modules/.bin` link runs a script
    /// in its package's folder), added to where programs may run — never inside the workspace.
    pub fn confinement_for(&self, binary: &Path, ws: &Path) -> Option<agent_proc::Confinement> {
        let mut c = self.landlock.clone()?;
        let ws = ws.canonicalize().unwrap_or_else(|_| ws.to_path_buf());
        for p in [binary.canonicalize().ok(), Some(binary.to_path_buf())]
            .into_iter()
            .flatten()
        {
            if let Some(dir) = p
                .parent()
                .filter(|d| d.is_absolute() && !d.starts_with(&ws))
                && !c.executable.iter().any(|e| dir.starts_with(e))
            {
                c.executable.extend(beside(dir, &ws, 0));
            }
        }
        Some(c)
    }

    /// The argv in front of `binary args…`: [`Containment::wrap`] with the folders of the
    /// binary and of every absolute path among its arguments (a script a configured command
    /// names) bound back when they lie in a hidden area.
    pub fn wrap_for(&self, binary: &Path, args: &[String]) -> Vec<String> {
        let mut wrap = self.wrap.clone();
        if wrap.is_empty() {
            return wrap;
        }
        let hidden = hidden_areas();
        let mut extra = Vec::new();
        let named = std::iter::once(binary.to_path_buf()).chain(
            args.iter()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute() && p.exists()),
        );
        for p in named
            .flat_map(|p| [p.canonicalize().ok(), Some(p)])
            .flatten()
        {
            if let Some(dir) = top_in(&hidden, &p).filter(|d| d.is_dir())
                && !extra.contains(&dir.display().to_string())
            {
                let d = dir.display().to_string();
                extra.extend(["--ro-bind".to_string(), d.clone(), d]);
            }
        }
        let at = wrap.len() - 1; // before the closing `--`
        wrap.splice(at..at, extra);
        wrap
    }
}

/// The environment that neutralises a repository's cargo and rustup configuration, and the
/// host toolchain it names (None without rustup).
fn neutral_env() -> (BTreeMap<String, String>, Option<String>) {
    let mut env = BTreeMap::new();
    for k in [
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    ] {
        env.insert(k.to_string(), String::new());
    }
    // A `go.mod`'s `toolchain` line makes the go command fetch and run that Go (`auto`).
    env.insert("GOTOOLCHAIN".to_string(), "local".to_string());
    let toolchain = host_toolchain();
    if let Some(t) = &toolchain {
        env.insert("RUSTUP_TOOLCHAIN".to_string(), t.name.clone());
        if let Some(c) = &t.cargo {
            env.insert("CARGO".to_string(), c.display().to_string());
        }
        if let Some(r) = &t.rustc {
            env.insert("RUSTC".to_string(), r.display().to_string());
        }
    }
    (env, toolchain.map(|t| t.name))
}

#[derive(Clone)]
struct HostToolchain {
    name: String,
    cargo: Option<PathBuf>,
    rustc: Option<PathBuf>,
}

/// The toolchain rustup chooses outside any project (asked from `/`, so no project's
/// `rust-toolchain.toml` is read), once per process.
fn host_toolchain() -> Option<HostToolchain> {
    static CACHE: std::sync::OnceLock<Option<HostToolchain>> = std::sync::OnceLock::new();
    CACHE
        .get_or_init(|| {
            let rustup = agent_proc::Launcher::host().which("rustup")?;
            let ask = |args: &[&str]| -> Option<String> {
                let out = run_blocking(Path::new(&rustup), args, Path::new("/"))?;
                Some(out.trim().to_string()).filter(|s| !s.is_empty())
            };
            let name = ask(&["show", "active-toolchain"])?
                .split_whitespace()
                .next()?
                .to_string();
            let which = |bin: &str| {
                ask(&["which", "--toolchain", &name, bin])
                    .map(PathBuf::from)
                    .filter(|p| p.is_file())
            };
            let (cargo, rustc) = (which("cargo"), which("rustc"));
            Some(HostToolchain { name, cargo, rustc })
        })
        .clone()
}

/// Run `prog args` from `cwd` on a helper thread with its own small runtime (called from sync
/// code, `doctor`, and from inside the tool's runtime alike); its stdout when it succeeds.
pub(crate) fn run_blocking(prog: &Path, args: &[&str], cwd: &Path) -> Option<String> {
    let (prog, cwd) = (prog.to_path_buf(), cwd.to_path_buf());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        rt.block_on(async move {
            let cmd = agent_proc::Command::new(&agent_proc::Launcher::host(), &prog)
                .args(args)
                .current_dir(cwd);
            let out = cmd.output(Duration::from_secs(15)).await.ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).to_string())
        })
    })
    .join()
    .ok()
    .flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn the_workspace_and_toolchains_are_bound_after_the_private_tmp_and_home() {
        let tools = tempfile::Builder::new()
            .prefix("ci-")
            .tempdir_in("/tmp")
            .unwrap();
        let bin = tools.path().join(".tools/node/node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        let ws = Path::new("/tmp/project");
        let hidden = [PathBuf::from("/tmp"), PathBuf::from("/root")];
        let a = bwrap_argv(
            Path::new("/usr/bin/bwrap"),
            ws,
            &hidden,
            std::slice::from_ref(&bin),
        );
        let pos = |x: &str| a.iter().position(|y| y == x).unwrap();
        let at = |what: &str, p: &str| {
            a.windows(2)
                .position(|w| w[0] == what && w[1] == p)
                .unwrap_or_else(|| panic!("{what} {p} in {a:?}"))
        };
        let top = tools.path().display().to_string();
        assert!(
            at("--tmpfs", "/tmp") < at("--ro-bind", "/tmp/project"),
            "{a:?}"
        );
        assert!(
            at("--tmpfs", "/tmp") < at("--ro-bind", &top),
            "a checkout in /tmp: {a:?}"
        );
        assert!(pos("--unshare-net") < pos("--"));
        assert_eq!(a.last().map(String::as_str), Some("--"));
        // A binary resolved elsewhere in a hidden area is bound back too, before `--`.
        let c = Containment {
            wrap: a.clone(),
            ..Default::default()
        };
        let w = c.wrap_for(&bin.join("server"), &["--stdio".to_string()]);
        assert_eq!(w.last().map(String::as_str), Some("--"));
        assert!(w.len() >= a.len());
    }

    #[test]
    fn rust_analyzer_of_an_untrusted_root_loads_its_cargo_toml_or_is_refused_over_a_rust_project_json()
     {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let servers = crate::config::builtin_servers();
        let by_id = |id: &str| servers.iter().find(|s| s.id == id).unwrap().clone();
        let (pyright, ra) = (by_id("pyright"), by_id("rust-analyzer"));
        assert!(
            toolchain_doors(pyright.untrusted.linked_cargo_project, &root)
                .unwrap()
                .is_none()
        );
        // Neither: nothing to pin, nothing to refuse.
        assert!(
            toolchain_doors(ra.untrusted.linked_cargo_project, &root)
                .unwrap()
                .is_none()
        );
        std::fs::write(root.join("rust-project.json"), "{}").unwrap();
        let why = toolchain_doors(ra.untrusted.linked_cargo_project, &root)
            .unwrap_err()
            .0;
        assert!(
            why.contains("rust-project.json") && why.contains("trusted_projects"),
            "{why}"
        );
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        let pinned = toolchain_doors(ra.untrusted.linked_cargo_project, &root)
            .unwrap()
            .unwrap();
        assert_eq!(
            pinned["linkedProjects"][0],
            root.join("Cargo.toml").display().to_string()
        );
    }

    #[test]
    fn the_wrappers_are_emptied_and_the_toolchain_is_the_hosts() {
        let (env, _) = neutral_env();
        assert_eq!(env.get("RUSTC_WRAPPER").map(String::as_str), Some(""));
        assert_eq!(
            env.get("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER")
                .map(String::as_str),
            Some("")
        );
    }
}
