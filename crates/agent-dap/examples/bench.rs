//! `cargo run --release -p agent-dap --example dap-bench` — one step's round trip (step_over until
//! the debuggee has stopped again) through the `debug` tool, against a raw DAP client driving
//! the same adapter (debugpy) in the same run.
//!
//! The tool answers a stop with its snapshot (top frames, the top frame's locals), so the raw
//! client is timed bare (`next` → `stopped`) and doing the same work (`next` → `stopped` →
//! `stackTrace` of 5 frames → `scopes` → `variables`). The tool launches the debuggee with
//! `TCP_NODELAY` on its sockets (a `sitecustomize` on its `PYTHONPATH`); the raw client is
//! timed with the same treatment, and once untreated (what a plain client gets: Nagle and
//! delayed ACKs on the adapter↔debuggee socket). The overhead of the tool is its time minus the
//! equal-work treated raw time; the goal is at most 2 ms, and a step at most 5 ms.

// A benchmark harness: a failed step is a broken run, reported by the panic.
#![allow(clippy::unwrap_used)]

use agent_dap::DapConfig;
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const STEPS: usize = 200;
/// Untreated steps take ~88 ms each: fewer of them.
const UNTREATED_STEPS: usize = 30;
/// The same `sitecustomize` the tool gives the debuggee.
const NODELAY_SITE: &str = include_str!("../src/adapters/nodelay_sitecustomize.py");
const PROGRAM: &str = "i = 0\nwhile True:\n    i += 1\n    i -= 1\n";

fn python() -> PathBuf {
    match std::env::var_os("AGENT_TOOLS_VENV") {
        Some(v) => PathBuf::from(v).join("bin/python"),
        None => PathBuf::from("python3"),
    }
}

fn stats(name: &str, mut v: Vec<Duration>) -> f64 {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(v[v.len() / 2]);
    println!(
        "{name:<34} median {median:7.3} ms   p90 {:7.3} ms   min {:7.3} ms   (n = {})",
        ms(v[v.len() * 9 / 10]),
        ms(v[0]),
        v.len()
    );
    median
}

async fn through_tool(root: &Path) -> Vec<Duration> {
    let reg = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_dap::attach(
        &reg,
        DapConfig {
            conversation_id: Some("bench".into()),
            ..DapConfig::default()
        },
    );
    let call = |args: Value| {
        let reg = reg.clone();
        async move {
            let out = reg.call("debug", args.clone(), Surface::Full).await;
            assert!(!out.is_error, "{args}: {}", out.text);
            out
        }
    };
    call(json!({"op": "breakpoints", "file": "loop.py", "lines": [3]})).await;
    call(json!({"op": "launch", "program": "loop.py"})).await;
    call(json!({"op": "breakpoints", "file": "loop.py", "lines": []})).await;
    let mut times = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        let t = Instant::now();
        let out = call(json!({"op": "step_over"})).await;
        times.push(t.elapsed());
        assert!(out.text.starts_with("stopped (step)"), "{}", out.text);
    }
    call(json!({"op": "terminate"})).await;
    times
}

struct Raw {
    r: BufReader<tokio::process::ChildStdout>,
    w: tokio::process::ChildStdin,
    seq: i64,
}

impl Raw {
    async fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body = serde_json::to_vec(
            &json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments}),
        )
        .unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.w.write_all(&frame).await.unwrap();
        self.w.flush().await.unwrap();
        self.seq
    }

    async fn read(&mut self) -> Value {
        let mut len = 0;
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.r.read_line(&mut line).await.unwrap() > 0,
                "adapter closed"
            );
            let t = line.trim();
            if t.is_empty() && len > 0 {
                break;
            }
            if let Some(v) = t.strip_prefix("Content-Length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        self.r.read_exact(&mut body).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.read().await;
            if pred(&m) {
                return m;
            }
        }
    }
}

