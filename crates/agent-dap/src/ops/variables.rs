//! `variables`: the children of a reference handed out since the last stop, at most
//! `MAX_CHILDREN`, each value capped.

use super::inspect::{require_stopped, variables};
use super::rows::variable_row;
use crate::DapError;
use crate::args::Op;
use crate::limits::{MAX_CHILDREN, MAX_VALUE};
use crate::report::VariablesOf;
use crate::supervisor::Supervisor;

pub(super) async fn run(sup: &Supervisor, reference: i64) -> Result<VariablesOf, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Variables.name())?;
    {
        let known = s.known();
        if !known.refs.contains(&reference) {
            let list = known
                .refs
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(DapError::Unknown {
                what: format!(
                    "unknown reference {reference}; references are valid until the program moves and come from `scopes`, `variables` or `evaluate`. Known now: {}",
                    if list.is_empty() {
                        "none (call `scopes` first)".to_string()
                    } else {
                        list
                    }
                ),
            });
        }
    }
    let vars = variables(&s, reference).await?;
    Ok(VariablesOf {
        reference,
        variables: vars
            .iter()
            .take(MAX_CHILDREN)
            .map(|v| variable_row(&s, v, MAX_VALUE))
            .collect(),
        not_shown: vars.len().saturating_sub(MAX_CHILDREN),
    })
}
