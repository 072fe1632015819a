//! The npm packages `cargo xtask dist` builds — the `agent-tools-cli` launcher and this
//! platform's `agent-tools-cli-linux-x64` — installed from their packed tarballs into a scratch
//! folder (offline: nothing comes from a registry) and run as `npx -y agent-tools-cli serve`
//! through the official MCP TypeScript SDK. Without the platform package the launcher says what
//! is missing and what to do instead of failing obscurely.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod dist_common;

use dist_common::{
    Dist, SESSION, clients, expect_ok, npm_install, scratch_root, tools_path, ts_sdk,
};
use std::process::Command;

#[test]
fn npx_from_the_packed_tarballs_serves_mcp() {
    let dist = Dist::load();
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    npm_install(&project, &[dist.npm_launcher(), dist.npm_platform()]);
    // The tools' root is a folder of the project, as a workspace is: npx finds the local bin.
    let root = project.join("ws");
    scratch_root(&root);
    let mut cmd = Command::new("node");
    cmd.arg(clients().join("ts_session.mjs"))
        .arg(ts_sdk())
        .arg(&root)
        .args(["npx", "-y", "agent-tools-cli", "serve"])
        .env("PATH", tools_path());
    expect_ok(&mut cmd, SESSION);
}

#[test]
fn launcher_without_its_platform_package_says_what_to_do() {
    let dist = Dist::load();
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    npm_install(&project, &[dist.npm_launcher()]);
    let launcher = project.join("node_modules/.bin/agent-tools");
    let out = Command::new(&launcher).arg("--version").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("agent-tools-cli-linux-x64 is not installed")
            && stderr.contains("cargo install agent-tools-cli"),
        "{stderr}"
    );
    // AGENT_TOOLS_BINARY runs another binary, with the arguments and exit status passed through.
    let out = Command::new(&launcher)
        .arg("--version")
        .env("AGENT_TOOLS_BINARY", env!("CARGO_BIN_EXE_agent-tools"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("agent-tools {}", env!("CARGO_PKG_VERSION"))
    );
    let out = Command::new(&launcher)
        .arg("no-such-subcommand")
        .env("AGENT_TOOLS_BINARY", env!("CARGO_BIN_EXE_agent-tools"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "usage errors exit 2: {out:?}");
}