async fn raw_client(root: &Path, treated: bool, steps: usize) -> (Vec<Duration>, Vec<Duration>) {
    let site = tempfile::tempdir().expect("tempdir");
    std::fs::write(site.path().join("sitecustomize.py"), NODELAY_SITE).unwrap();
    let mut cmd = agent_proc::Command::new(&agent_proc::Launcher::host(), python())
        .args(["-m", "debugpy.adapter"])
        .stdin_piped()
        .current_dir(root);
    if treated {
        cmd = cmd.env("PYTHONPATH", site.path());
    }
    let child = cmd.spawn().await.expect("start debugpy");
    let mut raw = Raw {
        r: BufReader::new(child.take_stdout().unwrap()),
        w: child.take_stdin().unwrap(),
        seq: 0,
    };
    let is_resp = |s: i64| move |m: &Value| m["type"] == "response" && m["request_seq"] == s;
    let is_event = |e: &'static str| move |m: &Value| m["type"] == "event" && m["event"] == e;
    let s = raw.send("initialize", json!({"adapterID": "debugpy", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"})).await;
    raw.until(is_resp(s)).await;
    let program = root.join("loop.py").display().to_string();
    let env = if treated {
        json!({"PYTHONPATH": site.path().display().to_string()})
    } else {
        json!({})
    };
    raw.send("launch", json!({"program": program, "console": "internalConsole", "redirectOutput": true, "subProcess": false, "env": env})).await;
    raw.until(is_event("initialized")).await;
    let s = raw
        .send(
            "setBreakpoints",
            json!({"source": {"path": program}, "breakpoints": [{"line": 3}]}),
        )
        .await;
    raw.until(is_resp(s)).await;
    raw.send("configurationDone", json!({})).await;
    let stopped = raw.until(is_event("stopped")).await;
    let thread = stopped["body"]["threadId"].as_i64().unwrap();
    let s = raw
        .send(
            "setBreakpoints",
            json!({"source": {"path": program}, "breakpoints": []}),
        )
        .await;
    raw.until(is_resp(s)).await;
    let mut bare = Vec::with_capacity(steps);
    let mut equal = Vec::with_capacity(steps);
    for i in 0..steps * 2 {
        let t = Instant::now();
        raw.send("next", json!({"threadId": thread})).await;
        raw.until(is_event("stopped")).await;
        if i % 2 == 1 {
            let s = raw
                .send("stackTrace", json!({"threadId": thread, "levels": 5}))
                .await;
            let st = raw.until(is_resp(s)).await;
            let frame = st["body"]["stackFrames"][0]["id"].as_i64().unwrap();
            let s = raw.send("scopes", json!({"frameId": frame})).await;
            let sc = raw.until(is_resp(s)).await;
            let reference = sc["body"]["scopes"][0]["variablesReference"]
                .as_i64()
                .unwrap();
            let s = raw
                .send("variables", json!({"variablesReference": reference}))
                .await;
            raw.until(is_resp(s)).await;
            equal.push(t.elapsed());
        } else {
            bare.push(t.elapsed());
        }
    }
    let _ = raw
        .send("disconnect", json!({"terminateDebuggee": true}))
        .await;
    let _ = child.wait(Duration::from_secs(5)).await;
    (bare, equal)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("loop.py"), PROGRAM).unwrap();
    std::fs::write(dir.path().join("requirements.txt"), "").unwrap();
    if let Some(v) = std::env::var_os("AGENT_TOOLS_VENV") {
        std::os::unix::fs::symlink(v, dir.path().join(".venv")).unwrap();
    }
    println!(
        "debug step_over round trip, debugpy, {STEPS} steps each ({UNTREATED_STEPS} untreated)"
    );
    // Warm both paths once, then measure raw and tool in the same run.
    let (slow_bare, slow_equal) = raw_client(dir.path(), false, UNTREATED_STEPS).await;
    let (bare, equal) = raw_client(dir.path(), true, STEPS).await;
    let tool = through_tool(dir.path()).await;
    stats("raw DAP untreated: next -> stopped", slow_bare);
    let slow = stats("raw DAP untreated: + frames, locals", slow_equal);
    let bare = stats("raw DAP nodelay: next -> stopped", bare);
    let equal = stats("raw DAP nodelay: + frames, locals", equal);
    let ours = stats("debug tool: step_over (snapshot)", tool);
    println!(
        "ratio tool / raw(equal work) = {:.3}; added {:.3} ms per step (goal <= 2 ms); tool / raw(bare) = {:.3}; untreated / tool = {:.1}x",
        ours / equal,
        ours - equal,
        ours / bare,
        slow / ours
    );
    println!(
        "calls to see a stop (reason, file:line, frames, locals): before 4 (continue + stack + scopes + variables), now 1"
    );
}
