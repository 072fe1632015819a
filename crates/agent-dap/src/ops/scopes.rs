//! `scopes`: a frame's scopes (locals, globals, registers…), each with a reference.

use super::inspect::{check_frame, require_stopped, scopes};
use crate::DapError;
use crate::args::Op;
use crate::report::{ScopeRow, ScopesOf};
use crate::supervisor::Supervisor;

pub(super) async fn run(sup: &Supervisor, frame: i64) -> Result<ScopesOf, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Scopes.name())?;
    check_frame(sup, &s, frame).await?;
    let scopes = scopes(&s, frame)
        .await?
        .into_iter()
        .map(|sc| ScopeRow {
            name: sc.name,
            reference: sc.variables_reference,
            named_variables: sc.named_variables,
            expensive: sc.expensive,
        })
        .collect();
    Ok(ScopesOf {
        frame_id: frame,
        scopes,
    })
}
