//! Issues 23, 39 and 40, repository code on the read tier: a read-only `lsp hover` of a Rust
//! project the user does not trust runs none of the programs the repository supplies — not the
//! `rustc-wrapper` or `runner` of its `.cargo/config.toml`, not the toolchain its
//! `rust-toolchain.toml` names by `path`, not its `build.rs`, not its proc macro, not the
//! `rustc` of a `rust-project.json` sysroot. Checked with the real rust-analyzer through the
//! `agent-tools` binary, started as a user's shell starts it (no `RUSTUP_TOOLCHAIN` inherited
//! from cargo), with the default containment both where bubblewrap is installed and where it is
//! hidden (a private mount namespace binds `/dev/null` over it, so the host falls back to
//! Landlock), with only the environment layer (`untrusted_sandbox: "none"`), and trusted.
//!
//! Each program reports to a Unix socket the test listens on (`agent_testkit::reports`), which
//! a contained program can still reach; a marker file could not show it, since a contained
//! program may write nowhere the test looks. Every contained run also starts a probe server of
//! the user's own config that tries to write in the workspace and reports what happened, so each
//! wall is shown to let a report through (the check can fail there), and to refuse the write.
//! Trusted, the repository's programs do run and report.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_testkit::reports::{Reports, marks, probe_script, rust_reporter, sh_reporter};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

fn exe(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The host toolchain's real binary `name` (asked from `/`, outside any project).
fn real(name: &str) -> PathBuf {
    let out = Command::new("rustup")
        .args(["which", name])
        .current_dir("/")
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .expect("rustup is needed (installed with the toolchain)");
    assert!(out.status.success(), "rustup which {name}: {out:?}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Where a call's host runs: with bubblewrap installed, or with it hidden by a private mount
/// namespace (`/dev/null` bound over it, so no lookup finds it).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wall {
    Bubblewrap,
    Hidden,
}

/// What `lsp status` says of the default containment behind each wall.
fn contained_by(wall: Wall) -> &'static str {
    match wall {
        Wall::Bubblewrap => "run contained: bubblewrap",
        Wall::Hidden => "run contained: Landlock ABI",
    }
}

/// `agent-tools call lsp ARGS` on `root` with the user's config folder `config`, started without
/// cargo's `RUSTUP_TOOLCHAIN` (as from a shell), behind `wall`.
fn call(wall: Wall, root: &Path, config: &Path, args: &str) -> (bool, String) {
    let mut cmd = match wall {
        Wall::Bubblewrap => Command::new(BIN),
        Wall::Hidden => agent_testkit::without_bwrap(BIN),
    };
    let out = cmd
        .args(["call", "lsp", args, "--root"])
        .arg(root)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env("XDG_CONFIG_HOME", config)
        .output()
        .unwrap();
    assert!(
        !agent_testkit::hidden_bwrap_failed(&out),
        "could not hide bwrap: {out:?}"
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// One test's ground: a folder under `/var/tmp` (where a program behind either wall sees it:
/// bubblewrap covers `/tmp` and the home folder) holding the project, the user's config folder,
/// the probe server and the report socket.
struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    reports: Reports,
    /// Each program also creates `{mark}NAME` if it may (it never may when contained).
    mark: String,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::Builder::new()
            .prefix("agent-tools-untrusted-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.probe"), "probe\n").unwrap();
        let reports = Reports::listen(&base.join("marks"));
        let mark = format!("{}/RAN-", base.join("marks").display());
        std::fs::write(
            base.join("probe.py"),
            probe_script(
                &reports.sock().display().to_string(),
                &root.join("RAN-probe").display().to_string(),
            ),
        )
        .unwrap();
        Scene {
            config: base.join("config"),
            _dir: dir,
            root,
            reports,
            mark,
        }
    }

    fn sock(&self) -> String {
        self.reports.sock().display().to_string()
    }

    /// The user's own `lsp.json`: `extra`'s fields and a probe server for `.probe` files.
    fn user_config(&self, extra: serde_json::Value) {
        let probe = self.config.parent().unwrap().join("probe.py");
        let mut body = serde_json::json!({"servers": {"probe": {
            "language": "probe",
            "commands": [["/usr/bin/python3", probe]],
            "extensions": {"probe": "probe"},
            "root_markers": ["a.probe"],
        }}});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        user_config(&self.config, body);
    }

    fn call(&self, wall: Wall, args: &str) -> (bool, String) {
        call(wall, &self.root, &self.config, args)
    }

    /// `hover` behind `wall`, then the probe server's hover and `status`: the hover's text, the
    /// status and what was reported. The probe's own report is checked here: it reached the
    /// socket from inside the wall (so a program of the project that ran would have been
    /// heard), and its write in the workspace was refused behind a wall (with only the
    /// environment layer it was not: the file is removed again).
    fn contained_hover(&self, wall: Wall, hover: &str) -> (String, String, Vec<String>) {
        let (ok, text) = self.call(wall, hover);
        assert!(ok, "{wall:?}: {text}");
        let probe = r#"{"operation": "hover", "path": "a.probe", "line": 1, "symbol": "probe"}"#;
        let _ = self.call(wall, probe);
        let (_, status) = self.call(wall, r#"{"operation": "status"}"#);
        let mut seen = self.reports.take();
        let walled = ["run contained: bubblewrap", "run contained: Landlock"]
            .iter()
            .any(|w| status.contains(w));
        let want = if walled {
            "probe: write refused"
        } else {
            "probe: wrote in the workspace"
        };
        assert!(
            seen.iter().any(|s| s == want),
            "{wall:?}: the probe was not heard ({want}): {seen:?}\n{status}"
        );
        seen.retain(|s| !s.starts_with("probe: "));
        let _ = std::fs::remove_file(self.root.join("RAN-probe"));
        (text, status, seen)
    }

    /// Untrusted, behind either wall (the default containment: bubblewrap where it is installed,
    /// Landlock where it is hidden): `hover` answers with `answer`, `status` names the wall, and
    /// no program of the project was heard or left a mark (else: `what` ran).
    fn nothing_runs_behind_either_wall(&self, hover: &str, answer: &str, what: &str) {
        for wall in WALLS {
            let (text, status, seen) = self.contained_hover(wall, hover);
            assert!(text.contains(answer), "{wall:?}: {text}");
            assert!(status.contains(contained_by(wall)), "{wall:?}: {status}");
            assert_eq!(seen, Vec::<String>::new(), "{wall:?}: {what}");
            assert_eq!(self.marks(), Vec::<String>::new(), "{wall:?}");
        }
    }

    /// What ran, heard or marked (a program that runs uncontained may be ended, with the host,
    /// between its mark and its report): for the trusted controls.
    fn ran(&self) -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> = self.reports.take().into_iter().collect();
        out.extend(
            self.marks()
                .iter()
                .map(|m| m.trim_start_matches("RAN-").to_string()),
        );
        out
    }

    /// The names of the `RAN-*` files the programs left.
    fn marks(&self) -> Vec<String> {
        marks(Path::new(&self.mark).parent().unwrap())
    }
}

