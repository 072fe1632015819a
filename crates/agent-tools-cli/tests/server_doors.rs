//! Issue 40, the servers' own toolchain doors: a project file a language server reads to find a
//! program it then runs. For each server, the file it tries, the hostile project that uses it,
//! and a watch on every process of the machine while the call runs (a program that runs inside
//! the wall cannot write anywhere the test could look, but its command line is seen by the
//! host): trusted (the control: the door is real and the watch sees it), untrusted under
//! bubblewrap and, with bubblewrap hidden, under Landlock (the server still answers; the program
//! never runs).
//!
//! - typescript-language-server runs the project's `node_modules/typescript/lib/tsserver.js` when
//!   trusted; untrusted, the host's own tsserver (`host_only`). A `tsconfig.json` plugin is not
//!   loaded even when trusted (tsserver's `allowLocalPluginLoads` is off).
//! - clangd never runs a compiler a `compile_commands.json` names (no `--query-driver`), trusted
//!   or not: the guard is that it stays so.
//! - The rust-analyzer doors are `untrusted_repo.rs`; pyright, basedpyright, pylsp and ty run no
//!   interpreter a project names (`venvPath`/`venv`, `[tool.ty.environment] python`, a `.venv`),
//!   measured trusted (docs/decisions.md); gopls follows a `toolchain` line only with
//!   `GOTOOLCHAIN=auto`, which an untrusted root never gets (and go 1.19 here cannot read one).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// How the call is made: trusted (`--trust`), or untrusted with the default containment where
/// bubblewrap is installed, or where it is hidden (so the host falls back to Landlock).
#[derive(Debug, Clone, Copy)]
enum Mode {
    Trusted,
    Bubblewrap,
    Landlock,
}

