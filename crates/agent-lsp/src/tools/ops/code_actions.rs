//! code_actions: the quick fixes a server offers for the diagnostics on the symbol's line. The
//! tool lists them; it cannot apply any (a fix is made with `edit` or `apply_patch`).

use crate::error::LspError;
use crate::protocol::{CodeActionContext, CodeActionParams, CodeActionRequest, Position, Range};
use crate::state::State;
use crate::tools::At;
use crate::tools::Operation;
use crate::tools::asking;
use crate::tools::ops::answer::{self, Action, Actions, Answer};
use crate::tools::target;
use std::time::Duration;

pub(in crate::tools) async fn code_actions(
    st: &State,
    at: &At,
) -> Result<Answer<Actions>, LspError> {
    let op = Operation::CodeActions;
    let l = target::locate(st, op, at).await?;
    // The diagnostics on that line give the quick fixes.
    let synced = l.srv.sync(&l.t.path, &l.t.text, false).await?;
    let diags = l
        .srv
        .fresh_diagnostics(&l.t.path, synced, Duration::from_secs(5))
        .await
        .items;
    let line0 = l.t.line0;
    let on_line: Vec<_> = diags
        .into_iter()
        .filter(|d| (d.range.start.line..=d.range.end.line).contains(&line0))
        .collect();
    let params = CodeActionParams {
        text_document: l.pos.text_document.clone(),
        range: Range {
            start: l.pos.position,
            end: Position {
                line: line0,
                character: l.end,
            },
        },
        context: CodeActionContext {
            diagnostics: on_line,
            trigger_kind: 1,
        },
    };
    answer::offered::<CodeActionRequest>(&l, op)?;
    let (result, partial) = asking::ask::<CodeActionRequest>(st, &l.srv, &params).await?;
    let partial = partial || !l.ready;
    let (head, r) = answer::answer_head(st, &l, op, partial);
    let all = result.len();
    // Quick fixes only: refactorings and source actions are listed by count.
    let actions: Vec<Action> = result
        .iter()
        .map(|a| Action {
            title: a.title.clone(),
            kind: a.kind.clone().unwrap_or_default(),
            preferred: a.is_preferred == Some(true),
        })
        .filter(|a| a.kind == "quickfix" || a.kind.starts_with("quickfix."))
        .collect();
    let body = Actions {
        other_actions: all - actions.len(),
        actions,
    };
    Ok(answer::finish(head, body, &r))
}
