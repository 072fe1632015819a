//! The `vibe_*` tools with the command backend and real child processes: small `sh` scripts as
//! worker programs.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface, Tier, ToolOutput};
use agent_vibe::{VibeConfig, WorkerCommand, attach};
use serde_json::{Value, json};
use std::time::Duration;

/// A workspace with worker scripts, and a registry whose vibe tiers run them.
struct Fixture {
    dir: tempfile::TempDir,
    registry: Registry,
}

const ECHO: &str = r#"#!/bin/sh
brief=$(cat)
printf 'worker %s (%s, %s tier) read:\n%s\n' "$VIBE_WORKER_ID" "$VIBE_LABEL" "$VIBE_TIER" "$brief"
"#;

/// Records its pid and a grandchild's pid, then sleeps unless the brief says `finish`.
const SLOW: &str = r#"#!/bin/sh
brief=$(cat)
sleep 600 &
echo "$! $$" >> "$(dirname "$0")/pids"
case "$brief" in
  *finish*) printf 'finished after a message; brief was:\n%s\n' "$brief"; kill $!; exit 0 ;;
esac
sleep 600
echo "slow worker woke up"
"#;

const CRASH: &str = r#"#!/bin/sh
cat > /dev/null
echo "partial output before the crash"
echo "boom: cannot open config" >&2
exit 3
"#;

/// Starts a grandchild in a new session (`setsid`), records its pid and its own, then sleeps.
const SETSID: &str = r#"#!/bin/sh
cat > /dev/null
setsid sleep 600 &
echo "$! $$" >> "$(dirname "$0")/pids"
sleep 600
"#;

/// Writes nothing, ever.
const SILENT: &str = r#"#!/bin/sh
cat > /dev/null
exec sleep 600
"#;

/// Writes a line every 0.2 s.
const CHATTY: &str = r#"#!/bin/sh
cat > /dev/null
while :; do echo tick; sleep 0.2; done
"#;

const LONG: &str = r#"#!/bin/sh
cat > /dev/null
i=0
while [ $i -lt 200 ]; do printf 'line %03d of a long report\n' $i; i=$((i+1)); done
"#;

