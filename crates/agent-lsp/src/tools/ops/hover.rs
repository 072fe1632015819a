//! hover: the server's signature and doc text for the symbol.

use super::super::command::At;
use crate::client::Server;
use crate::error::LspError;
use crate::protocol::TextDocumentPositionParams;
use crate::protocol::{Definition, HoverRequest};
use crate::render::{escapes, hover_text, locations};
use crate::tools::ops::answer::{Answer, HoverBody};
use crate::tools::{Operation, State};

impl State {
    pub(in crate::tools) async fn hover(&self, at: &At) -> Result<Answer<HoverBody>, LspError> {
        let op = Operation::Hover;
        let l = self.locate(op, at).await?;
        self.offered::<HoverRequest>(&l, op)?;
        let (result, partial) = self.ask::<HoverRequest>(&l.srv, &l.pos).await?;
        let partial = partial || !l.ready;
        let (head, r) = self.answer_head(&l, op, partial);
        let hover = hover_text(result.as_ref());
        // A hover quotes the file that declares the symbol: withheld when that file is reached
        // through a symlink out of the root (`read` refuses it too).
        let declared_outside = if hover.is_empty() {
            Vec::new()
        } else {
            self.declared_outside(&l.srv, &l.pos).await
        };
        let body = HoverBody {
            hover: if declared_outside.is_empty() {
                hover
            } else {
                String::new()
            },
            declared_outside,
        };
        Ok(self.finish(head, body, &r))
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
