//! hover: the server's signature and doc text for the symbol.

use crate::client::Server;
use crate::error::LspError;
use crate::protocol::TextDocumentPositionParams;
use crate::protocol::{Definition, HoverRequest};
use crate::render::{escapes, hover_text, locations};
use crate::state::State;
use crate::tools::At;
use crate::tools::Operation;
use crate::tools::asking;
use crate::tools::ops::answer::{self, Answer, HoverBody};
use crate::tools::target;

pub(in crate::tools) async fn hover(st: &State, at: &At) -> Result<Answer<HoverBody>, LspError> {
    let op = Operation::Hover;
    let l = target::locate(st, op, at).await?;
    answer::offered::<HoverRequest>(&l, op)?;
    let (result, partial) = asking::ask::<HoverRequest>(st, &l.srv, &l.pos).await?;
    let partial = partial || !l.ready;
    let (head, r) = answer::answer_head(st, &l, op, partial);
    let hover = hover_text(result.as_ref());
    // A hover quotes the file that declares the symbol: withheld when that file is reached
    // through a symlink out of the root (`read` refuses it too).
    let declared_outside = if hover.is_empty() {
        Vec::new()
    } else {
        declared_outside(st, &l.srv, &l.pos).await
    };
    let body = HoverBody {
        hover: if declared_outside.is_empty() {
            hover
        } else {
            String::new()
        },
        declared_outside,
    };
    Ok(answer::finish(head, body, &r))
}

/// The files out of the root (through a symlink) that declare the symbol at `at`.
async fn declared_outside(
    st: &State,
    srv: &Server,
    at: &TextDocumentPositionParams,
) -> Vec<String> {
    if !srv.supports::<Definition>() {
        return Vec::new();
    }
    let Ok((v, _)) = asking::ask::<Definition>(st, srv, at).await else {
        return Vec::new();
    };
    let mut out: Vec<String> = locations(&v)
        .into_iter()
        .filter(|(p, _, _)| escapes(st.ws(), p))
        .map(|(p, _, _)| agent_tier::workspace::display_path(st.ws(), &p))
        .collect();
    out.dedup();
    out
}