impl Fixture {
    fn new(fast: &str, good: Option<&str>, tweak: impl FnOnce(&mut VibeConfig)) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [
            ("echo.sh", ECHO),
            ("slow.sh", SLOW),
            ("crash.sh", CRASH),
            ("long.sh", LONG),
            ("setsid.sh", SETSID),
            ("silent.sh", SILENT),
            ("chatty.sh", CHATTY),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, body).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let registry = Registry::new(RunInfo {
            root: dir.path().to_path_buf(),
            ..Default::default()
        });
        let script =
            |n: &str| WorkerCommand::new(dir.path().join(n).display().to_string(), [""; 0]);
        let mut config = VibeConfig {
            fast: Some(script(fast)),
            good: good.map(script),
            vibe_mode: true,
            ..Default::default()
        };
        tweak(&mut config);
        attach(&registry, config);
        Fixture { dir, registry }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.registry.call(tool, args, Surface::ReadOnly).await
    }

    async fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        let out = self.call(tool, args).await;
        assert!(!out.is_error, "{tool} failed: {}", out.text);
        out
    }

    async fn spawn(&self, label: &str, brief: &str) -> String {
        let out = self
            .ok("vibe_spawn", json!({"brief": brief, "label": label}))
            .await;
        out.structured.unwrap()["worker_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Wait (generously) until the worker is no longer running.
    async fn finished(&self, id: &str) -> ToolOutput {
        let out = self
            .ok("vibe_wait", json!({"worker_id": id, "timeout_s": 120}))
            .await;
        assert_ne!(state(&out), "running", "{}", out.text);
        out
    }

    fn redact(&self, text: &str) -> String {
        text.replace(&self.dir.path().display().to_string(), "[ROOT]")
    }

    /// The pids the slow script recorded: (grandchild, worker) per run.
    fn pids(&self) -> Vec<(u32, u32)> {
        std::fs::read_to_string(self.dir.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let mut it = l.split_whitespace().map(|p| p.parse().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            })
            .collect()
    }

    /// Wait until the slow script has recorded `n` runs.
    async fn runs_recorded(&self, n: usize) {
        for _ in 0..600 {
            if self.pids().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the slow worker never recorded run {n}");
    }
}

fn state(out: &ToolOutput) -> String {
    out.structured.as_ref().unwrap()["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether a process is gone (no such pid, or a zombie waiting to be reaped).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                == Some("Z")
        }
    }
}

async fn all_gone(pids: &[u32]) -> bool {
    for _ in 0..300 {
        if pids.iter().all(|p| gone(*p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn elapsed_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            r"after (?:\d+ms|\d+h(?:\d+m)?(?:\d+s)?|\d+m(?:\d+s)?|\d+(?:\.\d)?s)",
            "after [ELAPSED]",
        ),
        (
            r#""elapsed_seconds":\s*[0-9.e-]+"#,
            r#""elapsed_seconds": "[ELAPSED]""#,
        ),
    ]
}

#[test]
fn registered_only_while_vibe_mode_is_on() {
    for vibe in [false, true] {
        let registry = Registry::new(RunInfo::default());
        attach(
            &registry,
            VibeConfig {
                vibe_mode: vibe,
                ..VibeConfig::default()
            },
        );
        let names: Vec<String> = registry
            .list(Surface::ReadOnly)
            .into_iter()
            .filter(|i| i.name.starts_with("vibe_"))
            .inspect(|i| assert_eq!(i.tier, Tier::Read, "{}", i.name))
            .map(|i| i.name)
            .collect();
        let expected: Vec<&str> = if vibe {
            vec![
                "vibe_kill",
                "vibe_list",
                "vibe_send",
                "vibe_spawn",
                "vibe_wait",
            ]
        } else {
            vec![]
        };
        assert_eq!(names, expected, "vibe = {vibe}");
    }
}

#[test]
fn tool_schemas() {
    let registry = Registry::new(RunInfo {
        ..Default::default()
    });
    attach(
        &registry,
        VibeConfig {
            vibe_mode: true,
            ..VibeConfig::default()
        },
    );
    let tools: Vec<Value> = registry
        .list(Surface::Full)
        .into_iter()
        .map(|i| json!({"name": i.name, "description": i.description, "input_schema": i.input_schema}))
        .collect();
    insta::assert_json_snapshot!("vibe_tools", tools);
}

#[tokio::test]
async fn spawn_returns_at_once_and_wait_returns_the_result() {
    let f = Fixture::new("echo.sh", Some("echo.sh"), |_| {});
    let spawned = f
        .ok(
            "vibe_spawn",
            json!({"brief": "rename foo to bar in src/", "label": "rename", "tier": "good"}),
        )
        .await;
    assert_eq!(state(&spawned), "running");
    let id = spawned.structured.as_ref().unwrap()["worker_id"]
        .as_str()
        .unwrap()
        .to_string();
    let done = f.finished(&id).await;
    assert_eq!(state(&done), "done");
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("spawn_and_wait", format!("{}\n---\n{}", spawned.text, done.text));
    });
}

#[tokio::test]
async fn wait_with_a_timeout_returns_the_running_state_and_kill_stops_the_group() {
    let f = Fixture::new("slow.sh", None, |_| {});
    let id = f.spawn("slow", "take your time").await;
    f.runs_recorded(1).await;
    let waited = f
        .call("vibe_wait", json!({"worker_id": id, "timeout_s": 0.5}))
        .await;
    assert!(
        !waited.is_error,
        "a wait timeout is not an error: {}",
        waited.text
    );
    assert_eq!(state(&waited), "running");
    assert!(waited.text.contains("still running"), "{}", waited.text);

    let (grandchild, worker) = f.pids()[0];
    assert!(
        !gone(worker) && !gone(grandchild),
        "both are alive before the kill"
    );
    let killed = f.ok("vibe_kill", json!({"worker_id": id})).await;
    assert_eq!(state(&killed), "killed");
    assert!(
        all_gone(&[worker, grandchild]).await,
        "the worker's process group is gone after vibe_kill"
    );
    let again = f.ok("vibe_kill", json!({"worker_id": id})).await;
    let after = f.ok("vibe_wait", json!({"worker_id": id})).await;
    assert_eq!(state(&after), "killed");
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("wait_timeout_and_kill", format!(
            "{}\n---\n{}\n---\n{}\n---\n{}", waited.text, killed.text, again.text, after.text));
    });
}

