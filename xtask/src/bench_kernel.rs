//! `cargo xtask bench host`, the kernel's bounds (issue 11, item 12), through `agent-tools serve`
//! over stdio like a model's client: the host's RSS after a kernel prints 500 MB between cells
//! (goal <= 64 MB), and a 30 MB exception message's result size and time (goal <= 64 KB, <= 1 s).

use crate::stdio_host::Host;
use anyhow::{Result, bail};
use std::path::Path;
use std::time::{Duration, Instant};

const PRINT_500_MB: &str = "import threading\ndef spam():\n    line = 'z' * 99_999\n    for _ in range(5000):\n        print(line)\n    open('spam.done', 'w').close()\nthreading.Thread(target=spam, daemon=True).start()";

/// One `eval` call: the reply's size and how long it took.
fn eval(host: &mut Host, code: &str) -> Result<(usize, Duration)> {
    host.rpc(
        "tools/call",
        serde_json::json!({"name": "eval", "arguments": {"code": code, "description": "measure how the kernel bounds its output"}}),
    )
}

pub fn run(bin: &Path, rss_kib: fn(u32) -> Option<u64>) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut host = Host::start(bin, &dir, &[])?;
    eval(&mut host, "x = 1")?;
    let pid = host.child.id();
    let before = rss_kib(pid).unwrap_or(0);

    // 500 MB printed by a thread after its cell has finished
    eval(&mut host, PRINT_500_MB)?;
    let t = Instant::now();
    while !dir.join("spam.done").exists() {
        if t.elapsed() > Duration::from_secs(600) {
            bail!("the kernel did not finish printing 500 MB within 10 minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let printed = t.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(pid).unwrap_or(0);
    let (next_size, _) = eval(&mut host, "x")?;

    // a 30 MB exception message on a warm kernel
    let (tb_size, tb_time) = eval(&mut host, "raise ValueError('x' * 30_000_000)")?;

    host.close();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "host RSS after a kernel printed 500 MB between cells: {:.1} MB (before: {:.1} MB; printed in {:.1} s; the next cell's reply {} bytes) (goal <= 64 MB)",
        after as f64 / 1024.0,
        before as f64 / 1024.0,
        printed.as_secs_f64(),
        next_size
    );
    println!(
        "30 MB exception message: reply {:.1} KB in {:.0} ms (goal <= 64 KB, <= 1 s)",
        tb_size as f64 / 1024.0,
        tb_time.as_secs_f64() * 1000.0
    );
    Ok(())
}