/// A crate whose every project-supplied program reports when it runs: the `rustc-wrapper` and
/// `runner` of its `.cargo/config.toml`, the `rust-analyzer`, `cargo` and `rustc` of the path
/// toolchain its `rust-toolchain.toml` names (each execs the host's, so trusted the project
/// still loads), and its `build.rs`.
fn hostile_crate(scene: &Scene) {
    let root = &scene.root;
    let report_sh = sh_reporter(&scene.sock(), &scene.mark);
    let report_rs = rust_reporter(&scene.sock(), &scene.mark);
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("Cargo.lock"),
        "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "/// Makes a greeter.\npub fn make_greeter(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n\npub fn use_it() -> String {\n    make_greeter(\"x\")\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("build.rs"),
        format!("{report_rs}\nfn main() {{\n    report(\"build-rs\");\n}}\n"),
    )
    .unwrap();
    exe(
        &root.join("tools/wrap.sh"),
        &format!("#!/bin/sh\n{report_sh}report wrapper\nexec \"$@\"\n"),
    );
    std::fs::create_dir_all(root.join(".cargo")).unwrap();
    std::fs::write(
        root.join(".cargo/config.toml"),
        "[build]\nrustc-wrapper = \"tools/wrap.sh\"\n\n[target.x86_64-unknown-linux-gnu]\nrunner = \"tools/wrap.sh\"\n",
    )
    .unwrap();
    // rustup takes a path toolchain by absolute path (it refuses a relative one).
    std::fs::write(
        root.join("rust-toolchain.toml"),
        format!("[toolchain]\npath = {:?}\n", root.join("tc")),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("tc/lib")).unwrap();
    for name in ["rust-analyzer", "cargo", "rustc"] {
        exe(
            &root.join("tc/bin").join(name),
            &format!(
                "#!/bin/sh\n{report_sh}report tc-{name}\nexec '{}' \"$@\"\n",
                real(name).display()
            ),
        );
    }
}