#[tokio::test]
async fn send_while_running_stops_the_run_and_runs_again_with_the_message() {
    let f = Fixture::new("slow.sh", None, |_| {});
    let id = f.spawn("refactor", "split the parser module").await;
    f.runs_recorded(1).await;
    let sent = f
        .ok(
            "vibe_send",
            json!({"worker_id": id, "message": "also finish the tests"}),
        )
        .await;
    assert_eq!(state(&sent), "running");
    assert!(
        sent.text.contains("previous run was stopped"),
        "{}",
        sent.text
    );
    let (grandchild, worker) = f.pids()[0];
    assert!(
        all_gone(&[worker, grandchild]).await,
        "the first run's process group is gone"
    );
    let done = f.finished(&id).await;
    assert_eq!(state(&done), "done");
    assert_eq!(done.structured.as_ref().unwrap()["runs"], json!(2));
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("send_while_running", format!("{}\n---\n{}", sent.text, done.text));
    });
}

#[tokio::test]
async fn an_unread_result_is_returned_by_send_rather_than_dropped() {
    let f = Fixture::new("echo.sh", None, |_| {});
    let id = f.spawn("notes", "summarise the changelog").await;
    // Wait through vibe_list (which does not mark results read) until it is done.
    for _ in 0..1200 {
        let list = f.ok("vibe_list", json!({})).await;
        if list.structured.unwrap()["workers"][0]["state"] == json!("done") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sent = f
        .ok(
            "vibe_send",
            json!({"worker_id": id, "message": "and the README"}),
        )
        .await;
    let prev = sent.structured.as_ref().unwrap()["previous_result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(prev.contains("summarise the changelog"), "{}", sent.text);
    let done = f.finished(&id).await;
    assert!(done.text.contains("and the README"), "{}", done.text);
}

#[tokio::test]
async fn a_crashing_worker_is_failed_with_its_status_and_output() {
    let f = Fixture::new("crash.sh", None, |_| {});
    let id = f.spawn("crashy", "do the thing").await;
    let out = f.finished(&id).await;
    assert_eq!(state(&out), "failed");
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("crash", f.redact(&out.text));
    });
}

/// A worker over its `timeout_s` is ended with everything it started and reported as
/// `timed_out`; a budget over the host's cap is an argument error.
#[tokio::test]
async fn a_worker_over_its_budget_is_stopped_and_timed_out() {
    let f = Fixture::new("slow.sh", None, |c| c.max_run = Duration::from_secs(60));
    let over = f
        .call(
            "vibe_spawn",
            json!({"brief": "x", "label": "y", "timeout_s": 61}),
        )
        .await;
    assert!(over.is_error, "{}", over.text);
    assert!(over.text.contains("`timeout_s` is 61"), "{}", over.text);
    let spawned = f
        .ok(
            "vibe_spawn",
            json!({"brief": "take your time", "label": "too-slow", "timeout_s": 2}),
        )
        .await;
    let id = spawned.structured.unwrap()["worker_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = f.finished(&id).await;
    assert_eq!(state(&out), "timed_out");
    assert!(
        out.text.contains("longer than its budget of 2s"),
        "{}",
        out.text
    );
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("timed_out", f.redact(&out.text));
    });
    let list = f.ok("vibe_list", json!({})).await;
    assert_eq!(
        list.structured.unwrap()["workers"][0]["state"],
        json!("timed_out")
    );
    // Under heavy load the script may be stopped before it records its pids; when it did,
    // everything it started must be gone.
    if let Some(&(grandchild, worker)) = f.pids().first() {
        assert!(
            all_gone(&[worker, grandchild]).await,
            "its process group is gone"
        );
    }
}

