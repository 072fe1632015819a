//! `cargo xtask bench host`, ast_grep's bound on nested input (issue 23): the host's peak RSS
//! (VmHWM) after `ast_grep` with `$X` over 200 KB of JSON nested 100,000 deep, through
//! `agent-tools serve` over stdio. Before the bound this took 19.8 GB and 76 s (every nested
//! match collected with its capture text); the goal is <= 100 MB.

use crate::stdio_host::Host;
use anyhow::Result;
use std::path::Path;

fn hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

pub fn run(bin: &Path) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-nested-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let depth = 100_000;
    std::fs::write(
        dir.join("deep.json"),
        format!("{}{}\n", "[".repeat(depth), "]".repeat(depth)),
    )?;
    let mut host = Host::start(bin, &dir, &[])?;
    let pid = host.child.id();
    let before = hwm_kib(pid).unwrap_or(0);
    let (bytes, took) = host.rpc(
        "tools/call",
        serde_json::json!({"name": "ast_grep", "arguments": {"pattern": "$X", "language": "json", "path": "deep.json"}}),
    )?;
    let after = hwm_kib(pid).unwrap_or(0);
    println!(
        "ast_grep `$X` over 200 KB of JSON nested {depth} deep: host peak RSS {:.1} MB (before the call {:.1} MB), reply {:.1} KB in {} ms (goal <= 100 MB)",
        after as f64 / 1024.0,
        before as f64 / 1024.0,
        bytes as f64 / 1024.0,
        took.as_millis()
    );
    host.close();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
