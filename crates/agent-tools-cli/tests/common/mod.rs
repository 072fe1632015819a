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
