//! # agent-testkit
//!
//! What every family's tests share, so no suite writes its own:
//!
//! - the rule that a test needing a real program fails without it ([`require`]);
//! - fixture folders copied to a fresh root ([`copy_dir`], [`Root`]);
//! - the fake host `write` tool a harness would supply ([`FakeWrite`]);
//! - insta redaction of run-specific paths ([`redact`]);
//! - the MCP client that drives `agent-tools serve` over stdio ([`serve::Client`]);
//! - the raw LSP client benches measure the `lsp` tool against ([`raw_lsp::Raw`]);
//! - the folder-for-symlink swap the read race tests run ([`swap::Swapper`]);
//! - bubblewrap hidden, as on most containers and CI images ([`without_bwrap`]);
//! - the socket a contained program reports to when it runs ([`reports::Reports`]).
//!
//! It is a dev-dependency only: `tests/architecture.rs` refuses it anywhere else, and it is never
//! published. It owns no tool logic and spawns nothing but the program a test or bench hands it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

pub mod raw_lsp;
pub mod reports;
pub mod serve;
pub mod swap;

use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{CallContext, Tier, Tool, ToolOutput};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Django 5.2.8's sdist, which `cargo xtask setup` unpacks into `.tools/corpora` (the
/// witness tests and bench run on it); `AGENT_TOOLS_DJANGO` (set by `cargo xtask test`) names it.
/// Fails, never skips, when it is missing.
pub fn django() -> PathBuf {
    let p = std::env::var_os("AGENT_TOOLS_DJANGO")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/corpora/django-5.2.8")
        });
    assert!(
        p.join("django/shortcuts.py").is_file(),
        "Django's sdist is not at {}: run `cargo xtask setup`",
        p.display()
    );
    p.canonicalize().unwrap()
}

/// The path of `program` on `PATH`. A test that needs a real program fails without it — it
/// never skips (`cargo xtask setup` installs every program the tests use, and `cargo xtask
/// test` puts `.tools/venv/bin` and `.tools/node/node_modules/.bin` on `PATH`).
pub fn require(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{program}` is not on PATH; run `cargo xtask setup` (and run tests through `cargo xtask test`, which puts .tools/venv/bin and .tools/node/node_modules/.bin on PATH)"
            )
        })
}

/// A command that starts `program` (its arguments added by the caller) where bubblewrap is
/// hidden, as on most containers and CI images: in a private mount namespace (`unshare -m`)
/// with `/dev/null` bound over `bwrap`, so no lookup finds it and the host falls back to
/// Landlock. It exits with 97 if bubblewrap could not be hidden; [`hidden_bwrap_failed`] says
/// so of an output.
pub fn without_bwrap(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let bwrap = require("bwrap");
    let mut c = std::process::Command::new(require("unshare"));
    c.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind /dev/null \"$1\" || exit 97; shift; exec \"$@\"")
        .arg("sh")
        .arg(bwrap)
        .arg(program);
    c
}

/// Whether a command of [`without_bwrap`] ended because bubblewrap could not be hidden.
pub fn hidden_bwrap_failed(out: &std::process::Output) -> bool {
    out.status.code() == Some(97)
}

/// The virtualenv the test environment provides (`AGENT_TOOLS_VENV`, set by `cargo xtask test`).
pub fn venv() -> PathBuf {
    let v = std::env::var_os("AGENT_TOOLS_VENV").expect(
        "AGENT_TOOLS_VENV is not set: run the tests with `cargo xtask test` (it points at <workspace>/.tools/venv)",
    );
    PathBuf::from(v)
}

/// Copy the folder `from` into `to` (created), recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A fresh workspace root in a temp folder (canonical, so that paths the tools print match it);
/// removed when dropped.
pub struct Root {
    _dir: tempfile::TempDir,
    /// The root's canonical path.
    pub path: PathBuf,
}

impl Root {
    /// An empty root whose folder name starts with `prefix`.
    pub fn new(prefix: &str) -> Root {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap();
        Root { _dir: dir, path }
    }

    /// A root holding a copy of `fixture`.
    pub fn with_copy(prefix: &str, fixture: &Path) -> Root {
        let r = Root::new(prefix);
        copy_dir(fixture, &r.path);
        r
    }

    /// A root holding these files (`(relative path, content)`).
    pub fn with_files(prefix: &str, files: &[(&str, &str)]) -> Root {
        let r = Root::new(prefix);
        for (name, text) in files {
            let p = r.path.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        r
    }
}

/// `text` with the run's root shown as `<root>`, for insta snapshots that must not depend on
/// the temp folder a run got.
pub fn redact(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "<root>")
}

/// The host's own `write {path, content}`, as a harness supplies it: writes the file and
/// reports it as changed (with what it held before), so wrappers that act on changed files
/// (the lsp family's diagnostics on write) see it like any write tool.
pub struct FakeWrite;

/// Arguments of [`FakeWrite`].
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// Path relative to the root.
    pub path: String,
    /// New content.
    pub content: String,
}

impl Tool for FakeWrite {
    type Args = WriteArgs;
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "test write".into()
    }
    async fn call(
        &self,
        args: WriteArgs,
        cx: CallContext,
    ) -> Result<ToolOutput, agent_tier::BoxError> {
        let p = cx.run().root.join(&args.path);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        let before = std::fs::read(&p).ok();
        std::fs::write(&p, &args.content)?;
        Ok(ToolOutput::text(format!("wrote {}", args.path))
            .with_structured(serde_json::json!({"changed_files": [args.path.clone()]}))
            .with_previous(args.path, before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tier::{Registry, RunInfo, Surface};
    use serde_json::json;

    #[tokio::test]
    async fn the_fake_write_reports_what_it_changed() {
        let root = Root::with_files("kit-", &[("a.txt", "old")]);
        let reg = Registry::new(RunInfo {
            root: root.path.clone(),
            ..Default::default()
        });
        reg.register(FakeWrite);
        let out = reg
            .call(
                "write",
                json!({"path": "a.txt", "content": "new"}),
                Surface::Full,
            )
            .await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.changed_files, vec!["a.txt".to_string()]);
        assert_eq!(
            out.previous.get("a.txt").map(Vec::as_slice),
            Some(&b"old"[..])
        );
        assert_eq!(
            std::fs::read_to_string(root.path.join("a.txt")).unwrap(),
            "new"
        );
        assert_eq!(
            redact(&format!("{}/a.txt", root.path.display()), &root.path),
            "<root>/a.txt"
        );
    }

    #[test]
    #[should_panic(expected = "is not on PATH")]
    fn a_missing_program_fails_the_test() {
        require("agent-testkit-no-such-program");
    }
}
