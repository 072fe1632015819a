//! The serve client the host test binaries share: the test kit's client
//! (`agent_testkit::serve::Client`) bound to this crate's `agent-tools` binary.

#![allow(dead_code)] // each test binary uses a different part of it

use std::ops::{Deref, DerefMut};
use std::path::Path;

pub const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// `agent-tools serve` as a child, driven over MCP stdio line by line.
pub struct Client(agent_testkit::serve::Client);

impl Client {
    pub fn start(root: &Path, extra: &[&str]) -> Client {
        Client(agent_testkit::serve::Client::start(BIN, root, extra))
    }

    pub fn start_with(root: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Client {
        Client(agent_testkit::serve::Client::start_with(
            BIN, root, extra, env,
        ))
    }
}

impl Deref for Client {
    type Target = agent_testkit::serve::Client;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Client {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// `agent-tools call TOOL ARGS --json --root ROOT`, with `XDG_CONFIG_HOME` set to `config`
/// (the user's lsp config folder): `(is_error, text, structured)`. Each call is a fresh host, so
/// its language servers are cold.
pub fn call_json(
    root: &Path,
    config: &Path,
    tool: &str,
    args: serde_json::Value,
) -> (bool, String, serde_json::Value) {
    let out = std::process::Command::new(BIN)
        .args(["call", tool, &args.to_string(), "--json", "--root"])
        .arg(root)
        .env("XDG_CONFIG_HOME", config)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        v["isError"].as_bool().unwrap_or(false),
        v["content"][0]["text"].as_str().unwrap_or("").to_string(),
        v["structuredContent"].clone(),
    )
}