/// Whether a process whose command line contains `needle` ran while `f` ran (every /proc entry,
/// every 10 ms).
fn watched<T>(needle: &str, f: impl FnOnce() -> T) -> (T, bool) {
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(AtomicBool::new(false));
    let me = std::process::id().to_string();
    let watcher = {
        let (stop, seen, needle) = (stop.clone(), seen.clone(), needle.to_string());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                for e in std::fs::read_dir("/proc").unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
                        continue;
                    }
                    if let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
                        && String::from_utf8_lossy(&cmd).contains(&needle)
                    {
                        seen.store(true, Ordering::SeqCst);
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let out = f();
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    (out, seen.load(Ordering::SeqCst))
}

/// `agent-tools call lsp ARGS` on `root` in `mode`: (ok, text).
fn call(root: &Path, config: &Path, mode: Mode, args: &str) -> (bool, String) {
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    std::fs::write(config.join("agent-tools/lsp.json"), "{}").unwrap();
    let mut cmd = match mode {
        Mode::Landlock => agent_testkit::without_bwrap(BIN),
        _ => Command::new(BIN),
    };
    cmd.args(["call", "lsp", args, "--root"])
        .arg(root)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("AGENT_TOOLS_TRUST")
        .env_remove("RUSTUP_TOOLCHAIN");
    if matches!(mode, Mode::Trusted) {
        cmd.arg("--trust");
    }
    let out = cmd.output().unwrap();
    assert!(
        !agent_testkit::hidden_bwrap_failed(&out),
        "could not hide bwrap: {out:?}"
    );
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn status(root: &Path, config: &Path, mode: Mode) -> String {
    call(root, config, mode, r#"{"operation": "status"}"#).1
}

fn host_typescript() -> PathBuf {
    let bin = agent_testkit::require("typescript-language-server");
    let modules = bin.parent().unwrap().parent().unwrap().to_path_buf();
    let ts = modules.join("typescript/lib/tsserver.js");
    assert!(ts.is_file(), "no host typescript at {}", ts.display());
    modules.join("typescript")
}

#[test]
fn typescript_runs_the_projects_tsserver_only_when_trusted() {
    agent_testkit::require("bwrap");
    let host_ts = host_typescript();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ts").canonicalize().unwrap_or_else(|_| {
        std::fs::create_dir_all(dir.path().join("ts")).unwrap();
        dir.path().join("ts").canonicalize().unwrap()
    });
    std::fs::write(
        root.join("package.json"),
        r#"{"name": "ts", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true}}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("app.ts"),
        "export function greet(name: string): string {\n  return \"hi \" + name;\n}\ngreet(\"x\");\n",
    )
    .unwrap();
    // The project's own typescript: a tsserver.js that is the host's, reached through the
    // project (so a trusted run works and shows it ran by its path).
    let lib = root.join("node_modules/typescript/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(
        root.join("node_modules/typescript/package.json"),
        r#"{"name": "typescript", "version": "5.9.9", "main": "lib/typescript.js"}"#,
    )
    .unwrap();
    std::fs::write(
        lib.join("tsserver.js"),
        format!(
            "require({:?});\n",
            host_ts.join("lib/tsserver.js").display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(host_ts.join("lib/typescript.js"), lib.join("typescript.js")).unwrap();
    let config = dir.path().join("config");
    let project_tsserver = lib.join("tsserver.js").display().to_string();
    let hover = r#"{"operation": "hover", "path": "app.ts", "symbol": "greet", "line": 4}"#;
    for mode in [Mode::Trusted, Mode::Bubblewrap, Mode::Landlock] {
        let ((ok, text), ran) = watched(&project_tsserver, || call(&root, &config, mode, hover));
        assert!(
            ok && text.contains("greet(name: string): string"),
            "{mode:?}: {text}"
        );
        match mode {
            Mode::Trusted => assert!(ran, "the control: a trusted project's tsserver runs"),
            _ => {
                assert!(!ran, "{mode:?}: the project's tsserver ran");
                let s = status(&root, &config, mode);
                let want = match mode {
                    Mode::Landlock => "run contained: Landlock ABI",
                    _ => "run contained: bubblewrap",
                };
                assert!(s.contains(want), "{mode:?}: {s}");
            }
        }
    }
}

/// A `tsconfig.json` plugin is not loaded, trusted or not (tsserver's `allowLocalPluginLoads`
/// is off), under bubblewrap and under Landlock.
#[test]
fn typescript_loads_no_plugin_a_tsconfig_names() {
    agent_testkit::require("bwrap");
    agent_testkit::require("typescript-language-server");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ts")).unwrap();
    let root = dir.path().join("ts").canonicalize().unwrap();
    std::fs::write(
        root.join("package.json"),
        r#"{"name": "ts", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "plugins": [{"name": "door-plugin"}]}}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("app.ts"),
        "export function greet(name: string): string {\n  return \"hi \" + name;\n}\ngreet(\"x\");\n",
    )
    .unwrap();
    let plugin = root.join("node_modules/door-plugin");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(
        plugin.join("package.json"),
        r#"{"name": "door-plugin", "main": "index.js"}"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join("index.js"),
        "process.title = 'door-plugin-loaded';\nsetTimeout(() => {}, 3000);\nmodule.exports = () => ({ create: (info) => info.languageService });\n",
    )
    .unwrap();
    let config = dir.path().join("config");
    let hover = r#"{"operation": "hover", "path": "app.ts", "symbol": "greet", "line": 4}"#;
    for mode in [Mode::Trusted, Mode::Bubblewrap, Mode::Landlock] {
        let ((ok, text), loaded) =
            watched("door-plugin-loaded", || call(&root, &config, mode, hover));
        assert!(
            ok && text.contains("greet(name: string): string"),
            "{mode:?}: {text}"
        );
        assert!(!loaded, "{mode:?}: the tsconfig's plugin was loaded");
    }
}

#[test]
fn clangd_runs_no_compiler_a_compile_commands_json_names() {
    agent_testkit::require("bwrap");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("c")).unwrap();
    let root = dir.path().join("c").canonicalize().unwrap();
    std::fs::write(
        root.join("a.c"),
        "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n",
    )
    .unwrap();
    // The project's "compiler": if anything runs it, it is seen by its path for a second.
    let cc = root.join("door-cc");
    std::fs::write(&cc, "#!/bin/sh\nsleep 1\nexec cc \"$@\"\n").unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        root.join("compile_commands.json"),
        serde_json::json!([{
            "directory": root.display().to_string(),
            "command": format!("{} -c a.c -o a.o", cc.display()),
            "file": "a.c",
        }])
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".clangd"),
        format!("CompileFlags:\n  Compiler: {}\n", cc.display()),
    )
    .unwrap();
    let config = dir.path().join("config");
    let hover = r#"{"operation": "hover", "path": "a.c", "symbol": "add", "line": 2}"#;
    for mode in [Mode::Trusted, Mode::Bubblewrap, Mode::Landlock] {
        let ((ok, text), ran) = watched(&cc.display().to_string(), || {
            call(&root, &config, mode, hover)
        });
        assert!(ok && text.contains("add"), "{mode:?}: {text}");
        assert!(!ran, "{mode:?}: clangd ran the project's compiler");
    }
}

