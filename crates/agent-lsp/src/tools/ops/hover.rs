//! hover: the server's signature and doc text for the symbol.

use super::super::command::At;
use super::*;
use crate::protocol::{Definition, HoverRequest};

impl State {
    pub(in crate::tools) async fn hover(&self, at: &At) -> Result<ToolOutput, LspError> {
        let op = Operation::Hover;
        let l = self.locate(op, at).await?;
        self.offered::<HoverRequest>(&l, op)?;
        let (result, partial) = self.ask::<HoverRequest>(&l.srv, &l.pos).await?;
        let partial = partial || !l.ready;
        let (mut structured, r) = self.answer_head(&l, op, partial);
        let mut text = Vec::new();
        let mut md = hover_text(result.as_ref());
        // A hover quotes the file that declares the symbol: withheld when that file is reached
        // through a symlink out of the root (`read` refuses it too).
        let outside = if md.is_empty() {
            Vec::new()
        } else {
            self.declared_outside(&l.srv, &l.pos).await
        };
        if !outside.is_empty() {
            md.clear();
            text.push(format!(
                "hover for `{}` at {} withheld: it is declared in {}, outside the workspace root through a symlink (`read` refuses it too)",
                l.t.symbol,
                l.at,
                outside.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            ));
        } else if md.is_empty() {
            text.push(format!(
                "no hover information for `{}` at {} ({})",
                l.t.symbol, l.at, l.srv.spec.id
            ));
        } else {
            text.push(format!(
                "hover for `{}` at {} ({}):",
                l.t.symbol, l.at, l.srv.spec.id
            ));
            text.push(md.clone());
        }
        structured["hover"] = json!(md);
        Ok(self.finish(&l, text, structured, &r, partial))
    }

    /// The files out of the root (through a symlink) that declare the symbol at `at`.
    async fn declared_outside(&self, srv: &Server, at: &TextDocumentPositionParams) -> Vec<String> {
        if !srv.supports::<Definition>() {
            return Vec::new();
        }
        let Ok((v, _)) = self.ask::<Definition>(srv, at).await else {
            return Vec::new();
        };
        let mut out: Vec<String> = locations(&v)
            .into_iter()
            .filter(|(p, _, _)| escapes(self.ws(), p))
            .map(|(p, _, _)| agent_tier::workspace::display_path(self.ws(), &p))
            .collect();
        out.dedup();
        out
    }
}
