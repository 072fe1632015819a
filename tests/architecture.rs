//! The architecture invariants of docs/ARCHITECTURE.md, checked against `cargo metadata` and the
//! sources — an ordinary test, so that breaking one fails CI.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAMILIES: &[&str] = &[
    "agent-files",
    "agent-lsp",
    "agent-astgrep",
    "agent-dap",
    "agent-kernel",
    "agent-ask",
    "agent-vibe",
];
/// Crates that speak a protocol or parse code; the floor knows none of them.
const PROTOCOL_CRATES: &[&str] = &["lsp-types", "lsp-server", "tree-sitter", "ast-grep-core"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

fn metadata() -> Value {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("metadata is JSON")
}

fn package<'a>(meta: &'a Value, name: &str) -> &'a Value {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("crate {name} is missing from the workspace"))
}

fn deps(pkg: &Value) -> Vec<(String, String)> {
    pkg["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["kind"].as_str().unwrap_or("normal").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_floor_depends_on_no_family_and_no_protocol() {
    let meta = metadata();
    for (dep, _) in deps(package(&meta, "agent-tier")) {
        assert!(!dep.starts_with("agent-"), "agent-tier depends on {dep}");
        assert!(
            !PROTOCOL_CRATES.contains(&dep.as_str()),
            "agent-tier depends on {dep}"
        );
    }
}

#[test]
fn no_family_crate_depends_on_another() {
    let meta = metadata();
    for fam in FAMILIES {
        for (dep, kind) in deps(package(&meta, fam)) {
            if dep.starts_with("agent-") {
                assert_eq!(dep, "agent-tier", "{fam} depends on {dep} ({kind})");
            }
        }
    }
}

#[test]
fn the_facade_holds_no_logic() {
    let meta = metadata();
    for (dep, _) in deps(package(&meta, "agent-tools")) {
        assert!(
            dep == "agent-tier" || FAMILIES.contains(&dep.as_str()),
            "the facade depends on {dep}"
        );
    }
    let src = std::fs::read_to_string(root().join("crates/agent-tools/src/lib.rs")).unwrap();
    for line in src.lines().map(str::trim) {
        let ok = line.is_empty()
            || line.starts_with("//")
            || line.starts_with("pub use ")
            || line.starts_with("#[cfg(");
        assert!(ok, "the facade holds more than re-exports: `{line}`");
    }
}

#[test]
fn every_crate_is_publishable_on_its_own() {
    let meta = metadata();
    // Every crate under crates/, whatever its room.
    let crates: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["manifest_path"].as_str().unwrap().contains("/crates/"))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(crates.len() >= 10, "{crates:?}");
    for name in crates {
        let pkg = package(&meta, name);
        for field in ["version", "description", "license", "repository"] {
            assert!(pkg[field].is_string(), "{name} lacks `{field}`");
        }
        let manifest = PathBuf::from(pkg["manifest_path"].as_str().unwrap());
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(
            text.lines().any(|l| l.starts_with("version = \""))
                && !text.lines().any(|l| l.starts_with("version.workspace")),
            "{name} must carry its own version"
        );
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{name} lacks `[lints] workspace = true`"
        );
        let dir = manifest.parent().unwrap();
        let entry = if dir.join("src/lib.rs").exists() {
            "src/lib.rs"
        } else {
            "src/main.rs"
        };
        let src = std::fs::read_to_string(dir.join(entry)).unwrap();
        assert!(
            src.starts_with("//! # "),
            "{name}/{entry} lacks a `//!` header"
        );
    }
}
