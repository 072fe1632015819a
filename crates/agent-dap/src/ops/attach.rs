//! `attach`: debug a program already listening on a port of 127.0.0.1; `terminate` then
//! detaches and leaves it running.

use super::start::{Start, start};
use crate::DapError;
use crate::adapters::AdapterId;
use crate::args::{Exceptions, Op};
use crate::report::Started;
use crate::supervisor::Supervisor;

/// The adapters tried, in order, when the model names none.
const DEFAULT_ORDER: [AdapterId; 3] = [AdapterId::Debugpy, AdapterId::Delve, AdapterId::Lldb];

pub(super) async fn run(
    sup: &Supervisor,
    port: u16,
    adapter: Option<AdapterId>,
    exceptions: Exceptions,
) -> Result<Started, DapError> {
    sup.reject_live().await?;
    let found = sup.detect_all(&sup.root);
    let adapter = match adapter {
        Some(a) => a,
        None => DEFAULT_ORDER
            .into_iter()
            .find(|id| found.iter().any(|d| d.id == *id && d.usable()))
            .ok_or_else(|| DapError::Argument {
                op: Op::Attach.name(),
                arg: "adapter",
                detail: "no adapter that can attach is usable here (see `adapters`); pass adapter: debugpy | lldb | delve".into(),
            })?,
    };
    let Some(detected) = found.into_iter().find(|d| d.id == adapter) else {
        return Err(DapError::Unusable {
            adapter: adapter.name(),
            why: "unknown adapter".into(),
        });
    };
    if let Some(why) = detected.why_not() {
        return Err(DapError::Unusable {
            adapter: adapter.name(),
            why,
        });
    }
    let (Some(binary), Some(marker)) = (detected.binary, detected.marker) else {
        return Err(DapError::Unusable {
            adapter: adapter.name(),
            why: "detection is inconsistent".into(),
        });
    };
    let Some((arguments, via)) = adapter.adapter().attach(port) else {
        return Err(DapError::Argument {
            op: Op::Attach.name(),
            arg: "adapter",
            detail: format!(
                "attaching is supported for {}; {} is launch only",
                attach_capable(),
                adapter.name()
            ),
        });
    };
    let mut started = start(
        sup,
        Start {
            adapter,
            binary: &binary,
            marker: &marker,
            target: format!("127.0.0.1:{port}"),
            arguments,
            attach_port: Some((port, via)),
            adapter_env: Vec::new(),
            exceptions,
            program: None,
            built: None,
        },
    )
    .await?;
    started.attach_note = adapter.adapter().attach_note();
    Ok(started)
}

/// "debugpy, lldb and delve": the adapters that can attach, in `adapters` order.
fn attach_capable() -> String {
    let names: Vec<&str> = AdapterId::ALL
        .iter()
        .filter(|id| id.adapter().attach(1).is_some())
        .map(|id| id.name())
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}
