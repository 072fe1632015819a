//! The MCP client that drives `agent-tools serve` over stdio, line by line: the host binary a
//! test names (its `CARGO_BIN_EXE_agent-tools`) as a child, requests and the notifications seen
//! until each answer. Dropping the client kills and reaps that child (by its pid, never by name).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// A running `serve`, spoken to over its stdio.
pub struct Client {
    /// The `serve` process.
    pub child: std::process::Child,
    /// Its stdin: one JSON-RPC message a line.
    pub stdin: std::process::ChildStdin,
    /// Its stdout: one JSON-RPC message a line.
    pub stdout: BufReader<std::process::ChildStdout>,
}

impl Client {
    /// `bin serve <extra> --root <root>`.
    pub fn start(bin: &str, root: &Path, extra: &[&str]) -> Client {
        Self::start_with(bin, root, extra, &[])
    }

    /// As [`Client::start`], with these environment variables.
    pub fn start_with(bin: &str, root: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Client {
        let mut child = Command::new(bin)
            .arg("serve")
            .args(extra)
            .arg("--root")
            .arg(root)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start agent-tools serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            stdout,
        }
    }

    /// Read messages until the server sends a request (or notification) named `method`.
    pub fn until_method(&mut self, method: &str) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "serve closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == method {
                return v;
            }
        }
    }

    /// Send one message.
    pub fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
    }

    /// Read messages until the response with `id`; returns it and the notifications seen.
    pub fn until(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "serve closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id && v.get("method").is_none() {
                return (v, notes);
            }
            notes.push(v);
        }
    }

    /// Send a request with `id` and return its response.
    pub fn rpc(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(id).0
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
