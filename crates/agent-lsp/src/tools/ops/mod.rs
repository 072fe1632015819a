//! The positional operations of `lsp`, one module each; what they share is here: resolving the
//! target and opening it ([`Located`]), and the notes every answer ends with.

use super::command::At;
use crate::client::Server;
use crate::error::LspError;
use crate::protocol::{Offered, TextDocumentPositionParams};
use crate::render::Renderer;
use crate::text::{path_to_uri, units_of_byte};
use crate::tools::{Operation, State, Target, arg_err};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod answer;
mod code_actions;
mod hierarchy;
mod hover;
mod nav;

pub(in crate::tools) use answer::{Answer, Body, Head};

/// A positional call's target, resolved on the file and synced to its server.
pub(super) struct Located {
    pub t: Target,
    pub srv: Arc<Server>,
    /// Whether the server had finished loading.
    pub ready: bool,
    /// The symbol's start and end column, in the server's units.
    pub character: u32,
    pub end: u32,
    /// The symbol's start, as the server is asked about it.
    pub pos: TextDocumentPositionParams,
    /// `file:line:column` as shown to the model (1-based, columns in characters).
    pub at: String,
}

/// The refusal of an operation the server does not offer.
pub(super) fn not_offered(l: &Located, op: Operation) -> LspError {
    arg_err(format!(
        "{} does not offer `{}`; use another operation (definition, hover, references), or make another server serve this language with `languages` in the lsp config",
        l.srv.spec.id,
        op.name()
    ))
}

impl State {
    pub(super) async fn locate(&self, op: Operation, at: &At) -> Result<Located, LspError> {
        self.locate_with(op, at, true).await
    }

    /// [`State::locate`]; `wait`: wait (bounded) for the server to finish loading, else only
    /// note whether it has.
    pub(super) async fn locate_with(
        &self,
        op: Operation,
        at: &At,
        wait: bool,
    ) -> Result<Located, LspError> {
        let t = self.target(op.name(), at, false)?;
        let srv = self.sup.server_for(&t.path).await?;
        srv.sync(&t.path, &t.text, false).await?;
        let ready = if wait {
            self.wait_ready_reporting(&srv).await
        } else {
            srv.is_idle()
        };
        let enc = srv.encoding();
        let character = units_of_byte(&t.line_text, t.byte, enc);
        let end = units_of_byte(&t.line_text, t.byte + t.symbol.len(), enc);
        let pos = TextDocumentPositionParams::new(path_to_uri(&t.path), t.line0, character);
        let shown_at = format!(
            "{}:{}:{}",
            t.display,
            t.line0 + 1,
            t.line_text[..t.byte].chars().count() + 1
        );
        Ok(Located {
            t,
            srv,
            ready,
            character,
            end,
            pos,
            at: shown_at,
        })
    }

    /// Wait (bounded by the ready timeout) until the server has finished loading, telling the
    /// call's progress what it waits for, about once a second; `false` when it had not in time.
    async fn wait_ready_reporting(&self, srv: &Server) -> bool {
        let timeout = self.sup.cfg.ready_timeout;
        if !agent_tier::progress_wanted() || srv.is_idle() || srv.stalled() {
            return srv.wait_ready(timeout).await;
        }
        let started = Instant::now();
        let deadline = started + crate::deadline::left(timeout);
        let root = match agent_tier::workspace::display_path(self.ws(), &srv.root) {
            d if d.is_empty() => ".".to_string(),
            d => d,
        };
        loop {
            let (tasks, _) = srv.loading();
            let tasks = match tasks {
                0 => String::new(),
                n => format!(", {n} task(s) in progress"),
            };
            agent_tier::progress(format!(
                "waiting for {} to finish indexing {root} ({} s{tasks})",
                srv.spec.id,
                started.elapsed().as_secs()
            ));
            let step = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_secs(1));
            if srv.wait_ready(step).await {
                return true;
            }
            if srv.exited().is_some() || Instant::now() >= deadline {
                return false;
            }
        }
    }

    /// Refuse an operation the server does not offer (`R` is the request that answers it).
    pub(super) fn offered<R: Offered>(&self, l: &Located, op: Operation) -> Result<(), LspError> {
        if l.srv.supports::<R>() {
            return Ok(());
        }
        Err(not_offered(l, op))
    }

    /// The answer's head, and its renderer with the target file loaded.
    pub(super) fn answer_head(
        &self,
        l: &Located,
        op: Operation,
        partial: bool,
    ) -> (Head, Renderer<'_>) {
        let head = Head {
            operation: op.name(),
            server: l.srv.spec.id.clone(),
            file: l.t.display.clone(),
            line: l.t.line0 + 1,
            symbol: l.t.symbol.clone(),
            partial,
            at: l.at.clone(),
            note: l.t.note.clone(),
            escaped: Vec::new(),
        };
        let mut r = Renderer::new(self.ws(), l.srv.encoding());
        r.preload(&l.t.path, &l.t.text);
        (head, r)
    }

    /// The answer: its head, the locations the renderer withheld because they lead out of the
    /// root, and what the operation found.
    pub(super) fn finish<B: Body>(&self, mut head: Head, body: B, r: &Renderer) -> Answer<B> {
        head.escaped = r.escaped.clone();
        Answer {
            head,
            body,
            resolved: None,
        }
    }
}
