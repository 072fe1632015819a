//! `threads`: the debuggee's thread ids and names.

use super::inspect::threads;
use crate::DapError;
use crate::report::{ThreadRow, Threads};
use crate::supervisor::Supervisor;

pub(super) async fn run(sup: &Supervisor) -> Result<Threads, DapError> {
    let s = sup.live().await?;
    let threads = threads(&s)
        .await?
        .into_iter()
        .map(|t| ThreadRow {
            id: t.id,
            name: t.name,
        })
        .collect();
    Ok(Threads { threads })
}
