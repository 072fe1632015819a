//! `launch`: start a program under the adapter that debugs it, stopping at the breakpoints.

use super::start::{Start, start};
use crate::DapError;
use crate::adapters::{self, AdapterId, LaunchSpec};
use crate::args::{Exceptions, Op};
use crate::state::lock;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use agent_tier::workspace::{confine, confine_existing};
use std::collections::BTreeMap;

/// What the model asked to launch.
pub(super) struct Request<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: Option<&'a str>,
    pub env: &'a BTreeMap<String, String>,
    pub adapter: Option<AdapterId>,
    pub exceptions: Exceptions,
}

pub(super) async fn run(sup: &Supervisor, req: Request<'_>) -> Result<ToolOutput, DapError> {
    sup.reject_live().await?;
    let program = confine_existing(&sup.root, "program", req.program)?;
    let adapter = match req.adapter {
        Some(a) => a,
        None => adapters::infer(&program).map_err(|why| DapError::Argument {
            op: Op::Launch.name(),
            arg: "adapter",
            detail: format!(
                "cannot tell which debugger runs `{}` ({why}); pass adapter: debugpy | lldb | delve | dart",
                sup.shown(&program)
            ),
        })?,
    };
    let detected = adapters::detect(adapter, &sup.root, &program, &sup.config.extra_bin_dirs);
    if let Some(why) = detected.why_not() {
        return Err(DapError::Unusable {
            adapter: adapter.name(),
            why,
        });
    }
    // Invariant: `why_not` is None only when both are present.
    let (Some(binary), Some(marker)) = (detected.binary, detected.marker) else {
        return Err(DapError::Unusable {
            adapter: adapter.name(),
            why: "detection is inconsistent".into(),
        });
    };
    let cwd = match req.cwd {
        Some(c) => confine_existing(&sup.root, "cwd", c)?,
        None => confine(&sup.root, "cwd", ".")?,
    };
    let spec = LaunchSpec {
        program: &program,
        args: req.args,
        cwd: &cwd,
        env: req.env,
        binary: &binary,
        marker: &marker,
        prefix: &sup.prefix,
    };
    let launch = adapter.adapter().launch(&spec).await;
    if let Some(scratch) = launch.scratch {
        *lock(&sup.scratch) = Some(scratch);
    }
    start(
        sup,
        Start {
            adapter,
            binary: &binary,
            marker: &marker,
            target: sup.shown(&program),
            arguments: launch.arguments,
            attach_port: None,
            adapter_env: launch.adapter_env,
            exceptions: req.exceptions,
            program: Some(&program),
        },
    )
    .await
}
