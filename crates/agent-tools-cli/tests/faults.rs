//! Nothing outlives the run: the real `agent-tools serve` with a language server, a debug
//! adapter and its debuggee, a Python and a Node kernel and a worker running — and processes
//! that left their group (`setsid`, `start_new_session=True`, node `detached`) — is SIGKILLed or
//! SIGTERMed mid-call; within 5 s no process of the run is left. `vibe_kill` and a kernel
//! `reset` end what the worker or the cell started in a new session. Every case failed before
//! agent-proc (the kernels kept running with PPID 1, escaped grandchildren survived everything).
//!
//! Processes are found through `/proc` by parent pid (the host's descendants, collected before
//! it is killed) and by the pids the cells and the worker print; never by name. Whatever a test
//! finds still running at its end it kills, by pid.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn venv() -> PathBuf {
    PathBuf::from(std::env::var_os("AGENT_TOOLS_VENV").expect(
        "AGENT_TOOLS_VENV is not set: run the tests with `cargo xtask test` (debugpy and the python servers live in <workspace>/.tools/venv)",
    ))
}

/// Whether `pid` is alive (exists and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            t[t.rfind(')')? + 1..]
                .split_whitespace()
                .next()
                .map(str::to_string)
        })
        .is_some_and(|s| s != "Z" && s != "X")
}