const HOVER: &str =
    r#"{"operation": "hover", "file": "src/lib.rs", "line": 7, "symbol": "make_greeter"}"#;

const WALLS: [Wall; 2] = [Wall::Bubblewrap, Wall::Hidden];

#[test]
fn a_read_only_hover_runs_no_program_an_untrusted_repository_supplies() {
    agent_testkit::require("rust-analyzer");
    agent_testkit::require("bwrap");
    let scene = Scene::new();
    hostile_crate(&scene);

    // Not trusted, the default containment: bubblewrap where it is installed, Landlock where
    // it is not.
    scene.user_config(serde_json::json!({}));
    scene.nothing_runs_behind_either_wall(HOVER, "make_greeter", "project code ran");

    // Not trusted, bubblewrap off: the environment layer alone keeps cargo and rustup to the
    // host's own toolchain and no wrapper (and the probe's write goes through: no wall).
    scene.user_config(serde_json::json!({"untrusted_sandbox": "none"}));
    let (text, status, seen) = scene.contained_hover(Wall::Bubblewrap, HOVER);
    assert!(text.contains("make_greeter"), "{text}");
    assert!(status.contains("run contained: not sandboxed"), "{status}");
    assert_eq!(
        seen,
        Vec::<String>::new(),
        "environment layer: project code ran"
    );
    assert_eq!(scene.marks(), Vec::<String>::new());

    // Trusted: the project's toolchain and wrapper do run.
    scene.user_config(serde_json::json!({"trusted_projects": [scene.root]}));
    let (ok, text) = scene.call(Wall::Bubblewrap, HOVER);
    assert!(ok, "{text}");
    let seen = scene.ran();
    for name in ["tc-rust-analyzer", "wrapper"] {
        assert!(seen.contains(name), "{name}: {seen:?} / {text}");
    }
}

/// A proc macro is the repository's code run inside rust-analyzer's proc-macro server: not for
/// an untrusted project behind either wall (and contained if it were), but for a trusted one.
#[test]
fn a_proc_macro_of_an_untrusted_repository_is_not_expanded() {
    agent_testkit::require("rust-analyzer");
    agent_testkit::require("bwrap");
    let scene = Scene::new();
    let root = &scene.root;
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("pm/src")).unwrap();
    let w = |rel: &str, text: &str| std::fs::write(root.join(rel), text).unwrap();
    w(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\npm = { path = \"pm\" }\n\n[workspace]\nmembers = [\"pm\"]\n",
    );
    w(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"demo\"\nversion = \"0.1.0\"\ndependencies = [\n \"pm\",\n]\n\n[[package]]\nname = \"pm\"\nversion = \"0.1.0\"\n",
    );
    w(
        "src/lib.rs",
        "pm::mark!();\n\n/// Makes a greeter.\npub fn make_greeter() -> String {\n    marked()\n}\n",
    );
    w(
        "pm/Cargo.toml",
        "[package]\nname = \"pm\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\nproc-macro = true\n",
    );
    w(
        "pm/src/lib.rs",
        &format!(
            "use proc_macro::TokenStream;\n\n{}\n#[proc_macro]\npub fn mark(_: TokenStream) -> TokenStream {{\n    report(\"proc-macro\");\n    \"fn marked() -> String {{ String::new() }}\".parse().unwrap()\n}}\n",
            rust_reporter(&scene.sock(), &scene.mark)
        ),
    );
    let hover =
        r#"{"operation": "hover", "file": "src/lib.rs", "line": 4, "symbol": "make_greeter"}"#;

    scene.user_config(serde_json::json!({}));
    scene.nothing_runs_behind_either_wall(
        hover,
        "make_greeter",
        "an untrusted project's proc macro was expanded",
    );

    // Trusted: rust-analyzer builds and expands it (it may take a while: a build). Each call is
    // a fresh host whose rust-analyzer loads the project again.
    scene.user_config(serde_json::json!({"trusted_projects": [root]}));
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..120 {
        let (ok, text) = scene.call(Wall::Bubblewrap, hover);
        assert!(ok, "{text}");
        seen.extend(scene.ran());
        if seen.contains("proc-macro") {
            break;
        }
    }
    assert!(
        seen.contains("proc-macro"),
        "a trusted project's proc macro was never expanded: {seen:?}"
    );
}

