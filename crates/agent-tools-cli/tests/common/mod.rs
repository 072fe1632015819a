//! The serve client the host test binaries share: `agent-tools serve` as a child, driven over
//! MCP stdio line by line.

#![allow(dead_code)] // each test binary uses a different part of it

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

pub struct Client {
    pub child: std::process::Child,
    pub stdin: std::process::ChildStdin,
    pub stdout: BufReader<std::process::ChildStdout>,
}

impl Client {
    pub fn start(root: &Path, extra: &[&str]) -> Client {
        Self::start_with(root, extra, &[])
    }

    pub fn start_with(root: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Client {
        let mut child = Command::new(BIN)
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