/// pyright, basedpyright, pylsp and ty run no interpreter a project names — `venvPath`/`venv`
/// in `pyrightconfig.json` and `[tool.pyright]`, `[tool.ty.environment] python`, a `.venv` at
/// the root — even when the project is trusted (measured: they read the environment's folders,
/// or run the host's `python` from `$PATH`): not a door, and this keeps it so.
#[test]
fn python_servers_run_no_interpreter_a_project_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("py")).unwrap();
    let root = dir.path().join("py").canonicalize().unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"d\"\n\n[tool.pyright]\nvenvPath = \".\"\nvenv = \".venv\"\n\n[tool.ty.environment]\npython = \".venv\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("pyrightconfig.json"),
        r#"{"venvPath": ".", "venv": ".venv"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("app.py"),
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\ngreet(\"x\")\n",
    )
    .unwrap();
    let bin = root.join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(root.join(".venv/lib/python3.12/site-packages")).unwrap();
    std::fs::write(
        root.join(".venv/pyvenv.cfg"),
        "home = /usr/bin\nversion = 3.12\n",
    )
    .unwrap();
    let python = bin.join("python");
    std::fs::write(&python, "#!/bin/sh\nsleep 1\nexec python3 \"$@\"\n").unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("python", bin.join("python3")).unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    let hover = r#"{"operation": "hover", "path": "app.py", "symbol": "greet", "line": 5}"#;
    for server in ["pyright", "basedpyright", "pylsp", "ty"] {
        std::fs::write(
            config.join("agent-tools/lsp.json"),
            serde_json::json!({"languages": {"python": [server]}}).to_string(),
        )
        .unwrap();
        let ((ok, text), ran) = watched(&python.display().to_string(), || {
            let out = Command::new(BIN)
                .args(["call", "lsp", hover, "--trust", "--root"])
                .arg(&root)
                .env("XDG_CONFIG_HOME", &config)
                .output()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        });
        assert!(
            ok && text.contains(&format!("({server})")) && text.contains("greet"),
            "{server}: {text}"
        );
        assert!(!ran, "{server} ran the project's interpreter");
    }
}

/// The environment of the first process (not this one) whose program (its command line's first
/// word) ends with `needle`, read while `f` runs.
fn environ_of<T>(needle: &str, f: impl FnOnce() -> T) -> (T, Option<String>) {
    let stop = Arc::new(AtomicBool::new(false));
    let found = Arc::new(slot::Slot::default());
    let me = std::process::id().to_string();
    let watcher = {
        let (stop, found, needle) = (stop.clone(), found.clone(), needle.to_string());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) && found.get().is_none() {
                for e in std::fs::read_dir("/proc").unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
                        continue;
                    }
                    let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                    let program = cmd.split(|b| *b == 0).next().unwrap_or_default();
                    if String::from_utf8_lossy(program).ends_with(&needle)
                        && let Ok(env) = std::fs::read(e.path().join("environ"))
                        && !env.is_empty()
                    {
                        found.set(String::from_utf8_lossy(&env).replace('\0', "\n"));
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let out = f();
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    (out, found.get())
}

/// A one-value slot shared with the watcher thread.
mod slot {
    #[derive(Default)]
    pub struct Slot(std::sync::Mutex<Option<String>>);

    impl Slot {
        pub fn set(&self, v: String) {
            *self.0.lock().unwrap() = Some(v);
        }

        pub fn get(&self) -> Option<String> {
            self.0.lock().unwrap().clone()
        }
    }
}

/// gopls follows a `go.mod`/`go.work` `toolchain` line (fetching and running another Go) only
/// with `GOTOOLCHAIN=auto`; an untrusted root's gopls runs with `GOTOOLCHAIN=local`, seen in
/// its own environment from outside, under bubblewrap and under Landlock, and still answers.
/// (This machine's go 1.19 cannot read a `toolchain` line at all, so the line itself is not in
/// the project.)
#[test]
fn gopls_of_an_untrusted_project_never_switches_toolchains() {
    agent_testkit::require("gopls");
    agent_testkit::require("bwrap");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("go")).unwrap();
    let root = dir.path().join("go").canonicalize().unwrap();
    std::fs::write(root.join("go.mod"), "module example.com/m\n\ngo 1.19\n").unwrap();
    std::fs::write(
        root.join("main.go"),
        "package main\n\nfunc greet(name string) string {\n\treturn \"hi \" + name\n}\n\nfunc main() {\n\t_ = greet(\"x\")\n}\n",
    )
    .unwrap();
    let config = dir.path().join("config");
    let hover = r#"{"operation": "hover", "path": "main.go", "symbol": "greet", "line": 8}"#;
    for mode in [Mode::Bubblewrap, Mode::Landlock] {
        let ((ok, text), env) = environ_of("gopls", || call(&root, &config, mode, hover));
        assert!(
            ok && text.contains("func greet(name string) string"),
            "{mode:?}: {text}"
        );
        let env = env.unwrap_or_else(|| panic!("{mode:?}: gopls was not seen running"));
        assert!(
            env.lines().any(|l| l == "GOTOOLCHAIN=local"),
            "{mode:?}: gopls's environment:\n{env}"
        );
    }
}
