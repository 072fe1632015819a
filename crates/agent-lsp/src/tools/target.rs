//! Where a call points: `line` + `symbol` resolved on the file, with the notes that say how
//! ([`target`]), and for a positional operation that target synced to its server and turned
//! into the position the server is asked about ([`locate`]). How the server is then asked is
//! `asking`.

use crate::address;
use crate::client::Server;
use crate::error::LspError;
use crate::protocol::TextDocumentPositionParams;
use crate::state::State;
use crate::text::lines;
use crate::text::{path_to_uri, units_of_byte};
use crate::tools::At;
use crate::tools::{Operation, Target, arg_err};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn target(st: &State, op: &str, at: &At, for_write: bool) -> Result<Target, LspError> {
    let (file, line, occurrence) = (at.file.as_str(), at.line, at.occurrence);
    let symbol = Some(at.symbol.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            arg_err(format!(
                "`symbol` is required for `{op}`: give a substring of line {line} that names the symbol (positions are never columns)"
            ))
        })?;
    let (path, display, text) = st.read_file(file)?;
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

/// A positional call's target, resolved on the file and synced to its server.
pub(in crate::tools) struct Located {
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

pub(in crate::tools) async fn locate(
    st: &State,
    op: Operation,
    at: &At,
) -> Result<Located, LspError> {
    locate_with(st, op, at, true).await
}

/// [`locate`]; `wait`: wait (bounded) for the server to finish loading, else only
/// note whether it has.
pub(in crate::tools) async fn locate_with(
    st: &State,
    op: Operation,
    at: &At,
    wait: bool,
) -> Result<Located, LspError> {
    let t = target(st, op.name(), at, false)?;
    let srv = st.sup.server_for(&t.path).await?;
    srv.sync(&t.path, &t.text, false).await?;
    let ready = if wait {
        wait_ready_reporting(st, &srv).await
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
async fn wait_ready_reporting(st: &State, srv: &Server) -> bool {
    let timeout = st.sup.cfg.ready_timeout;
    if !agent_tier::progress_wanted() || srv.is_idle() || srv.stalled() {
        return srv.wait_ready(timeout).await;
    }
    let started = Instant::now();
    let deadline = started + crate::deadline::left(timeout);
    let root = match agent_tier::workspace::display_path(st.ws(), &srv.root) {
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
