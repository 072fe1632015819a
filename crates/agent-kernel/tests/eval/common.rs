//! Shared fixtures: a registry with fake host tools, a project whose `.venv` is the test venv,
//! and a `run` helper.
#![allow(dead_code)]

use agent_kernel::KernelConfig;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{
    ApprovalDecision, ApprovalRequest, Approver, BoxError, CallContext, Registry, RunInfo, Surface,
    Tier, Tool, ToolOutput,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

/// The venv that `cargo xtask setup` fills (pandas, matplotlib, jupyter_client, ipykernel).
pub fn tools_venv() -> PathBuf {
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"));
    assert!(
        venv.join("bin/python").is_file(),
        "the test venv's python ({}/bin/python) is missing: run `cargo xtask setup` or set AGENT_TOOLS_VENV",
        venv.display()
    );
    venv
}

/// `node` must be on $PATH (the test kit's rule: a missing real program fails the test).
pub fn require_node() {
    agent_testkit::require("node");
}

/// A project directory whose `.venv` is a symlink to the test venv.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(tools_venv(), dir.path().join(".venv")).expect("symlink .venv");
    dir
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArgs {
    /// A path.
    pub path: String,
}

/// A fake host `read`.
pub struct FakeRead;
impl Tool for FakeRead {
    type Args = PathArgs;
    fn name(&self) -> &str {
        "read"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "read a file".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: PathArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::text(format!("contents of {}", args.path))
            .with_structured(json!({"path": args.path})))
    }
}

/// A tool that always fails.
pub struct Fails;
impl Tool for Fails {
    type Args = PathArgs;
    fn name(&self) -> &str {
        "fails"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "always fails".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: PathArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Err(format!("no such file: {}", args.path).into())
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowArgs {
    /// Milliseconds to wait.
    pub ms: u64,
    /// A label returned in the text.
    pub label: String,
}

/// A tool that takes a while (a subagent fan-out, say).
pub struct Slow;
impl Tool for Slow {
    type Args = SlowArgs;
    fn name(&self) -> &str {
        "slow"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "waits".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: SlowArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(ToolOutput::text(format!("done {}", args.label)))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// A path.
    pub path: String,
    /// The content.
    pub content: String,
}

/// A fake host `write`.
pub struct FakeWrite;
impl Tool for FakeWrite {
    type Args = WriteArgs;
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "write a file".into()
    }
    async fn call(&self, args: WriteArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::text(format!("wrote {}", args.path))
            .with_structured(json!({"changed_files": [args.path.clone()]}))
            .with_changed_files([args.path]))
    }
}

/// Records every approval request and declines write-tier ones.
#[derive(Default)]
pub struct Recorder {
    pub seen: Mutex<Vec<ApprovalRequest>>,
}
impl Approver for Recorder {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + '_>> {
        let decline = request.tier == Tier::Write;
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request);
        Box::pin(async move {
            if decline {
                ApprovalDecision::Decline {
                    reason: Some("writes are not allowed in this test".into()),
                }
            } else {
                ApprovalDecision::Approve
            }
        })
    }
}

pub struct Kit {
    pub registry: Registry,
    pub dir: tempfile::TempDir,
}

impl Kit {
    pub fn new(config: KernelConfig) -> Kit {
        Self::with_prefix(config, Vec::new())
    }

    pub fn with_prefix(config: KernelConfig, prefix: Vec<String>) -> Kit {
        let dir = project();
        Self::in_dir(dir, config, prefix)
    }

    pub fn in_dir(dir: tempfile::TempDir, config: KernelConfig, prefix: Vec<String>) -> Kit {
        let registry = Registry::new(RunInfo {
            root: dir.path().to_path_buf(),
            sandbox_prefix: prefix,
        });
        registry.register(FakeRead);
        registry.register(Fails);
        registry.register(Slow);
        registry.register(FakeWrite);
        agent_kernel::attach(&registry, config);
        Kit { registry, dir }
    }

    pub async fn eval_on(&self, lang: &str, code: &str, surface: Surface) -> ToolOutput {
        self.registry
            .call(
                "eval",
                json!({"code": code, "description": "run a test cell for the kernel", "language": lang}),
                surface,
            )
            .await
    }

    pub async fn py(&self, code: &str) -> ToolOutput {
        self.eval_on("python", code, Surface::Full).await
    }

    pub async fn js(&self, code: &str) -> ToolOutput {
        self.eval_on("javascript", code, Surface::Full).await
    }

    pub async fn call(&self, args: Value) -> ToolOutput {
        self.registry.call("eval", args, Surface::Full).await
    }

    /// The text with the project path replaced by `[ROOT]`.
    pub fn redact(&self, text: &str) -> String {
        let root = self.dir.path().to_string_lossy().to_string();
        let real = std::fs::canonicalize(self.dir.path())
            .map(|p| p.to_string_lossy().to_string())
            .unwrap_or_else(|_| root.clone());
        text.replace(&real, "[ROOT]").replace(&root, "[ROOT]")
    }
}

pub fn status(out: &ToolOutput) -> String {
    out.structured
        .as_ref()
        .and_then(|s| s["status"].as_str())
        .unwrap_or("?")
        .to_string()
}

pub fn kernel_field(out: &ToolOutput, field: &str) -> Value {
    out.structured
        .as_ref()
        .map(|s| s["kernel"][field].clone())
        .unwrap_or(Value::Null)
}

/// Assert a cell succeeded with exactly this text.
#[track_caller]
pub fn ok(out: &ToolOutput, want: &str) {
    assert!(!out.is_error, "cell failed: {}", out.text);
    assert_eq!(out.text, want, "structured: {:?}", out.structured);
}

/// Assert a cell's text contains every fragment.
#[track_caller]
pub fn contains(out: &ToolOutput, fragments: &[&str]) {
    for f in fragments {
        assert!(out.text.contains(f), "missing {f:?} in:\n{}", out.text);
    }
}
