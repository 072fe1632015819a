//! `evaluate`: an expression in a frame's own scope (default: the top frame).

use super::inspect::{check_frame, require_stopped, top_frame};
use super::rows::variable_row;
use crate::DapError;
use crate::args::Op;
use crate::limits::MAX_VALUE;
use crate::protocol::{Evaluate, EvaluateArguments, Variable};
use crate::report::Evaluated;
use crate::supervisor::Supervisor;

pub(super) async fn run(
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
