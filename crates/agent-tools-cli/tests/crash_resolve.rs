//! Issue 41: SIGKILL 50 ms into `resolve accept` of 600 files left 92 new, 508 old and a
//! `.agent-tools.tmp` in the workspace, and nothing repaired it at the next start. Now a change
//! of several files is journalled in the user's state folder while it is written, and the next
//! host on the root rolls a cut-short change back. The host is killed at spread-out points of
//! the write phase, 20 times; after each, a new host starts and the tree must be wholly old or
//! wholly new, with no temp file left and no journal left behind. The kill is by the host's pid.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

const FILES: usize = 600;
const KILLS: u32 = 20;
const OLD: &str = "value = 1\nprint(value)\n";
const NEW: &str = "value = 2\nprint(value)\n";

fn reset(root: &Path) {
    for i in 0..FILES {
        std::fs::write(root.join(format!("m{i:03}.py")), OLD).unwrap();
    }
}

fn start(root: &Path, state: &Path) -> Client {
    let mut c = Client::start_with(root, &[], &[("AGENT_TOOLS_STATE_DIR", state)]);
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c
}

fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Stage the rewrite of every file; the edit's id.
fn stage(c: &mut Client) -> String {
    let r = c.rpc(
        2,
        "tools/call",
        json!({"name": "ast_edit", "arguments": {"pattern": "value = 1", "rewrite": "value = 2", "language": "python"}}),
    );
    let t = text(&r);
    assert_eq!(r["result"]["isError"], false, "{t}");
    let id = r["result"]["structuredContent"]["edit_id"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            t.split(|c: char| c.is_whitespace() || c == '`' || c == ',')
                .find(|w| {
                    w.starts_with('e') && w[1..].chars().all(|d| d.is_ascii_digit()) && w.len() > 1
                })
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no edit id in: {r}"));
    assert!(t.contains(&FILES.to_string()), "{t}");
    id
}

fn accept(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": {"name": "resolve", "arguments": {"edit_id": id, "action": "accept"}}})
}

/// (files old, files new, temp files) under `root`.
fn census(root: &Path) -> (usize, usize, usize) {
    let (mut old, mut new, mut temps) = (0, 0, 0);
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".agent-tools.tmp") {
            temps += 1;
            continue;
        }
        match std::fs::read_to_string(e.path()).unwrap().as_str() {
            OLD => old += 1,
            NEW => new += 1,
            other => panic!("{name} holds neither: {other:?}"),
        }
    }
    (old, new, temps)
}

fn journals(state: &Path) -> usize {
    walk_count(&state.join("journals"))
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |l| {
        l.flatten()
            .map(|e| {
                if e.file_type().unwrap().is_dir() {
                    // A root's folder holds one folder per journal.
                    if e.path().join("manifest.json").exists() || e.path().join("old.bin").exists()
                    {
                        1
                    } else {
                        walk_count(&e.path())
                    }
                } else {
                    0
                }
            })
            .sum()
    })
}

#[test]
fn a_host_killed_during_a_600_file_resolve_is_rolled_back_whole_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    // How long the write phase takes here, from one accept run to its end.
    reset(&root);
    let mut c = start(&root, state.path());
    let id = stage(&mut c);
    let t0 = Instant::now();
    c.send(accept(&id));
    let (r, _) = c.until(3);
    let whole = t0.elapsed();
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(census(&root), (0, FILES, 0));
    assert_eq!(
        journals(state.path()),
        0,
        "a finished change left its journal"
    );
    drop(c);

    let (mut rolled_back, mut completed) = (0, 0);
    for k in 0..KILLS {
        reset(&root);
        let mut c = start(&root, state.path());
        let id = stage(&mut c);
        c.send(accept(&id));
        // Spread over the write phase, from its start to a little past its end.
        let at = whole.mul_f64(f64::from(k) / f64::from(KILLS - 4));
        std::thread::sleep(at);
        c.child.kill().unwrap(); // SIGKILL, by the host's pid
        c.child.wait().unwrap();
        drop(c);
        let mid = census(&root);
        // The next host on this root recovers before it serves anything.
        let mut next = start(&root, state.path());
        let r = next.rpc(
            5,
            "tools/call",
            json!({"name": "read", "arguments": {"path": "m000.py"}}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        let after = census(&root);
        assert!(
            after == (FILES, 0, 0) || after == (0, FILES, 0),
            "kill {k} at {at:?} (of {whole:?}): killed with {mid:?} (old, new, temps); after the next start {after:?}"
        );
        if after.0 == FILES {
            rolled_back += 1;
        } else {
            completed += 1;
        }
        assert_eq!(journals(state.path()), 0, "kill {k}: a journal was left");
        drop(next);
    }
    eprintln!("{KILLS} kills: {rolled_back} rolled back, {completed} had completed");
    assert!(rolled_back > 0, "no kill landed inside the write phase");
}
