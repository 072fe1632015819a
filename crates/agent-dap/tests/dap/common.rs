//! Shared helpers: fixture projects, calling `debug`, redaction, process checks.

use agent_dap::DapConfig;
use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub reg: Registry,
    /// Every call and its result, rendered for a snapshot.
    pub transcript: String,
    /// Pids seen in results (adapter and debuggee), checked at the end.
    pub pids: Vec<u32>,
    /// Extra (text, token) pairs replaced in the transcript.
    pub redact: Vec<(String, String)>,
    /// Whether the transcript records each result's structured content too (a line
    /// `structured: {…}` after its text); for sessions whose every value is deterministic.
    pub structured: bool,
}

// A missing real program fails the test (never skips); the venv holds debugpy. Both from the
// test kit every family shares.
pub use agent_testkit::{require, venv};

impl Fixture {
    pub fn new(files: &[(&str, &str)], config: DapConfig) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, text).expect("write fixture");
        }
        let reg = Registry::new(RunInfo {
            root: dir.path().to_path_buf(),
            ..Default::default()
        });
        agent_dap::attach(
            &reg,
            DapConfig {
                conversation_id: Some("conv-1".into()),
                ..config
            },
        );
        Fixture {
            dir,
            reg,
            transcript: String::new(),
            pids: Vec::new(),
            redact: Vec::new(),
            structured: false,
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Symlink `.venv` to the test venv (so the project has its own python with debugpy).
    pub fn link_venv(&self) {
        std::os::unix::fs::symlink(venv(), self.root().join(".venv")).expect("symlink .venv");
    }

    /// Run a command in the fixture root; panic with its output on failure.
    pub fn run(&self, program: &str, args: &[&str]) {
        let out = std::process::Command::new(program)
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap_or_else(|e| panic!("cannot run `{program}`: {e}; the setup must install it"));
        assert!(
            out.status.success(),
            "`{program} {}` failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Call `debug` and record the exchange.
    pub async fn call(&mut self, args: Value) -> ToolOutput {
        let out = self.reg.call("debug", args.clone(), Surface::Full).await;
        if let Some(s) = &out.structured {
            for key in ["adapter_pid", "debuggee_pid"] {
                if let Some(p) = s.get(key).and_then(Value::as_u64) {
                    self.pids.push(p as u32);
                }
            }
        }
        let mut args = args;
        let op = args
            .as_object_mut()
            .and_then(|o| o.remove("operation").or_else(|| o.remove("op")))
            .unwrap_or(Value::Null);
        let op = op.as_str().unwrap_or("?").to_string();
        let shown = if args.as_object().is_some_and(|o| o.is_empty()) {
            String::new()
        } else {
            format!(" {args}")
        };
        self.transcript.push_str(&format!(
            "> {op}{shown}\n{}{}\n",
            if out.is_error { "ERROR: " } else { "" },
            out.text
        ));
        if self.structured
            && let Some(s) = &out.structured
        {
            let mut s = s.clone();
            redact_ids(&mut s);
            self.transcript.push_str(&format!("structured: {s}\n"));
        }
        self.transcript.push('\n');
        out
    }

    /// Call, and require success.
    pub async fn ok(&mut self, args: Value) -> ToolOutput {
        let out = self.call(args.clone()).await;
        assert!(!out.is_error, "{args} failed: {}", out.text);
        out
    }

    /// Call and require success, without recording the exchange (output that depends on the
    /// toolchain version).
    pub async fn quiet(&mut self, args: Value) -> ToolOutput {
        let out = self.reg.call("debug", args.clone(), Surface::Full).await;
        assert!(!out.is_error, "{args} failed: {}", out.text);
        out
    }

    /// The variables of a frame's first scope (its locals): `scopes`, then `variables`, both
    /// recorded in the transcript.
    pub async fn locals(&mut self, frame_id: i64) -> ToolOutput {
        let scopes = self.ok(json!({"op": "scopes", "frame_id": frame_id})).await;
        let reference = scopes
            .structured
            .as_ref()
            .and_then(|v| v["scopes"][0]["reference"].as_i64())
            .expect("`scopes` returns the first scope's reference");
        self.ok(json!({"op": "variables", "reference": reference}))
            .await
    }

    /// Call, and require an error.
    pub async fn err(&mut self, args: Value) -> ToolOutput {
        let out = self.call(args.clone()).await;
        assert!(
            out.is_error,
            "{args} should fail but returned: {}",
            out.text
        );
        out
    }

    /// The transcript with temp paths, ids and pids redacted.
    pub fn redacted(&self) -> String {
        let root = self.root().canonicalize().expect("root");
        let mut t = self
            .transcript
            .replace(&root.display().to_string(), "[root]");
        t = t.replace(&self.root().display().to_string(), "[root]");
        t = t.replace(&venv().display().to_string(), "[venv]");
        for (from, to) in &self.redact {
            t = t.replace(from.as_str(), to);
        }
        t
    }

    /// Call `terminate` (if anything is live) and check every process seen is gone.
    pub async fn finish(&mut self) {
        let _ = self
            .reg
            .call("debug", json!({"op": "terminate"}), Surface::Full)
            .await;
        assert_gone(&self.pids).await;
    }
}

/// Thread ids and pids in structured content (they change from run to run) as tokens; frame ids
/// and references are left to [`filters`], as in the text.
fn redact_ids(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                let token = match k.as_str() {
                    "thread_id" => "[tid]",
                    "adapter_pid" | "debuggee_pid" => "[pid]",
                    _ => {
                        redact_ids(v);
                        continue;
                    }
                };
                if v.is_number() {
                    *v = json!(token);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_ids),
        _ => {}
    }
}

/// Filters for snapshots: ids that change from run to run.
pub fn filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"frame_id \d+", "frame_id [id]"),
        (r"frame \d+", "frame [id]"),
        (r"reference \d+", "reference [ref]"),
        (r#""frame_id":\d+"#, r#""frame_id":[id]"#),
        (r#""reference":\d+"#, r#""reference":[ref]"#),
        (r"thread \d+", "thread [tid]"),
        (r"- \d+: ", "- [tid]: "),
        (r"age \d\S*", "age [t]"),
        (r"0x[0-9a-fA-F]+", "[addr]"),
        (r"::h[0-9a-f]{16}", "::[hash]"),
        (r"/rustc/[0-9a-f]+/", "/rustc/[commit]/"),
        // How many register sets lldb shows depends on the CPU (AVX, AVX-512, …).
        (
            r"Registers: reference \[ref\], \d+ variable\(s\)",
            "Registers: reference [ref], [n] variable(s)",
        ),
    ]
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent's reaping is pending.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next());
            state != Some("Z")
        }
    }
}

fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        // fields[0] = state, fields[2] = pgrp
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            out.push(pid);
        }
    }
    out
}

/// Wait (bounded) until every pid and every process group they led is gone.
pub async fn assert_gone(pids: &[u32]) {
    assert!(!pids.is_empty(), "no pids were reported to check");
    for _ in 0..100 {
        if pids
            .iter()
            .all(|p| !alive(*p) && group_members(*p).is_empty())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left: Vec<String> = pids
        .iter()
        .map(|p| format!("{p}: alive={} group={:?}", alive(*p), group_members(*p)))
        .collect();
    panic!("processes left behind: {}", left.join("; "));
}

/// A config with generous waits for a loaded CI machine.
pub fn config() -> DapConfig {
    DapConfig {
        run_wait: Duration::from_secs(30),
        request_timeout: Duration::from_secs(30),
        ..DapConfig::default()
    }
}
