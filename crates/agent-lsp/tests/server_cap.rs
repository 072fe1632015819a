//! The cap on running language servers (issue 23), against the real pyright: six project roots
//! under a cap of three; the least recently used idle server is stopped (its process gone) and
//! starts again at its next call.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const ROOTS: usize = 6;
const CAP: usize = 3;

/// Whether `pid` is a live process (not gone, not a zombie).
fn alive(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The status's structured result.
async fn status(fx: &Fx) -> Value {
    let out = fx.lsp(json!({"operation": "status"})).await;
    assert!(!out.is_error, "{}", out.text);
    out.structured.unwrap()
}

/// `(root, pid)` of each running server the status reports.
fn running(st: &Value) -> Vec<(String, u64)> {
    st["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"].as_str().unwrap().starts_with("running"))
        .map(|s| {
            (
                s["root"].as_str().unwrap().to_string(),
                s["pid"].as_u64().unwrap(),
            )
        })
        .collect()
}

async fn hover(fx: &Fx, i: usize) {
    let out = fx
        .lsp(json!({"operation": "hover", "file": format!("p{i}/m.py"), "line": 4, "symbol": format!("f{i}")}))
        .await;
    assert!(!out.is_error, "p{i}: {}", fx.red(&out.text));
    assert!(out.text.contains(&format!("f{i}")), "p{i}: {}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_roots_under_a_cap_of_three() {
    require("pyright-langserver");
    let mut cfg = config("python", "pyright");
    cfg.max_servers = Some(CAP);
    let fx = fixture("", cfg);
    for i in 0..ROOTS {
        let dir = fx.root.join(format!("p{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(
            dir.join("m.py"),
            format!("def f{i}() -> int:\n    return {i}\n\nprint(f{i}())\n"),
        )
        .unwrap();
    }

    let mut seen: BTreeSet<u64> = BTreeSet::new();
    for i in 0..ROOTS {
        hover(&fx, i).await;
        let st = status(&fx).await;
        let now = running(&st);
        assert!(now.len() <= CAP, "after p{i}: {now:?}");
        seen.extend(now.iter().map(|(_, pid)| *pid));
        // Every pid the supervisor ever reported that it no longer runs is gone.
        let live: BTreeSet<u64> = now.iter().map(|(_, p)| *p).collect();
        for pid in &seen {
            assert_eq!(alive(*pid), live.contains(pid), "pid {pid} after p{i}");
        }
        assert!(seen.iter().filter(|p| alive(**p)).count() <= CAP);
    }
    assert_eq!(seen.len(), ROOTS, "one server per root: {seen:?}");
    let st = status(&fx).await;
    assert_eq!(st["cap"]["max_servers"], json!(CAP));
    assert_eq!(st["cap"]["evictions"], json!(ROOTS - CAP));
    let text = fx.red(&fx.lsp(json!({"operation": "status"})).await.text);
    assert!(
        text.contains(&format!(
            "cap: {CAP} running of at most {CAP} (`max_servers`, set in LspConfig); {} stopped so far",
            ROOTS - CAP
        )),
        "{text}"
    );
    assert!(
        text.contains("- pyright for p0: stopped to stay within the cap of 3 running servers"),
        "{text}"
    );

    // The first root was evicted: its next call starts it again and answers.
    hover(&fx, 0).await;
    let st = status(&fx).await;
    let now = running(&st);
    assert!(now.len() <= CAP, "{now:?}");
    let p0 = now
        .iter()
        .find(|(r, _)| r.ends_with("/p0"))
        .map(|(_, pid)| *pid)
        .unwrap_or_else(|| panic!("p0 not running again: {st}"));
    assert!(!seen.contains(&p0), "p0 got a new process");
    assert_eq!(st["cap"]["evictions"], json!(ROOTS - CAP + 1));
    // Not counted as a crash.
    let p0_slot = st["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["root"].as_str().unwrap().ends_with("/p0"))
        .unwrap();
    assert_eq!(p0_slot["restarts"], json!(0), "{p0_slot}");
    seen.insert(p0);

    // End what the test started: every server, then check by pid.
    let out = fx.lsp(json!({"operation": "reload"})).await;
    assert!(!out.is_error, "{}", out.text);
    for pid in &seen {
        assert!(!alive(*pid), "pid {pid} still runs after reload");
    }
}