/// Every live descendant of `root`, by parent pid.
fn descendants(root: u32) -> Vec<u32> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let mut it = stat[close + 1..].split_whitespace();
        let (Some(state), Some(ppid)) = (it.next(), it.next().and_then(|p| p.parse().ok())) else {
            continue;
        };
        if state != "Z" {
            parent.insert(pid, ppid);
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (child, pp) in &parent {
            if *pp == p && !out.contains(child) {
                out.push(*child);
                frontier.push(*child);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Wait up to `limit` for every pid to be gone; the ones still alive then.
fn left_after(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// End, by pid, what a test started and found still running.
fn kill_pids(pids: &[u32]) {
    for p in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .status();
    }
}

/// Describe pids for a failure message: pid and command line.
fn describe(pids: &[u32]) -> String {
    pids.iter()
        .map(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            format!("{p}: {}", cmd.trim())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const WORKER: &str = "#!/bin/sh
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > \"$VIBE_WORKER_ID.grandchild\"
cat >/dev/null
sleep 300
";

const PROG: &str = "import time\nx = 1\ntime.sleep(300)\n";

struct Run {
    dir: tempfile::TempDir,
    c: Client,
    id: i64,
}

impl Run {
    fn start() -> Run {
        Run::start_with(&[])
    }

    /// A run whose host gets `env` besides the fast worker.
    fn start_with(env: &[(&str, &Path)]) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink(venv(), root.join(".venv")).unwrap();
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = 'faults'\n").unwrap();
        std::fs::write(root.join("a.py"), "value = 1\nprint(value)\n").unwrap();
        std::fs::write(root.join("prog.py"), PROG).unwrap();
        let worker = root.join("worker.sh");
        std::fs::write(&worker, WORKER).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut vars = vec![("AGENT_TOOLS_VIBE_FAST", worker.as_path())];
        vars.extend_from_slice(env);
        let c = Client::start_with(root, &["--vibe"], &vars);
        let mut run = Run { dir, c, id: 1 };
        let init = run.rpc(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "agent-tools");
        run.c
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        run
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn host(&self) -> u32 {
        self.c.child.id()
    }

    fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        self.c.rpc(self.id, method, params)
    }

    /// Call a tool; its text (the call must succeed).
    fn call(&mut self, tool: &str, args: Value) -> String {
        let v = self.rpc("tools/call", json!({"name": tool, "arguments": args}));
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_ne!(v["result"]["isError"], true, "{tool} {args}: {text}\n{v}");
        text
    }

    /// Start a call and do not wait for its answer.
    fn call_in_flight(&mut self, tool: &str, args: Value) {
        self.id += 1;
        let id = self.id;
        self.c
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
    }

    /// A python cell that starts `sleep` in a new session; its pid.
    fn python_escapee(&mut self) -> u32 {
        let out = self.call(
            "eval",
            json!({"description": "run one cell of the process fault suite", "language": "python", "code": "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\nprint('pid', p.pid)"}),
        );
        pid_in(&out)
    }

    /// A node cell that starts `sleep` detached; its pid.
    fn node_escapee(&mut self) -> u32 {
        let out = self.call(
            "eval",
            json!({"description": "run one cell of the process fault suite", "language": "javascript", "code": "const c = require('child_process').spawn('sleep', ['300'], {detached: true, stdio: 'ignore'}); c.unref(); console.log('pid', c.pid)"}),
        );
        pid_in(&out)
    }

    /// A python cell whose grandchild clears its environment (no run tag) and double-forks into
    /// a new session (no parent of ours): issue 41's orphan; its pid.
    fn untagged_orphan(&mut self) -> u32 {
        let out = self.call(
            "eval",
            json!({"description": "run one cell of the process fault suite", "language": "python", "code": "import subprocess\nout = subprocess.run(['env', '-i', 'sh', '-c', 'setsid sleep 305 </dev/null >/dev/null 2>&1 & echo $!'], capture_output=True, text=True).stdout\nprint('pid', out.strip())"}),
        );
        let pid = pid_in(&out);
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&env).contains("AGENT_TOOLS_RUN_"),
            "the orphan carries no tag"
        );
        pid
    }

    /// Start a worker; the pid of the grandchild it starts in a new session.
    fn worker_escapee(&mut self) -> (String, u32) {
        let out = self.call("vibe_spawn", json!({"brief": "sleep", "label": "sleeper"}));
        let id = out
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| {
                w.starts_with('w') && w[1..].chars().all(|c| c.is_ascii_digit()) && w.len() > 1
            })
            .unwrap_or_else(|| panic!("no worker id in: {out}"))
            .to_string();
        let file = self.root().join(format!("{id}.grandchild"));
        // The shell creates the file before it writes the pid: wait for a whole line.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut text = String::new();
        while Instant::now() < deadline {
            text = std::fs::read_to_string(&file).unwrap_or_default();
            if text.ends_with('\n') {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (
            id,
            text.trim()
                .parse()
                .unwrap_or_else(|_| panic!("no pid in {file:?}: {text:?}")),
        )
    }

    /// Everything at once: a language server, a debug session stopped at a breakpoint, a Python
    /// and a Node kernel, a worker, and three processes that left their group. Returns the
    /// escapees' pids.
    fn everything(&mut self) -> Vec<u32> {
        self.call(
            "lsp",
            json!({"operation": "hover", "file": "a.py", "line": 2, "symbol": "value"}),
        );
        self.call(
            "debug",
            json!({"op": "breakpoints", "file": "prog.py", "lines": [2]}),
        );
        let launched = self.call("debug", json!({"op": "launch", "program": "prog.py"}));
        assert!(launched.contains("prog.py:2"), "{launched}");
        let py = self.python_escapee();
        let js = self.node_escapee();
        let (_, worker) = self.worker_escapee();
        let orphan = self.untagged_orphan();
        vec![py, js, worker, orphan]
    }
}

fn pid_in(text: &str) -> u32 {
    text.split("pid ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in: {text}"))
}

/// Kill the host with `signal` while a cell runs; every process of the run must be gone 5 s
/// later.
fn host_dies(signal: &str) {
    let mut run = Run::start();
    let escapees = run.everything();
    run.call_in_flight(
        "eval",
        json!({"description": "run one cell of the process fault suite", "language": "python", "code": "import time\ntime.sleep(300)"}),
    );
    std::thread::sleep(Duration::from_millis(500));
    let host = run.host();
    let mut pids = descendants(host);
    for p in &escapees {
        if !pids.contains(p) {
            pids.push(*p);
        }
    }
    // A language server, debugpy and its debuggee, two kernels, a worker, the escapees.
    assert!(pids.len() >= 8, "too few processes:\n{}", describe(&pids));
    assert!(
        escapees.iter().all(|p| alive(*p)),
        "{}",
        describe(&escapees)
    );
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &host.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = run.c.child.wait().unwrap();
    let left = left_after(&pids, Duration::from_secs(5));
    let shown = describe(&left);
    kill_pids(&left);
    assert!(
        left.is_empty(),
        "after {signal} of the host ({status}), still running:\n{shown}"
    );
    if signal == "TERM" {
        assert_eq!(
            status.code(),
            Some(143),
            "the host handles SIGTERM and exits"
        );
    }
}

#[test]
fn a_sigkilled_host_leaves_no_process_of_the_run() {
    host_dies("KILL");
}

#[test]
fn a_sigtermed_host_ends_every_process_of_the_run_then_exits() {
    host_dies("TERM");
}

/// A grandchild the worker started in a new session ends with `vibe_kill`.
#[test]
fn vibe_kill_ends_what_the_worker_started_in_a_new_session() {
    let mut run = Run::start();
    let (id, grandchild) = run.worker_escapee();
    assert!(alive(grandchild));
    let out = run.call("vibe_kill", json!({"worker_id": id}));
    let left = left_after(&[grandchild], Duration::from_secs(5));
    kill_pids(&left);
    assert!(left.is_empty(), "vibe_kill left {left:?} running: {out}");
    assert!(alive(run.host()), "the host keeps serving");
}

/// Processes a cell started in a new session (Python) or detached (Node) end with `reset`.
#[test]
fn kernel_reset_ends_what_a_cell_started_in_a_new_session() {
    let mut run = Run::start();
    let py = run.python_escapee();
    let js = run.node_escapee();
    assert!(alive(py) && alive(js));
    let orphan = run.untagged_orphan();
    assert!(alive(orphan));
    run.call("eval", json!({"description": "run one cell of the process fault suite", "language": "python", "code": "1", "reset": true}));
    let left = left_after(&[py, orphan], Duration::from_secs(5));
    kill_pids(&left);
    assert!(left.is_empty(), "python reset left {left:?} running");
    assert!(
        alive(js),
        "a python reset leaves the node kernel's processes alone"
    );
    run.call("eval", json!({"description": "run one cell of the process fault suite", "language": "javascript", "code": "1", "reset": true}));
    let left = left_after(&[js], Duration::from_secs(5));
    kill_pids(&left);
    assert!(left.is_empty(), "javascript reset left {left:?} running");
}

/// Issue 41: the reaper woke on end-of-file of a pipe whose write end only the host held; a
/// cell's daemon that reopened that pipe through `/proc/<host>/fd/N` held a write end too, so
/// after a SIGKILL of the host the reaper slept on and the daemon survived. The reaper now also
/// watches the host's pid itself (a pidfd), which no child can hold open.
#[test]
fn a_daemon_holding_the_reaper_pipe_open_does_not_outlive_a_sigkilled_host() {
    let mut run = Run::start();
    let code = "import os, subprocess, sys
host = os.getppid()
while True:
    stat = open(f'/proc/{host}/stat').read()
    comm = stat[stat.index('(') + 1:stat.rindex(')')]
    if comm.startswith('agent-tools') or host <= 1:
        break
    host = int(stat[stat.rindex(')') + 2:].split()[1])
held = []
for n in os.listdir(f'/proc/{host}/fd'):
    try:
        if os.readlink(f'/proc/{host}/fd/{n}').startswith('pipe:'):
            held.append(os.open(f'/proc/{host}/fd/{n}', os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
p = subprocess.Popen(['sleep', '300'], pass_fds=held, start_new_session=True)
print('pid', p.pid, 'holding', len(held), 'pipe ends of host', host)";
    let out = run.call(
        "eval",
        json!({"description": "a daemon holding the host's pipes", "language": "python", "code": code}),
    );
    let daemon = pid_in(&out);
    assert!(
        out.contains(&format!("of host {}", run.host())) && !out.contains("holding 0 "),
        "{out}"
    );
    let host = run.host();
    let mut pids = descendants(host);
    if !pids.contains(&daemon) {
        pids.push(daemon);
    }
    assert!(alive(daemon));
    let sent = std::process::Command::new("kill")
        .args(["-KILL", &host.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    run.c.child.wait().unwrap();
    let left = left_after(&pids, Duration::from_secs(5));
    let shown = describe(&left);
    kill_pids(&left);
    assert!(
        left.is_empty(),
        "after SIGKILL of the host, still running:\n{shown}\n(the cell said: {out})"
    );
}

/// Issue 41, on a machine without a writable cgroup v2 (`AGENT_TOOLS_CGROUP=off`): the host is
/// a subreaper, so an orphan that cleared the run's tag is adopted by it and ended when the host
/// ends on SIGTERM (a SIGKILLed host hands it on to init: that case needs the cgroup).
#[test]
fn without_a_cgroup_a_sigtermed_host_ends_the_orphans_it_adopted() {
    let mut run = Run::start_with(&[("AGENT_TOOLS_CGROUP", Path::new("off"))]);
    let orphan = run.untagged_orphan();
    let host = run.host();
    let ppid = std::fs::read_to_string(format!("/proc/{orphan}/stat"))
        .ok()
        .and_then(|t| {
            t[t.rfind(')')? + 2..]
                .split_whitespace()
                .nth(1)?
                .parse::<u32>()
                .ok()
        });
    assert_eq!(ppid, Some(host), "the host adopted the orphan");
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &host.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = run.c.child.wait().unwrap();
    let left = left_after(&[orphan], Duration::from_secs(5));
    kill_pids(&left);
    assert!(
        left.is_empty(),
        "after SIGTERM of the host ({status}), the orphan {orphan} runs on"
    );
}

/// `doctor` says how a run on this machine holds what its children start: a cgroup here (the
/// tests above need one), the subreaper alone when it is turned off.
#[test]
fn doctor_says_how_a_run_holds_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let doctor = |off: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-tools"));
        cmd.args(["doctor", "--root"]).arg(dir.path());
        if off {
            cmd.env("AGENT_TOOLS_CGROUP", "off");
        } else {
            cmd.env_remove("AGENT_TOOLS_CGROUP");
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    let on = doctor(false);
    assert!(
        on.contains("children: each run gets a cgroup below"),
        "{on}"
    );
    let off = doctor(true);
    assert!(off.contains("held only by the host as subreaper"), "{off}");
}

/// Issue 41: a debuggee's descendant that cleared its environment and double-forked outlived
/// `debug terminate`; it is in the adapter's cgroup now and ends with the session.
#[test]
fn debug_terminate_ends_what_the_debuggee_left_without_its_tag() {
    let mut run = Run::start();
    std::fs::write(
        run.root().join("orphaner.py"),
        "import subprocess\nout = subprocess.run(['env', '-i', 'sh', '-c', 'setsid sleep 307 </dev/null >/dev/null 2>&1 & echo $!'], capture_output=True, text=True).stdout\nopen('orphan.pid', 'w').write(out)\nprint('started', out.strip())\n",
    )
    .unwrap();
    run.call(
        "debug",
        json!({"op": "breakpoints", "file": "orphaner.py", "lines": [4]}),
    );
    let launched = run.call("debug", json!({"op": "launch", "program": "orphaner.py"}));
    assert!(launched.contains("orphaner.py:4"), "{launched}");
    let text = std::fs::read_to_string(run.root().join("orphan.pid")).unwrap();
    let orphan: u32 = text.trim().parse().unwrap();
    let env = std::fs::read(format!("/proc/{orphan}/environ")).unwrap_or_default();
    assert!(
        alive(orphan) && !String::from_utf8_lossy(&env).contains("AGENT_TOOLS_RUN_"),
        "the orphan runs, untagged"
    );
    let out = run.call("debug", json!({"op": "terminate"}));
    let left = left_after(&[orphan], Duration::from_secs(5));
    kill_pids(&left);
    assert!(
        left.is_empty(),
        "debug terminate left {left:?} running: {out}"
    );
    assert!(alive(run.host()), "the host keeps serving");
}

/// Issue 44: a `call` that starts no child (a `grep`) forks no process at all — not even the
/// run's reaper, which now starts just before the first child. Seen from a subreaper that runs
/// the call: every process the host left behind (the reaper, which outlives it to sweep, and any
/// child) is adopted by it and counted as it exits. The control, an `eval` that starts a Python
/// kernel, leaves the reaper to count (the host ends and waits for its kernel itself).
#[test]
fn a_call_that_starts_no_child_forks_no_process() {
    let python = agent_testkit::require("python3");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    // Becomes a subreaper, runs the call, then waits for every process it adopted.
    let counter = "import ctypes, os, subprocess, sys\n\
                   assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0\n\
                   out = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n\
                   n = 0\n\
                   while True:\n\
                   \x20   try:\n\
                   \x20       os.wait()\n\
                   \x20       n += 1\n\
                   \x20   except ChildProcessError:\n\
                   \x20       break\n\
                   print(n, out.returncode, out.stdout.replace('\\n', ' '))\n";
    let run = |tool: &str, args: &str| -> (u32, String) {
        let out = std::process::Command::new(&python)
            .args([
                "-c",
                counter,
                env!("CARGO_BIN_EXE_agent-tools"),
                "call",
                tool,
                args,
            ])
            .arg("--root")
            .arg(dir.path())
            .env("PYTHONUNBUFFERED", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let n = text.split_whitespace().next().unwrap().parse().unwrap();
        (n, text)
    };
    let (n, text) = run("grep", r#"{"pattern": "needle"}"#);
    assert!(text.contains("a.txt:1"), "{text}");
    assert_eq!(n, 0, "a grep left processes behind: {text}");
    let (n, text) = run(
        "eval",
        r#"{"language": "python", "code": "print(6 * 7)", "description": "multiply six by seven"}"#,
    );
    assert!(text.contains("42"), "{text}");
    assert!(
        n >= 1,
        "the control counted no process (the reaper expected): {text}"
    );
}
