//! `cargo xtask bench`: which benchmark runs, and the host's own (idle RSS, round trip); each
//! `bench_*` module measures one thing against its peer in the same run.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{
    bench_astgrep_rss, bench_calls, bench_hostile, bench_http, bench_kernel, bench_scale,
    bench_servers, cargo, host_binary, run,
};

pub(crate) fn bench(root: &Path, which: &str) -> Result<()> {
    let all = which == "all";
    if all || which == "host" {
        bench_host(root)?;
    }
    if all || which == "calls" {
        println!("== bench calls: ast_grep per process and in one serve run, against the CLI ==");
        // `AGENT_TOOLS_BENCH_BIN` measures a binary built elsewhere (an earlier commit's).
        let bin = match std::env::var_os("AGENT_TOOLS_BENCH_BIN") {
            Some(b) => PathBuf::from(b),
            None => host_binary(root, true)?,
        };
        bench_calls::run(root, &bin)?;
    }
    // Not in `all`: it unpacks a 1.2 GB tree on first use.
    if which == "scale" {
        println!("== bench scale: grep and ast_grep at three sizes of the Linux tree ==");
        let bin = match std::env::var_os("AGENT_TOOLS_BENCH_BIN") {
            Some(b) => PathBuf::from(b),
            None => host_binary(root, true)?,
        };
        bench_scale::run(root, &bin)?;
    }
    for family in ["astgrep", "lsp", "dap", "kernel"] {
        if all || which == family {
            let krate = format!("agent-{family}");
            // `examples/bench.rs`, or `examples/bench/main.rs` for a bench of several files.
            let examples = root.join("crates").join(&krate).join("examples");
            if !examples.join("bench.rs").exists() && !examples.join("bench/main.rs").exists() {
                bail!(
                    "bench {family}: no benchmark in crates/{krate}/examples/bench.rs or examples/bench/main.rs"
                );
            }
            println!("== bench {family} ==");
            let example = format!("{family}-bench");
            run(cargo(root).args([
                "run",
                "-q",
                "--release",
                "-p",
                &krate,
                "--example",
                &example,
            ]))?;
            if family == "lsp" {
                // The identifier witness on Django and a warm `references` with it (the facade
                // composes the lsp and astgrep families; issue 22).
                println!("== bench lsp: witness ==");
                run(cargo(root).args([
                    "run",
                    "-q",
                    "--release",
                    "-p",
                    "agent-tools",
                    "--features",
                    "full",
                    "--example",
                    "witness",
                ]))?;
            }
        }
    }
    Ok(())
}

pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn bench_host(root: &Path) -> Result<()> {
    use std::io::{BufRead, BufReader, Write};
    let bin = host_binary(root, true)?;
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("hello.txt"), "hello\n")?;
    let mut child = Command::new(&bin)
        .args(["serve", "--vibe", "--root"])
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    let mut rpc = |id: u64, method: &str, params: serde_json::Value| -> Result<f64> {
        let t = Instant::now();
        writeln!(
            stdin,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("agent-tools serve closed its stdout");
            }
            let v: serde_json::Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                return Ok(t.elapsed().as_secs_f64() * 1e6);
            }
        }
    };
    rpc(
        0,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
    )?;
    rpc(1, "tools/list", serde_json::json!({}))?;
    std::thread::sleep(std::time::Duration::from_millis(500));
    let rss = rss_kib(child.id()).unwrap_or(0);
    let mut times = Vec::new();
    for i in 0..500 {
        times.push(rpc(
            10 + i,
            "tools/call",
            serde_json::json!({"name": "read", "arguments": {"path": "hello.txt"}}),
        )?);
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    println!("== bench host ==");
    println!(
        "idle RSS of `agent-tools serve --vibe` with every family attached: {:.1} MB (goal <= 25 MB)",
        rss as f64 / 1024.0
    );
    println!(
        "tools/call `read` round trip over stdio, 500 calls: {}",
        bench_http::percentiles(&mut times)
    );
    bench_http::run(&bin, rss_kib)?;
    bench_hostile::run(&bin)?;
    bench_astgrep_rss::run(&bin)?;
    bench_kernel::run(&bin, rss_kib)?;
    bench_servers::run(root, &bin, rss_kib)?;
    Ok(())
}
