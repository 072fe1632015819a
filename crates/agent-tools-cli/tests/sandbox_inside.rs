//! Issue 40, the sandbox seen from inside: a language server of an untrusted project, contained
//! as a real one is (`tests/support/inside_view_lsp.py`, a scripted server that reports what it
//! can see and do), answers `lsp hover` with its view, and every answer is asserted — its own
//! pid and user namespaces, no capability, no controlling terminal (`/dev/tty` and `TIOCSTI`
//! fail), an environment built from the allow-list (the HTTP token is in the host only, and no
//! process it can see holds it), the test process (the host's parent) invisible and out of
//! signal reach, no write outside its private `/tmp`, directly or through `/proc/<pid>/root`.
//! The host runs in a real terminal (`script`, a pty that is its controlling terminal), as root
//! and as an ordinary user (`setpriv` to `nobody`), under bubblewrap and under Landlock (the
//! containment where bubblewrap cannot run: no namespaces, so the outside is visible but out
//! of reach — signals refused, `/proc/<pid>` of the outside unreadable). A kernel started by `eval` has no
//! controlling terminal and no token either (every child of ours leads its own session).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");
const TOKEN: &str = "inside-view-token-5f0c9a";

fn probe_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/inside_view_lsp.py")
}

fn open_to_all(p: &Path) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
}

/// A project with one `.iv` file, the user's config naming the probe as its server (the project
/// is not trusted: the default), and what the probe compares itself with.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    marker: PathBuf,
    _marks: tempfile::TempDir,
}

