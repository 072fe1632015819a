//! The operations that read a stopped debuggee: `threads`, `stack` (a thread's frames),
//! `scopes` (a frame's), `variables` (a reference's children) and `evaluate` (an expression in a
//! frame). What they ask of the session is `inspect`'s; the rows they answer with are `rows`'.

use super::inspect::{self, check_frame, frames, pick_thread, require_stopped, top_frame};
use super::rows::{frame_row, variable_row};
use crate::DapError;
use crate::args::Op;
use crate::limits::{MAX_CHILDREN, MAX_FRAMES, MAX_VALUE};
use crate::protocol::{Evaluate, EvaluateArguments, Variable};
use crate::report::{Evaluated, ScopeRow, ScopesOf, Stack, ThreadRow, Threads, VariablesOf};
use crate::supervisor::Supervisor;

/// `threads`: the debuggee's thread ids and names.
pub(super) async fn threads(sup: &Supervisor) -> Result<Threads, DapError> {
    let s = sup.live().await?;
    let threads = inspect::threads(&s)
        .await?
        .into_iter()
        .map(|t| ThreadRow {
            id: t.id,
            name: t.name,
        })
        .collect();
    Ok(Threads { threads })
}

/// `stack`: a stopped thread's frames, at most `MAX_FRAMES`, each with its frame id.
pub(super) async fn stack(sup: &Supervisor, thread_id: Option<i64>) -> Result<Stack, DapError> {
    let s = sup.live().await?;
    let state = require_stopped(&s, Op::Stack.name())?;
    let thread = pick_thread(&s, &state, thread_id).await?;
    let (frames, total) = frames(sup, &s, thread, MAX_FRAMES).await?;
    Ok(Stack {
        thread_id: thread,
        frames: frames
            .iter()
            .enumerate()
            .map(|(i, f)| frame_row(sup, i, f))
            .collect(),
        total,
    })
}

/// `scopes`: a frame's scopes (locals, globals, registers…), each with a reference.
pub(super) async fn scopes(sup: &Supervisor, frame: i64) -> Result<ScopesOf, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Scopes.name())?;
    check_frame(sup, &s, frame).await?;
    let scopes = inspect::scopes(&s, frame)
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

/// `variables`: the children of a reference handed out since the last stop, at most
/// `MAX_CHILDREN`, each value capped.
pub(super) async fn variables(sup: &Supervisor, reference: i64) -> Result<VariablesOf, DapError> {
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
    let vars = inspect::variables(&s, reference).await?;
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

/// `evaluate`: an expression in a frame's own scope (default: the top frame).
pub(super) async fn evaluate(
    sup: &Supervisor,
    expression: &str,
    frame_id: Option<i64>,
) -> Result<Evaluated, DapError> {
    let s = sup.live().await?;
    require_stopped(&s, Op::Evaluate.name())?;
    let frame = match frame_id {
        Some(f) => {
            check_frame(sup, &s, f).await?;
            f
        }
        None => top_frame(sup, &s).await?,
    };
    let context = s.adapter.adapter().evaluate_context();
    let body = s
        .call::<Evaluate>(&EvaluateArguments {
            expression: expression.to_string(),
            frame_id: frame,
            context,
        })
        .await?;
    let row = Variable {
        name: expression.to_string(),
        value: body.result,
        ty: body.ty,
        variables_reference: body.variables_reference,
    };
    Ok(Evaluated {
        frame,
        result: variable_row(&s, &row, MAX_VALUE),
    })
}
