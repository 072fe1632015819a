//! The PyPI wheel `cargo xtask dist` builds (maturin, `bindings = "bin"`), installed as a user
//! would and driven with the official MCP Python SDK: `pip install` into a fresh venv, and
//! `uvx --from agent-tools-cli agent-tools serve` resolving only to the built wheel. Each
//! completes an MCP session (initialize, tools/list, `read`, `ast_grep`) in a scratch root.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod dist_common;

use dist_common::{Dist, python_session_stdio, scratch_root, uv_env, venv_with_wheel};
use std::process::Command;

#[test]
fn wheel_holds_the_binary_and_its_metadata_only() {
    let dist = Dist::load();
    let wheel = dist.wheel();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("agent_tools_cli-{version}-py3-none-")) && name.contains("linux"),
        "{name}"
    );
    let listing = Command::new(dist_common::client_venv().join("bin/python"))
        .args(["-m", "zipfile", "-l"])
        .arg(&wheel)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    let files: Vec<&str> = listing
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        files.contains(&format!("agent_tools_cli-{version}.data/scripts/agent-tools").as_str()),
        "{files:?}"
    );
    for f in &files {
        assert!(
            f.starts_with(&format!("agent_tools_cli-{version}.")),
            "unexpected file in the wheel: {f}"
        );
    }
}

#[test]
fn pip_install_into_a_fresh_venv_serves_mcp() {
    let dist = Dist::load();
    let tmp = tempfile::tempdir().unwrap();
    let venv = venv_with_wheel(tmp.path(), &dist.wheel());
    let bin = venv.join("bin/agent-tools");
    let out = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("agent-tools {}", env!("CARGO_PKG_VERSION"))
    );
    let root = tmp.path().join("ws");
    scratch_root(&root);
    python_session_stdio(&root, bin.to_str().unwrap(), &["serve".to_string()], &[]);
}

#[test]
fn uvx_from_the_wheel_serves_mcp() {
    let dist = Dist::load();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    scratch_root(&root);
    let args: Vec<String> = ["--from", "agent-tools-cli", "agent-tools", "serve"]
        .map(String::from)
        .to_vec();
    python_session_stdio(&root, "uvx", &args, &uv_env(tmp.path(), &dist));
}
