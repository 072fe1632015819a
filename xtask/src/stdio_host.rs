//! `agent-tools serve` over stdio, driven line by line like a model's client: the host the
//! `bench host` measurements share.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct Host {
    pub(crate) child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Host {
    /// `bin serve --root dir` with `env` added, initialized.
    pub(crate) fn start(bin: &Path, dir: &Path, env: &[(&str, &OsStr)]) -> Result<Host> {
        Host::spawn(bin, dir, &[], env)
    }

    /// `bin serve --root dir ARGS…`, initialized.
    pub(crate) fn start_with(bin: &Path, dir: &Path, args: &[&str]) -> Result<Host> {
        Host::spawn(bin, dir, args, &[])
    }

    fn spawn(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Result<Host> {
        let mut child = Command::new(bin)
            .args(["serve", "--root"])
            .arg(dir)
            .args(args)
            .envs(env.iter().copied())
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
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        )?;
        Ok(host)
    }

    /// One request: the reply, its size in bytes and how long it took.
    pub(crate) fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Value, usize, Duration)> {
        self.next += 1;
        let id = self.next;
        let t = Instant::now();
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("agent-tools serve closed its stdout");
            }
            let v: Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                return Ok((v, line.len(), t.elapsed()));
            }
        }
    }

    /// One request: the reply's size in bytes and how long it took.
    pub(crate) fn rpc(&mut self, method: &str, params: Value) -> Result<(usize, Duration)> {
        self.request(method, params).map(|(_, n, t)| (n, t))
    }

    /// Close its stdin (the host ends its run) and wait for it.
    pub(crate) fn close(self) {
        drop(self.stdin);
        let mut child = self.child;
        let _ = child.wait();
    }
}