#[tokio::test]
async fn list_after_many_finished_workers() {
    let f = Fixture::new("echo.sh", Some("long.sh"), |_| {});
    let mut ids = Vec::new();
    for i in 0..24 {
        ids.push(
            f.spawn(&format!("job-{i:02}"), &format!("task number {i}"))
                .await,
        );
    }
    let long = f
        .ok(
            "vibe_spawn",
            json!({"brief": "write the long report", "label": "report", "tier": "good"}),
        )
        .await
        .structured
        .unwrap()["worker_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Read half of them; the rest stay unread.
    for id in ids.iter().step_by(2) {
        assert_eq!(state(&f.finished(id).await), "done");
    }
    for id in ids.iter().skip(1).step_by(2).chain([&long]) {
        // Wait through list only, so they stay unread.
        for _ in 0..1200 {
            let list = f.ok("vibe_list", json!({})).await;
            let workers = list.structured.unwrap()["workers"].clone();
            let w = workers
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["worker_id"] == json!(id))
                .cloned()
                .unwrap();
            if w["state"] != json!("running") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let list = f.ok("vibe_list", json!({})).await;
    let workers = list.structured.as_ref().unwrap()["workers"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(workers.len(), 25);
    assert!(workers.iter().all(|w| w["state"] == json!("done")));
    let report = workers.last().unwrap()["result"].as_str().unwrap();
    assert!(
        report.chars().count() <= 201,
        "the list bounds results: {report}"
    );
    let full = f.finished(&long).await;
    assert!(
        full.text.contains("line 199 of a long report"),
        "wait returns it whole"
    );
    insta::with_settings!({filters => elapsed_filters()}, {
        insta::assert_snapshot!("list_many", list.text);
    });
}

#[tokio::test]
async fn errors_name_what_to_do() {
    let f = Fixture::new("echo.sh", None, |_| {});
    let _ = f.spawn("one", "first").await;
    let cases = vec![
        ("vibe_wait", json!({"worker_id": "w9"})),
        ("vibe_send", json!({"worker_id": "nope", "message": "hi"})),
        ("vibe_kill", json!({"worker_id": "w0"})),
        (
            "vibe_spawn",
            json!({"brief": "x", "label": "y", "tier": "good"}),
        ),
        (
            "vibe_spawn",
            json!({"brief": "x", "label": "y", "tier": "best"}),
        ),
        ("vibe_spawn", json!({"brief": " ", "label": "y"})),
        (
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": -1}),
        ),
        ("vibe_send", json!({"worker_id": "w1", "message": ""})),
    ];
    let mut report = String::new();
    for (tool, args) in cases {
        let out = f.call(tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args} should fail: {}", out.text);
        report.push_str(&format!("{tool} {args}:\n  {}\n", f.redact(&out.text)));
    }
    insta::assert_snapshot!("errors", report);
}

#[tokio::test]
async fn a_missing_program_fails_the_spawn_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    attach(
        &registry,
        VibeConfig {
            fast: Some(WorkerCommand::new("agent-tools-no-such-worker", ["--x"])),
            vibe_mode: true,
            ..Default::default()
        },
    );
    let out = registry
        .call(
            "vibe_spawn",
            json!({"brief": "x", "label": "y"}),
            Surface::Full,
        )
        .await;
    assert!(out.is_error);
    let text = out
        .text
        .replace(&dir.path().display().to_string(), "[ROOT]");
    insta::assert_snapshot!("missing_program", text);
    let list = registry.call("vibe_list", json!({}), Surface::Full).await;
    assert!(list.text.contains("no workers"), "{}", list.text);
}

#[test]
fn doctor_reports_each_tier() {
    // The environment is not set for these tests: both tiers say how to configure them.
    let root = tempfile::tempdir().unwrap();
    let entries = agent_vibe::doctor(root.path());
    let lines: Vec<String> = entries
        .iter()
        .filter(|e| std::env::var_os(format!("AGENT_TOOLS_VIBE_{}", e.id.to_uppercase())).is_none())
        .map(|e| e.summary())
        .collect();
    assert_eq!(entries.len(), 2);
    for line in &lines {
        assert!(
            line.contains("not usable") && line.contains("set AGENT_TOOLS_VIBE_"),
            "{line}"
        );
    }
}

/// `timeout_s` (or its alias `timeout_seconds`) out of range (issue 11, item 13: `1e308` panicked in the conversion) is an
/// argument error naming the argument and the valid range; the edges of the range are accepted.
#[tokio::test]
async fn wait_timeout_out_of_range_is_an_argument_error() {
    let f = Fixture::new("echo.sh", None, |_| {});
    let _ = f.spawn("one", "first").await;
    for bad in [
        json!(1e308),
        json!(3601),
        json!(-0.5),
        json!(f64::MAX),
        json!(-1e300),
    ] {
        let out = f
            .call(
                "vibe_wait",
                json!({"worker_id": "w1", "timeout_seconds": bad}),
            )
            .await;
        assert!(out.is_error, "{bad}: {}", out.text);
        assert!(
            out.text.contains("`timeout_s`") && out.text.contains("from 0 to 3600"),
            "{bad}: {}",
            out.text
        );
    }
    for good in [json!(0), json!(3600), json!(0.25)] {
        let out = f
            .call(
                "vibe_wait",
                json!({"worker_id": "w1", "timeout_seconds": good}),
            )
            .await;
        assert!(!out.is_error, "{good}: {}", out.text);
    }
}

/// The session a process leads or belongs to (field 6 of /proc/PID/stat).
fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// `vibe_kill` ends the worker's whole tree, including a grandchild it started in a new
/// session (outside its process group): the run's tag finds it.
#[tokio::test]
async fn kill_ends_a_grandchild_in_a_new_session() {
    let f = Fixture::new("setsid.sh", None, |_| {});
    let id = f.spawn("escaper", "start something and leave").await;
    f.runs_recorded(1).await;
    let (grandchild, worker) = f.pids()[0];
    // The grandchild really left: its own session, not the worker's.
    let mut left = false;
    for _ in 0..100 {
        if session_of(grandchild).is_some_and(|s| Some(s) != session_of(worker)) {
            left = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(left, "the grandchild never moved to a new session");
    assert!(!gone(grandchild) && !gone(worker));
    let killed = f.ok("vibe_kill", json!({"worker_id": id})).await;
    assert_eq!(state(&killed), "killed");
    assert!(
        all_gone(&[worker, grandchild]).await,
        "the grandchild in its own session outlived vibe_kill"
    );
}

/// `vibe_list` shows when a running worker last wrote output and flags a silent one as stalled
/// (the threshold is the crate's limit, 1 s here).
#[tokio::test]
async fn a_silent_worker_is_listed_as_stalled() {
    let f = Fixture::new("silent.sh", Some("chatty.sh"), |c| {
        c.stall_after = Duration::from_secs(1)
    });
    let silent = f.spawn("quiet", "think hard").await;
    let chatty = f
        .ok(
            "vibe_spawn",
            json!({"brief": "talk", "label": "talker", "tier": "good"}),
        )
        .await
        .structured
        .unwrap()["worker_id"]
        .as_str()
        .unwrap()
        .to_string();
    let row = |list: &ToolOutput, id: &str| {
        list.structured.as_ref().unwrap()["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["worker_id"] == json!(id))
            .cloned()
            .unwrap()
    };
    // Before the threshold nobody is stalled.
    let early = f.ok("vibe_list", json!({})).await;
    assert_eq!(
        row(&early, &silent)["stalled"],
        json!(false),
        "{}",
        early.text
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let list = f.ok("vibe_list", json!({})).await;
    let (s, c) = (row(&list, &silent), row(&list, &chatty));
    assert_eq!(s["stalled"], json!(true), "{}", list.text);
    assert_eq!(s["last_output_seconds_ago"], Value::Null, "{}", list.text);
    assert_eq!(c["stalled"], json!(false), "{}", list.text);
    let ago = c["last_output_seconds_ago"].as_f64().unwrap();
    assert!(
        ago < 1.0,
        "the chatty worker wrote {ago}s ago: {}",
        list.text
    );
    assert!(list.text.contains("STALLED"), "{}", list.text);
    assert!(list.text.contains("(1 stalled)"), "{}", list.text);
    let mut filters = elapsed_filters();
    filters.push((
        r"(?:\d+ms|\d+h(?:\d+m)?(?:\d+s)?|\d+m(?:\d+s)?|\d+(?:\.\d)?s) ago",
        "[AGO] ago",
    ));
    filters.push((
        r"for (?:\d+ms|\d+h(?:\d+m)?(?:\d+s)?|\d+m(?:\d+s)?|\d+(?:\.\d)?s)",
        "for [ELAPSED]",
    ));
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!("list_stalled", list.text);
    });
    for id in [&silent, &chatty] {
        f.ok("vibe_kill", json!({"worker_id": id})).await;
    }
}

/// A finished worker's result stays: `vibe_wait` returns it whole every time it is asked.
#[tokio::test]
async fn a_result_can_be_read_again() {
    let f = Fixture::new("echo.sh", None, |_| {});
    let id = f.spawn("notes", "summarise the changelog").await;
    let first = f.finished(&id).await;
    let second = f.finished(&id).await;
    let third = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_s": 0}))
        .await;
    let result = |o: &ToolOutput| o.structured.as_ref().unwrap()["result"].clone();
    assert!(
        result(&first)
            .as_str()
            .unwrap()
            .contains("summarise the changelog")
    );
    assert_eq!(result(&first), result(&second));
    assert_eq!(result(&first), result(&third));
    assert_eq!(state(&third), "done");
}
