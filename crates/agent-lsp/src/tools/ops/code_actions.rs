//! code_actions: the quick fixes a server offers for the diagnostics on the symbol's line. The
//! tool lists them; it cannot apply any (a fix is made with `edit` or `apply_patch`).

use super::super::command::At;
use super::*;
use crate::protocol::{CodeActionContext, CodeActionParams, CodeActionRequest, Position, Range};

impl State {
    pub(in crate::tools) async fn code_actions(&self, at: &At) -> Result<ToolOutput, LspError> {
        let op = Operation::CodeActions;
        let l = self.locate(op, at).await?;
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
        self.offered::<CodeActionRequest>(&l, op)?;
        let (result, partial) = self.ask::<CodeActionRequest>(&l.srv, &params).await?;
        let partial = partial || !l.ready;
        let (mut structured, r) = self.answer_head(&l, op, partial);
        let mut list = Vec::new();
        for a in result.iter() {
            list.push(json!({"title": a.title, "kind": a.kind.as_deref().unwrap_or_default(),
                "preferred": a.is_preferred == Some(true)}));
        }
        // Quick fixes only: refactorings and source actions are listed by count.
        let all = list.len();
        list.retain(|a| {
            a["kind"]
                .as_str()
                .is_some_and(|k| k == "quickfix" || k.starts_with("quickfix."))
        });
        let others = all - list.len();
        structured["other_actions"] = json!(others);
        let mut text = Vec::new();
        if list.is_empty() {
            text.push(format!(
                "no quick fixes for `{}` at {} ({})",
                l.t.symbol, l.at, l.srv.spec.id
            ));
        } else {
            text.push(format!(
                "quick fixes for `{}` at {} ({}):",
                l.t.symbol, l.at, l.srv.spec.id
            ));
            for a in &list {
                let kind = a["kind"]
                    .as_str()
                    .filter(|k| !k.is_empty())
                    .map(|k| format!(" [{k}]"))
                    .unwrap_or_default();
                let pref = if a["preferred"].as_bool() == Some(true) {
                    " (preferred)"
                } else {
                    ""
                };
                text.push(format!(
                    "- {}{kind}{pref}",
                    a["title"].as_str().unwrap_or("")
                ));
            }
        }
        if others > 0 {
            text.push(format!(
                "({others} other action(s) — refactorings or source actions — not shown; apply a fix with `edit` or `apply_patch`)"
            ));
        }
        structured["actions"] = json!(list);
        Ok(self.finish(&l, text, structured, &r, partial))
    }
}
