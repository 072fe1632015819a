//! Shared test harness: a fixture project copied to a tempdir, a registry with the lsp family
//! attached and a fake host `write` tool, and data-driven cases.
#![allow(dead_code)]

use agent_lsp::{ConfigFile, LspConfig, ServerPatch};
use agent_tier::{RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Fail (never skip) when a real program is missing (the test kit's rule).
pub fn require(prog: &str) {
    agent_testkit::require(prog);
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A config that reads no files and serves `language` with `server` only.
pub fn config(language: &str, server: &str) -> LspConfig {
    // Generous bounds: CI runs everything on 2 loaded cores.
    let mut cfg = LspConfig {
        skip_config_files: true,
        // The fixtures are ours: their build scripts may run (tests/trust.rs turns this off).
        trust_project: true,
        write_diagnostics_timeout_ms: Some(60_000),
        request_timeout_ms: Some(60_000),
        ready_timeout_ms: Some(120_000),
        ..Default::default()
    };
    cfg.overrides
        .languages
        .insert(language.to_string(), vec![server.to_string()]);
    cfg
}

/// Override one server's fields.
pub fn patch(cfg: &mut LspConfig, id: &str, p: ServerPatch) {
    cfg.overrides.servers.insert(id.to_string(), p);
}

pub fn empty_file() -> ConfigFile {
    ConfigFile::default()
}

pub struct Fx {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub reg: agent_tier::Registry,
}

/// Copy `tests/fixtures/<dir>` to a fresh tempdir and attach the family with `cfg`.
pub fn fixture(dir: &str, cfg: LspConfig) -> Fx {
    let tmp = tempfile::Builder::new()
        .prefix("agent-lsp-")
        .tempdir()
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    if !dir.is_empty() {
        agent_testkit::copy_dir(&fixtures().join(dir), &root);
    }
    let reg = agent_tier::Registry::new(RunInfo {
        root: root.clone(),
        ..Default::default()
    });
    reg.register(agent_testkit::FakeWrite);
    agent_lsp::attach(&reg, cfg);
    Fx {
        _dir: tmp,
        root,
        reg,
    }
}

impl Fx {
    pub async fn lsp(&self, args: Value) -> ToolOutput {
        self.reg.call("lsp", args, Surface::Full).await
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.reg.call(tool, args, Surface::Full).await
    }

    pub async fn write(&self, path: &str, content: &str) -> ToolOutput {
        self.call("write", json!({"path": path, "content": content}))
            .await
    }

    /// Replace the tempdir path so snapshots are stable.
    pub fn red(&self, s: &str) -> String {
        s.replace(&self.root.display().to_string(), "<root>")
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

/// One call and what its text must contain.
pub struct Case {
    pub args: Value,
    pub expect: Vec<&'static str>,
    pub error: bool,
}

pub fn ok(args: Value, expect: &[&'static str]) -> Case {
    Case {
        args,
        expect: expect.to_vec(),
        error: false,
    }
}

pub fn err(args: Value, expect: &[&'static str]) -> Case {
    Case {
        args,
        expect: expect.to_vec(),
        error: true,
    }
}

pub async fn check(fx: &Fx, case: &Case) {
    let out = fx.lsp(case.args.clone()).await;
    let text = fx.red(&out.text);
    assert_eq!(
        out.is_error, case.error,
        "args {}: unexpected is_error={}:\n{text}",
        case.args, out.is_error
    );
    for e in &case.expect {
        assert!(
            text.contains(e),
            "args {}: expected `{e}` in:\n{text}",
            case.args
        );
    }
}

pub async fn check_all(fx: &Fx, cases: &[Case]) {
    for c in cases {
        check(fx, c).await;
    }
}

/// The ledger cases of diagnostics on write, with `good` (no error), `bad` (one error whose
/// message contains `expect`) contents of `file`.
pub async fn check_write_ledger(fx: &Fx, file: &str, good: &str, bad: &str, expect: &str) {
    const HEAD: &str = "The write succeeded. The language server reports these new problems";
    let out = fx.write(file, good).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        !out.text.contains(HEAD),
        "clean write reported problems:\n{}",
        out.text
    );

    // An error introduced by a write is reported, once.
    let out = fx.write(file, bad).await;
    let text = fx.red(&out.text);
    assert!(text.starts_with(&format!("wrote {file}")), "{text}");
    assert!(
        text.contains(HEAD),
        "the new error was not reported:\n{text}"
    );
    assert!(text.contains(expect), "{text}");
    let hits = text
        .lines()
        .filter(|l| l.starts_with(&format!("{file}:")) && l.contains(expect))
        .count();
    assert_eq!(hits, 1, "reported once:\n{text}");
    let diags = out.structured.as_ref().unwrap()["diagnostics"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!diags.is_empty());

    // The same error moved four lines down is not new.
    let moved = format!("\n\n\n\n{bad}");
    let out = fx.write(file, &moved).await;
    assert!(
        !out.text.contains(HEAD),
        "moved error re-reported:\n{}",
        out.text
    );

    // Fixed, then broken the same way again: the ledger is per run.
    let out = fx.write(file, good).await;
    assert!(!out.text.contains(HEAD), "{}", out.text);
    let out = fx.write(file, bad).await;
    assert!(
        !out.text.contains(HEAD),
        "re-broken error re-reported:\n{}",
        out.text
    );
}

/// Rename through `lsp_rename` and check the result names these files and was verified with
/// the server's references (no second witness here); returns the rendered result.
pub async fn check_rename(fx: &Fx, args: Value, files: &[&str]) -> String {
    let out = fx.call("lsp_rename", args.clone()).await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{args}: {text}");
    assert!(
        text.contains(&format!("in {} file(s)", files.len())),
        "{text}"
    );
    for f in files {
        assert!(
            text.contains(&format!("- {f}: ")),
            "{f} missing in:\n{text}"
        );
    }
    // This family's tests run without the structural-search family's witness: the server's
    // own check must hold, and the result must not call itself verified by a second witness.
    assert!(
        text.contains("not verified by a second witness")
            && text.contains("the server's own check: verified: "),
        "{text}"
    );
    text
}
