//! Issue 23: `$X` over 200 KB of nested JSON matches every node, each capturing most of the
//! file; collecting them all took 19.8 GB. Only what is shown is collected now. This test is a
//! binary of its own so that the process's peak resident set (VmHWM) is this search's.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

/// A line of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

#[tokio::test]
async fn dollar_x_over_200_kb_of_nested_json_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 100_000;
    let json = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    std::fs::write(dir.path().join("deep.json"), &json).unwrap();
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());

    let before = status_bytes("VmHWM:");
    let out = registry
        .call(
            "ast_grep",
            json!({"pattern": "$X", "path": "deep.json"}),
            Surface::Full,
        )
        .await;
    let peak = status_bytes("VmHWM:");
    eprintln!(
        "peak RSS {:.1} MiB (before the search {:.1} MiB); result {} bytes",
        peak as f64 / 1048576.0,
        before as f64 / 1048576.0,
        out.text.len()
    );
    assert!(!out.is_error, "{}", out.text);
    let total = out.structured.as_ref().unwrap()["total"].as_u64().unwrap();
    assert!(total > depth as u64, "{total}");
    assert!(out.text.contains(&format!("50 of {total} matches shown")));
    assert!(out.text.len() < 64 * 1024, "{}", out.text.len());
    // A guard against the quadratic behaviour (19.8 GB), not a benchmark: the goal is 100 MB.
    assert!(peak < 300 * 1024 * 1024, "peak RSS {peak} bytes");
}
