//! `launch`: start a program, a Python module or one test under the adapter that debugs it,
//! stopping at the breakpoints. What a test launch runs is worked out in `launch_test`.

use super::launch_test;
use super::plan::Plan;
use super::start::{Start, start};
use crate::DapError;
use crate::adapters::{self, AdapterId, LaunchSpec};
use crate::args::{Exceptions, LaunchTarget, Op};
use crate::report::Started;
use crate::supervisor::Supervisor;
use agent_tier::workspace::{confine, confine_existing};
use std::collections::BTreeMap;

/// What the model asked to launch.
pub(super) struct Request<'a> {
    pub target: &'a LaunchTarget,
    pub args: &'a [String],
    pub cwd: Option<&'a str>,
    pub env: &'a BTreeMap<String, String>,
    pub adapter: Option<AdapterId>,
    pub exceptions: Exceptions,
}

pub(super) async fn run(sup: &Supervisor, req: Request<'_>) -> Result<Started, DapError> {
    sup.reject_live().await?;
    let cwd = match req.cwd {
        Some(c) => Some(confine_existing(&sup.root, "cwd", c)?),
        None => None,
    };
    let root = || confine(&sup.root, "cwd", ".");
    // Which adapter, and where its root marker is looked for from (also where function
    // breakpoints are looked up near).
    let test = match req.target {
        LaunchTarget::Test { path, name } => {
            Some(launch_test::resolve(sup, path, name, req.adapter)?)
        }
        _ => None,
    };
    let (adapter, near) = match (req.target, &test) {
        (_, Some(t)) => (t.adapter, t.path.clone()),
        (LaunchTarget::Program(p), None) => {
            let program = confine_existing(&sup.root, "program", p)?;
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
            (adapter, program)
        }
        (_, None) => (AdapterId::Debugpy, cwd.clone().map_or_else(root, Ok)?),
    };
    let detected = adapters::detect(adapter, &sup.root, &near, &sup.config.extra_bin_dirs);
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
    let plan = match (req.target, test) {
        (_, Some(t)) => launch_test::plan(sup, &t, req.args, req.env).await?,
        (LaunchTarget::Module(m), None) => Plan {
            program: near.clone(),
            module: Some(m.clone()),
            test: false,
            args: req.args.to_vec(),
            cwd: root()?,
            target: format!("python -m {m}"),
            built: None,
        },
        (_, None) => Plan {
            program: near.clone(),
            module: None,
            test: false,
            args: req.args.to_vec(),
            cwd: root()?,
            target: sup.shown(&near),
            built: None,
        },
    };
    let cwd = cwd.unwrap_or_else(|| plan.cwd.clone());
    let spec = LaunchSpec {
        program: &plan.program,
        module: plan.module.as_deref(),
        test: plan.test,
        args: &plan.args,
        cwd: &cwd,
        env: req.env,
        binary: &binary,
        marker: &marker,
        prefix: &sup.prefix,
    };
    let launch = adapter.adapter().launch(&spec).await;
    if let Some(scratch) = launch.scratch {
        *sup.scratch.lock() = Some(scratch);
    }
    start(
        sup,
        Start {
            adapter,
            binary: &binary,
            marker: &marker,
            target: plan.target,
            arguments: launch.arguments,
            attach_port: None,
            adapter_env: launch.adapter_env,
            exceptions: req.exceptions,
            program: plan.module.is_none().then_some(near.as_path()),
            built: plan.built,
        },
    )
    .await
}