/// The adversary's repro (issue 40): a `rust-project.json` whose `sysroot` is the repository's
/// own folder made rust-analyzer run `fake/bin/rustc` on a read-only hover, even with `RUSTC`
/// pinned; from inside bubblewrap it then wrote on the host through `/proc/<pid>/root`. The
/// fake rustc here reports, tries exactly that write, and a plain one. For an untrusted root
/// rust-analyzer is now told to load the root's `Cargo.toml` (so it never reads the file),
/// behind either wall (a root whose only project is a `rust-project.json` is refused with the
/// reason: `contain`'s unit tests). Trusted, the fake rustc does run.
#[test]
fn a_rust_project_json_sysroot_runs_nothing_on_a_read_only_hover() {
    agent_testkit::require("rust-analyzer");
    agent_testkit::require("bwrap");
    let scene = Scene::new();
    hostile_crate(&scene);
    let root = &scene.root;
    let via_proc = format!("{}via-proc", scene.mark);
    exe(
        &root.join("fake/bin/rustc"),
        &format!(
            "#!/bin/sh\n{}report fake-rustc\nfor p in /proc/[0-9]*; do echo via-proc >> \"$p/root{via_proc}\" 2>/dev/null; done\nexec '{}' \"$@\"\n",
            sh_reporter(&scene.sock(), &scene.mark),
            real("rustc").display()
        ),
    );
    std::fs::write(
        root.join("rust-project.json"),
        serde_json::json!({
            "sysroot": root.join("fake"),
            "crates": [{"root_module": root.join("src/lib.rs"), "edition": "2021", "deps": []}],
        })
        .to_string(),
    )
    .unwrap();
    scene.user_config(serde_json::json!({}));
    scene.nothing_runs_behind_either_wall(HOVER, "make_greeter", "the repository's rustc ran");
    // Trusted: rust-analyzer loads the rust-project.json and runs its sysroot's rustc.
    scene.user_config(serde_json::json!({"trusted_projects": [root]}));
    let _ = scene.call(Wall::Bubblewrap, HOVER);
    let seen = scene.ran();
    assert!(seen.contains("fake-rustc"), "{seen:?}");
}

/// The user's own `lsp.json` in the config folder `config`.
fn user_config(config: &Path, body: serde_json::Value) {
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    std::fs::write(config.join("agent-tools/lsp.json"), body.to_string()).unwrap();
}

#[test]
fn a_project_cannot_choose_its_own_containment() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".agent-tools")).unwrap();
    std::fs::write(
        root.join(".agent-tools/lsp.json"),
        r#"{"untrusted_sandbox": "none"}"#,
    )
    .unwrap();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let config = outside.path().join("config");
    user_config(&config, serde_json::json!({}));
    let (_, status) = call(
        Wall::Bubblewrap,
        &root,
        &config,
        r#"{"operation": "status"}"#,
    );
    assert!(
        status.contains("`untrusted_sandbox` is honoured in the user's own file only"),
        "{status}"
    );
}

/// Issue 39: a harness that already asked the person (Claude Code, Codex and Gemini CLI ask
/// before they open a folder) trusts the project with `--trust` or `AGENT_TOOLS_TRUST=1`: its
/// servers are not contained and the project's own config counts. Without either, status says
/// how they are contained.
#[test]
fn the_host_trusts_the_project_when_told_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let config = dir.path().join("config");
    user_config(&config, serde_json::json!({}));
    let status = |extra: &[&str], env: Option<&str>| -> serde_json::Value {
        let mut cmd = Command::new(BIN);
        cmd.args([
            "call",
            "lsp",
            r#"{"operation": "status"}"#,
            "--json",
            "--root",
        ])
        .arg(&root)
        .args(extra)
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("AGENT_TOOLS_TRUST");
        if let Some(v) = env {
            cmd.env("AGENT_TOOLS_TRUST", v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let plain = status(&[], None);
    assert_eq!(plain["structuredContent"]["trusted"], false, "{plain}");
    assert!(
        plain["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("run contained"),
        "{plain}"
    );
    for (extra, env) in [(&["--trust"][..], None), (&[][..], Some("1"))] {
        let v = status(extra, env);
        assert_eq!(
            v["structuredContent"]["trusted"], true,
            "{extra:?} {env:?}: {v}"
        );
        assert!(
            !v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("run contained"),
            "{v}"
        );
    }
}
