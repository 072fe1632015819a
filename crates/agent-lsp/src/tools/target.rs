//! Where a call points (line + symbol resolved on the file) and how the server is asked:
//! retried, settled, the document synced first.

use super::command::At;
use crate::client::{CONTENT_MODIFIED, REQUEST_CANCELLED, SERVER_CANCELLED, Server};
use crate::error::LspError;
use crate::protocol::{Locations, MaybeEmpty};
use crate::text::lines;
use crate::tools::{State, Target, arg_err};
use crate::{address, protocol};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl State {
    pub(super) fn target(&self, op: &str, at: &At, for_write: bool) -> Result<Target, LspError> {
        let (file, line, occurrence) = (at.file.as_str(), at.line, at.occurrence);
        let symbol = Some(at.symbol.as_str())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                arg_err(format!(
                    "`symbol` is required for `{op}`: give a substring of line {line} that names the symbol (positions are never columns)"
                ))
            })?;
        let (path, display, text) = self.read_file(file)?;
        let ls = lines(&text);
        if line == 0 || line as usize > ls.len() {
            return Err(arg_err(format!(
                "`line` = {line} is not a line of `{display}` (it has {} lines; lines are 1-based)",
                ls.len()
            )));
        }
        let line_text = ls[line as usize - 1].to_string();
        let r = match address::resolve(&ls, line as usize - 1, symbol, occurrence, for_write) {
            Ok(r) => r,
            Err(address::Miss::NotOnLine { nearby }) => {
                let ident = address::identifier(symbol);
                let near = if nearby.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; `{ident}` does occur on {}",
                        nearby
                            .iter()
                            .map(|(n, t)| format!("line {n} (`{t}`)"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                return Err(arg_err(format!(
                    "symbol `{symbol}` is not on line {line} of `{display}`; that line reads: `{}`{near}",
                    line_text.trim()
                )));
            }
            Err(address::Miss::OutOfRange { count }) => {
                return Err(arg_err(format!(
                    "`occurrence` = {} is out of range: `{symbol}` occurs {count} time(s) on line {line} of `{display}`; that line reads: `{}`",
                    occurrence.unwrap_or(1),
                    line_text.trim()
                )));
            }
            Err(address::Miss::Ambiguous { candidates }) => {
                return Err(arg_err(format!(
                    "`{symbol}` occurs {} times on line {line} of `{display}` (`{}`): {}; `{op}` never acts on a guess: pass `occurrence`",
                    candidates.len(),
                    line_text.trim(),
                    candidates
                        .iter()
                        .map(|(k, col)| format!("occurrence {k} at column {col}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let byte = r.byte;
        let mut notes = Vec::new();
        if r.count > 1 && occurrence.is_none() {
            notes.push(format!(
                "`{}` occurs {} times on line {line}; the first was used (pass `occurrence` to pick another)",
                r.ident, r.count
            ));
        }
        if r.inside {
            notes.push(format!(
                "`{}` is not a whole identifier on line {line}; the match inside `{}` was used",
                r.ident,
                line_text[byte..]
                    .split(|c: char| !address::is_ident(c))
                    .next()
                    .unwrap_or_default()
            ));
        }
        if !r.also_inside.is_empty() {
            notes.push(format!(
                "`{}` was taken as a whole identifier (also inside: {})",
                r.ident,
                r.also_inside
                    .iter()
                    .map(|w| format!("`{w}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if r.ident != symbol {
            notes.push(format!(
                "`{symbol}` was resolved to its identifier `{}`",
                r.ident
            ));
        }
        let note = (!notes.is_empty() && !at.exact).then(|| format!("note: {}", notes.join("; ")));
        let symbol = r.ident.as_str();
        Ok(Target {
            path,
            display,
            text,
            line0: line - 1,
            line_text,
            byte,
            symbol: symbol.to_string(),
            note,
        })
    }

    /// The request `R` with retries: ContentModified / cancelled are retried; an empty answer
    /// from a server that is still young or loading is asked again. Returns the answer and
    /// whether it may be partial.
    pub(super) async fn ask<R>(
        &self,
        srv: &Server,
        params: &R::Params,
    ) -> Result<(R::Result, bool), LspError>
    where
        R: agent_rpc::Request,
        R::Result: MaybeEmpty,
    {
        let ready_timeout = self.sup.cfg.ready_timeout;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match srv.call::<R>(params).await {
                Err(LspError::Rpc { code, .. })
                    if attempt < 8
                        && (code == CONTENT_MODIFIED
                            || code == SERVER_CANCELLED
                            || code == REQUEST_CANCELLED) =>
                {
                    tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
                    srv.wait_ready(ready_timeout).await;
                }
                Err(e) => return Err(e),
                Ok(v) => {
                    let empty = v.is_empty();
                    let young = srv.started.elapsed() < Duration::from_secs(20);
                    if empty && (young || !srv.is_idle()) && attempt < 5 {
                        tokio::time::sleep(Duration::from_millis(700)).await;
                        srv.wait_ready(ready_timeout).await;
                        continue;
                    }
                    return Ok((v, empty && !srv.is_idle()));
                }
            }
        }
    }

    /// [`State::ask`], repeated until two consecutive answers hold the same locations (bounded
    /// by the ready timeout); an answer that never settled is partial.
    pub(super) async fn ask_settled<R>(
        &self,
        srv: &Server,
        params: &R::Params,
    ) -> Result<(Locations, bool), LspError>
    where
        R: agent_rpc::Request<Result = Locations>,
    {
        fn key(v: &Locations) -> Vec<protocol::AnyLocation> {
            let mut k = v.0.clone();
            k.sort();
            k
        }
        let deadline = Instant::now() + self.sup.cfg.ready_timeout;
        let (mut last, _) = self.ask::<R>(srv, params).await?;
        loop {
            if Instant::now() >= deadline {
                return Ok((last, true));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            srv.wait_ready(deadline.saturating_duration_since(Instant::now()))
                .await;
            let (next, p) = self.ask::<R>(srv, params).await?;
            if key(&next) == key(&last) {
                return Ok((next, p));
            }
            last = next;
        }
    }

    pub(super) async fn open(&self, t: &Target) -> Result<(Arc<Server>, bool), LspError> {
        let srv = self.sup.server_for(&t.path).await?;
        srv.sync(&t.path, &t.text, false).await?;
        let ready = srv.wait_ready(self.sup.cfg.ready_timeout).await;
        Ok((srv, ready))
    }
}
