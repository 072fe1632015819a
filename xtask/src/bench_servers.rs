//! `cargo xtask bench host`, the cap on running language servers (issue 23): `agent-tools serve`
//! over stdio on a workspace of 20 Python project roots (a `pyproject.toml` and one `.py` each),
//! one `lsp` hover per root. Prints the cap, the most servers seen running after any call (from
//! `lsp status`), how many were stopped to stay within it, and the servers' RSS (each server's
//! process tree, read from /proc) at the end. Needs `pyright-langserver` (the repo's `.tools` or
//! `$PATH`).

use crate::stdio_host::Host;
use anyhow::{Result, bail};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

const ROOTS: usize = 20;

/// One `lsp` call; its result (`content`, `structuredContent`, `isError`).
fn lsp(host: &mut Host, args: Value) -> Result<Value> {
    let (v, _, _) = host.request("tools/call", json!({"name": "lsp", "arguments": args}))?;
    Ok(v["result"].clone())
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|x| x["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The pids of the running servers, from `lsp status`'s structured result.
fn running_pids(status: &Value) -> Vec<u32> {
    status["structuredContent"]["servers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|s| {
                    s["state"]
                        .as_str()
                        .is_some_and(|x| x.starts_with("running"))
                })
                .filter_map(|s| s["pid"].as_u64().map(|p| p as u32))
                .collect()
        })
        .unwrap_or_default()
}

/// `pid` and its descendants (by the parent pid in `/proc/<pid>/stat`).
fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            if let Some(ppid) = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|s| s.parse().ok())
            {
                parents.push((p, ppid));
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == cur).map(|(p, _)| *p));
        i += 1;
    }
    out
}

pub fn run(root: &Path, bin: &Path, rss_kib: fn(u32) -> Option<u64>) -> Result<()> {
    let dir =
        std::env::temp_dir().join(format!("agent-tools-bench-servers-{}", std::process::id()));
    // An empty user config: the bench measures the default cap, not the runner's own file.
    let xdg = dir.join("config");
    let ws = dir.join("ws");
    std::fs::create_dir_all(&xdg)?;
    for i in 0..ROOTS {
        let p = ws.join(format!("p{i:02}"));
        std::fs::create_dir_all(&p)?;
        std::fs::write(p.join("pyproject.toml"), "[project]\nname = \"p\"\n")?;
        std::fs::write(
            p.join("m.py"),
            format!("def f{i}() -> int:\n    return {i}\n\nprint(f{i}())\n"),
        )?;
    }
    let tools = root.join(".tools");
    let path = std::env::join_paths(
        [tools.join("node/node_modules/.bin"), tools.join("venv/bin")]
            .into_iter()
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )?;
    let mut host = Host::start(
        bin,
        &ws,
        &[
            ("PATH", path.as_os_str()),
            ("XDG_CONFIG_HOME", xdg.as_os_str()),
        ],
    )?;
    let t = Instant::now();
    let mut most = 0;
    let mut failed = Vec::new();
    for i in 0..ROOTS {
        let r = lsp(
            &mut host,
            json!({"operation": "hover", "file": format!("p{i:02}/m.py"),
            "line": 4, "symbol": format!("f{i}")}),
        )?;
        if r["isError"] == json!(true) || !text(&r).contains(&format!("f{i}")) {
            failed.push(format!("p{i:02}: {}", text(&r)));
        }
        let st = lsp(&mut host, json!({"operation": "status"}))?;
        most = most.max(running_pids(&st).len());
    }
    let elapsed = t.elapsed();
    let st = lsp(&mut host, json!({"operation": "status"}))?;
    let pids = running_pids(&st);
    let rss: u64 = pids.iter().flat_map(|p| tree(*p)).filter_map(rss_kib).sum();
    let cap = &st["structuredContent"]["cap"];
    host.close();
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(f) = failed.first() {
        bail!(
            "{} of {ROOTS} lsp calls failed, the first: {f}",
            failed.len()
        );
    }
    let max = cap["max_servers"].as_u64().unwrap_or(0) as usize;
    println!(
        "{ROOTS} Python project roots, one `lsp` hover each ({:.1} s): at most {most} pyright servers running after any call, {} at the end (cap {max}, `max_servers` {}); {} stopped to stay within the cap; the servers' RSS at the end {:.0} MB (goal: running <= cap)",
        elapsed.as_secs_f64(),
        pids.len(),
        cap["from"].as_str().unwrap_or("?"),
        cap["evictions"],
        rss as f64 / 1024.0
    );
    if most > max {
        bail!("{most} servers ran at once, above the cap of {max}");
    }
    Ok(())
}