fn fixture(sandbox: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    open_to_all(dir.path());
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join(".inside")).unwrap();
    std::fs::write(root.join("a.iv"), "probe here\n").unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    // The system's Python: `nobody` can run it (a pyenv one under /root it could not).
    let python = Some(PathBuf::from("/usr/bin/python3"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| agent_testkit::require("python3"));
    std::fs::write(
        config.join("agent-tools/lsp.json"),
        json!({"untrusted_sandbox": sandbox, "servers": {"inside": {
            "language": "inside",
            "commands": [[python, probe_script()]],
            "extensions": {"iv": "inside"},
            "root_markers": ["a.iv"],
        }}})
        .to_string(),
    )
    .unwrap();
    // Outside every folder the sandbox may write, writable by anyone (so a refusal is the
    // sandbox's, not the file system's).
    let marks = tempfile::Builder::new()
        .prefix("agent-tools-inside-")
        .tempdir_in("/var/tmp")
        .unwrap();
    open_to_all(marks.path());
    let marker = marks.path().join("escaped");
    let me = |ns: &str| {
        std::fs::read_link(format!("/proc/self/ns/{ns}"))
            .unwrap()
            .display()
            .to_string()
    };
    // The test's session: field 6 of /proc/self/stat (after the parenthesised name).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let sid: i64 = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    std::fs::write(
        root.join(".inside/outside.json"),
        json!({
            "test_pid": std::process::id(),
            "pid_ns": me("pid"),
            "user_ns": me("user"),
            "test_sid": sid,
            "token": TOKEN,
            "marker": marker,
        })
        .to_string(),
    )
    .unwrap();
    for entry in walk(dir.path()) {
        let mode = if entry.is_dir() { 0o777 } else { 0o666 };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    Fixture {
        _dir: dir,
        root,
        config,
        marker,
        _marks: marks,
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// `agent-tools call TOOL ARGS` run in a terminal of its own (`script` gives it a pty as its
/// controlling terminal), with the HTTP token in its environment, optionally as `nobody`.
fn call_in_terminal(f: &Fixture, tool: &str, args: &Value, as_nobody: bool) -> String {
    let script = agent_testkit::require("script");
    let inner = shell_words::join([
        BIN,
        "call",
        tool,
        &args.to_string(),
        "--root",
        &f.root.display().to_string(),
    ]);
    let mut cmd = if as_nobody {
        let mut c = Command::new(agent_testkit::require("setpriv"));
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(script);
        c
    } else {
        Command::new(script)
    };
    let out = cmd
        .args(["-qec", &inner, "/dev/null"])
        .env("AGENT_TOOLS_TOKEN", TOKEN)
        .env("XDG_CONFIG_HOME", &f.config)
        .env("HOME", f.root.parent().unwrap())
        .env_remove("RUSTUP_TOOLCHAIN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The probe's view, contained by `sandbox` (`bubblewrap` or `landlock`, the user's
/// `untrusted_sandbox`), run as root or as `nobody`; and what `lsp status` says contains it.
fn inside_view(as_nobody: bool, sandbox: &str) {
    agent_testkit::require("bwrap");
    let f = fixture(sandbox);
    let args = json!({"operation": "hover", "file": "a.iv", "line": 1, "symbol": "probe"});
    let text = call_in_terminal(&f, "lsp", &args, as_nobody);
    let json_line = text
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no view in the hover: {text}"));
    let v: Value = serde_json::from_str(json_line).unwrap();
    let who = format!(
        "{sandbox}, {}",
        if as_nobody { "as nobody" } else { "as root" }
    );
    assert!(v.get("probe_failed").is_none(), "{who}: {v}");
    if sandbox == "bubblewrap" {
        assert_eq!(
            v["pid_ns_is_outsides"], false,
            "{who}: own pid namespace: {v}"
        );
        assert_eq!(
            v["user_ns_is_outsides"], false,
            "{who}: own user namespace: {v}"
        );
        assert_eq!(v["outside_pid_visible"], false, "{who}: {v}");
        assert_eq!(
            v["signal_outside"], "ESRCH",
            "{who}: signal the outside: {v}"
        );
    } else {
        // No namespaces under Landlock: the outside is visible, and out of reach.
        assert_eq!(
            v["signal_outside"], "EPERM",
            "{who}: signal the outside: {v}"
        );
    }
    assert_eq!(
        v["cap_eff"], "0000000000000000",
        "{who}: no capability: {v}"
    );
    // No controlling terminal (ENXIO); under Landlock the read-write open is refused before
    // that is even asked (EACCES: /dev/tty is not a file it may write).
    let tty = v["open_dev_tty"].as_str().unwrap_or("");
    assert!(
        tty == "ENXIO" || (sandbox == "landlock" && tty == "EACCES"),
        "{who}: no controlling terminal: {v}"
    );
    assert_ne!(v["tiocsti"], "ok", "{who}: TIOCSTI into the terminal: {v}");
    assert_eq!(v["token_in_env"], false, "{who}: the token in its env: {v}");
    assert_eq!(v["token_readable_in_pids"], json!([]), "{who}: {v}");
    let names: Vec<&str> = v["env_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"XDG_RUNTIME_DIR") && !names.iter().any(|n| n.contains("TOKEN")),
        "{who}: an allow-listed environment: {names:?}"
    );
    assert_ne!(v["write_outside"], "ok", "{who}: {v}");
    assert_eq!(v["write_via_proc_root"], json!([]), "{who}: {v}");
    assert_eq!(
        v["write_private_tmp"], "ok",
        "{who}: its private temp folder: {v}"
    );
    assert!(!f.marker.exists(), "{who}: a file was written outside");
    let status = call_in_terminal(&f, "lsp", &json!({"operation": "status"}), as_nobody);
    let expected = if sandbox == "bubblewrap" {
        "run contained: bubblewrap"
    } else {
        "run contained: Landlock ABI"
    };
    assert!(status.contains(expected), "{who}: {status}");
}

#[test]
fn a_contained_server_sees_no_host_token_or_terminal_as_root() {
    inside_view(false, "bubblewrap");
}

#[test]
fn a_contained_server_sees_no_host_token_or_terminal_as_an_ordinary_user() {
    inside_view(true, "bubblewrap");
}

#[test]
fn under_landlock_a_server_reaches_no_host_process_token_or_terminal_as_root() {
    inside_view(false, "landlock");
}

#[test]
fn under_landlock_a_server_reaches_no_host_process_token_or_terminal_as_an_ordinary_user() {
    inside_view(true, "landlock");
}

/// A kernel is exec-tier code run on purpose, uncontained; still, it leads its own session (so
/// it cannot push keystrokes into the person's terminal) and never holds the HTTP token.
#[test]
fn a_kernel_has_no_controlling_terminal_and_no_token() {
    agent_testkit::require("python3");
    let f = fixture("bubblewrap");
    let code = "import os\ntry:\n    os.close(os.open('/dev/tty', os.O_RDWR))\n    print('tty: open')\nexcept OSError as e:\n    print('tty: errno', e.errno)\nprint('token:', 'AGENT_TOOLS_TOKEN' in os.environ)";
    let text = call_in_terminal(
        &f,
        "eval",
        &json!({"description": "probe the terminal from a kernel", "code": code}),
        false,
    );
    // ENXIO (6): no controlling terminal to open.
    assert!(text.contains("tty: errno 6"), "{text}");
    assert!(text.contains("token: False"), "{text}");
}
