//! `cargo xtask bench host`, the kernel's bounds (issue 11, item 12), through `agent-tools serve`
//! over stdio like a model's client: the host's RSS after a kernel prints 500 MB between cells
//! (goal <= 64 MB), and a 30 MB exception message's result size and time (goal <= 64 KB, <= 1 s).

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PRINT_500_MB: &str = "import threading\ndef spam():\n    line = 'z' * 99_999\n    for _ in range(5000):\n        print(line)\n    open('spam.done', 'w').close()\nthreading.Thread(target=spam, daemon=True).start()";

/// `agent-tools serve` over stdio, initialized (the other host benches use it too).
pub(crate) struct Host {
    pub(crate) child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Host {
    /// `bin serve --root dir`, initialized.
    pub(crate) fn start(bin: &Path, dir: &Path) -> Result<Host> {
        let mut child = Command::new(bin)
            .args(["serve", "--root"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        let mut host = Host {
            child,
            stdin,
            stdout,
            next: 0,
        };
        host.rpc(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        )?;
        Ok(host)
    }

    /// One request; the reply's size in bytes and how long it took.
    pub(crate) fn rpc(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<(usize, Duration)> {
        self.next += 1;
        let id = self.next;
        let t = Instant::now();
        writeln!(
            self.stdin,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("agent-tools serve closed its stdout");
            }
            let v: serde_json::Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                return Ok((line.len(), t.elapsed()));
            }
        }
    }

    fn eval(&mut self, code: &str) -> Result<(usize, Duration)> {
        self.rpc(
            "tools/call",
            serde_json::json!({"name": "eval", "arguments": {"code": code, "description": "measure how the kernel bounds its output"}}),
        )
    }
}

pub fn run(bin: &Path, rss_kib: fn(u32) -> Option<u64>) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("agent-tools-bench-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut host = Host::start(bin, &dir)?;
    host.eval("x = 1")?;
    let pid = host.child.id();
    let before = rss_kib(pid).unwrap_or(0);

    // 500 MB printed by a thread after its cell has finished
    host.eval(PRINT_500_MB)?;
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
    let (next_size, _) = host.eval("x")?;

    // a 30 MB exception message on a warm kernel
    let (tb_size, tb_time) = host.eval("raise ValueError('x' * 30_000_000)")?;

    drop(host.stdin);
    let _ = host.child.wait();
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
