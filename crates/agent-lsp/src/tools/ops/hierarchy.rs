//! incoming_calls, outgoing_calls, supertypes, subtypes: one step of the call or type hierarchy
//! from the symbol. Callers are checked by the identifier witness like `references`: a call
//! whose definition is the asked function and that no caller accounts for is listed as left
//! out, and the answer is then partial.

use super::super::witnessed::{NoWitness, Seen, Site, Witnessed, identifier_of};
use crate::client::Server;
use crate::error::LspError;
use crate::protocol::{
    HierarchyItem, IncomingCalls, ItemParams, OutgoingCalls, Position, PrepareCallHierarchy,
    PrepareTypeHierarchy, Range, Subtypes, Supertypes,
};
use crate::render::{Renderer, symbol_kind};
use crate::state::State;
use crate::text::lines;
use crate::text::{byte_of_units, uri_to_path};
use crate::tools::asking;
use crate::tools::ops::answer::{self, Answer, Hierarchy, Step, not_offered};
use crate::tools::target;
use crate::tools::target::Located;
use crate::tools::witnessed;
use crate::tools::{At, Walk};
use std::path::PathBuf;

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// At most this many items one position prepares are walked.
const MAX_ITEMS: usize = 5;
/// At most this many steps are shown.
const MAX_SHOWN: usize = 50;

/// One step found, before it is shown: a caller's call, a callee, or a type.
struct Found {
    name: String,
    kind: String,
    path: PathBuf,
    at: Position,
    /// outgoing calls: the 0-based lines of the asked function that make the call.
    called_at: Vec<u32>,
}

/// Calls into the asked function, as ranges per file (for the witness).
type CallRanges = Vec<(PathBuf, Range)>;

pub(in crate::tools) async fn hierarchy(
    st: &State,
    walk: Walk,
    at: &At,
) -> Result<Answer<Hierarchy>, LspError> {
    let op = walk.op();
    let l = target::locate(st, op, at).await?;
    let (prepared, mut partial) = if walk.calls() {
        answer::offered::<PrepareCallHierarchy>(&l, op)?;
        asking::ask::<PrepareCallHierarchy>(st, &l.srv, &l.pos).await?
    } else {
        answer::offered::<PrepareTypeHierarchy>(&l, op)?;
        asking::ask::<PrepareTypeHierarchy>(st, &l.srv, &l.pos).await?
    };
    let items: Vec<HierarchyItem> = prepared.0.into_iter().take(MAX_ITEMS).collect();
    // A server may offer the hierarchy but not this step (clangd 19 has no outgoing calls).
    let unoffered = |e: LspError| match e {
        LspError::Rpc { code, .. } if code == METHOD_NOT_FOUND => not_offered(&l, op),
        e => e,
    };
    let (mut found, mut ranges) = step(st, &l.srv, walk, &items).await.map_err(unoffered)?;
    // Callers, checked by the witness; asked once more after the server settles when it
    // left calls out.
    let mut check = None;
    if walk == Walk::IncomingCalls && !items.is_empty() {
        let mut c = callers_witnessed(st, &l, &ranges).await;
        if let Ok(w) = &c
            && !w.left_out.is_empty()
            && !l.srv.is_idle()
        {
            l.srv.wait_ready(st.sup.cfg.ready_timeout).await;
            (found, ranges) = step(st, &l.srv, walk, &items).await?;
            c = callers_witnessed(st, &l, &ranges).await;
        }
        check = Some(c);
    }
    let (mut head, mut r) = answer::answer_head(st, &l, op, partial || !l.ready);
    let total = found.len();
    let steps: Vec<Step> = found
        .iter()
        .take(MAX_SHOWN)
        .map(|f| Step {
            name: f.name.clone(),
            kind: f.kind.clone(),
            loc: r.loc(&f.path, f.at.line, f.at.character),
            called_at: f.called_at.iter().map(|l| l + 1).collect(),
        })
        .collect();
    let items = items.iter().map(|i| item_text(&mut r, i)).collect();
    let mut body = Hierarchy {
        items,
        steps,
        total,
        left_out: Vec::new(),
        other_uses: 0,
        witness: None,
        witness_note: None,
    };
    match check {
        Some(Ok(c)) => {
            body.left_out = c
                .left_out
                .iter()
                .map(|s| r.loc(&s.path, s.line, s.character))
                .collect();
            body.other_uses = c.other_uses;
            body.witness = Some(c.w.report(st.ws()));
            // A caller the server left out makes the answer partial, whatever its state.
            partial = partial || !body.left_out.is_empty();
            head.partial = head.partial || partial;
        }
        Some(Err(why)) => body.witness_note = Some(format!("witness: not checked — {why}")),
        None => {}
    }
    Ok(answer::finish(head, body, &r))
}

/// One step from each item: the found steps, and (incoming calls) the call ranges.
async fn step(
    st: &State,
    srv: &Server,
    walk: Walk,
    items: &[HierarchyItem],
) -> Result<(Vec<Found>, CallRanges), LspError> {
    let mut found = Vec::new();
    let mut ranges = Vec::new();
    let file = |uri: &str| uri_to_path(uri);
    for item in items {
        let params = ItemParams { item: item.clone() };
        match walk {
            Walk::IncomingCalls => {
                let (calls, _) = asking::ask::<IncomingCalls>(st, srv, &params).await?;
                for c in calls.0 {
                    let Some(path) = file(&c.from.uri) else {
                        continue;
                    };
                    let sites = if c.from_ranges.is_empty() {
                        vec![c.from.selection_range]
                    } else {
                        c.from_ranges.clone()
                    };
                    for range in sites {
                        ranges.push((path.canonicalize().unwrap_or_else(|_| path.clone()), range));
                        found.push(Found {
                            name: c.from.name.clone(),
                            kind: symbol_kind(c.from.kind).to_string(),
                            path: path.clone(),
                            at: range.start,
                            called_at: Vec::new(),
                        });
                    }
                }
            }
            Walk::OutgoingCalls => {
                let (calls, _) = asking::ask::<OutgoingCalls>(st, srv, &params).await?;
                for c in calls.0 {
                    let Some(path) = file(&c.to.uri) else {
                        continue;
                    };
                    let mut called_at: Vec<u32> =
                        c.from_ranges.iter().map(|r| r.start.line).collect();
                    called_at.sort();
                    called_at.dedup();
                    found.push(Found {
                        name: c.to.name.clone(),
                        kind: symbol_kind(c.to.kind).to_string(),
                        path,
                        at: c.to.selection_range.start,
                        called_at,
                    });
                }
            }
            Walk::Supertypes | Walk::Subtypes => {
                let (types, _) = if walk == Walk::Supertypes {
                    asking::ask::<Supertypes>(st, srv, &params).await?
                } else {
                    asking::ask::<Subtypes>(st, srv, &params).await?
                };
                for t in types.0 {
                    let Some(path) = file(&t.uri) else { continue };
                    found.push(Found {
                        name: t.name.clone(),
                        kind: symbol_kind(t.kind).to_string(),
                        path,
                        at: t.selection_range.start,
                        called_at: Vec::new(),
                    });
                }
            }
        }
    }
    found.sort_by(|a, b| (&a.path, a.at).cmp(&(&b.path, b.at)));
    Ok((found, ranges))
}

/// The witness on callers: where the name occurs as an identifier outside every listed
/// call and outside the declaration, put to the server as `definition` questions; those
/// that reach the asked function and read as a call (the name followed by `(`) are calls
/// the server left out, the rest other uses (imports, a function passed as a value).
async fn callers_witnessed(
    st: &State,
    l: &Located,
    ranges: &CallRanges,
) -> Result<CallersChecked, NoWitness> {
    let name =
        identifier_of(&l.t.symbol).ok_or_else(|| NoWitness::NotIdentifier(l.t.symbol.clone()))?;
    let Seen {
        sites,
        files,
        skipped,
        unread,
    } = witnessed::sightings(st, &l.srv, &l.t.path, name).await?;
    let decl = witnessed::declaration(&l.srv, &l.t.path, l.t.line0, l.character)
        .await
        .unwrap_or_default();
    let mut w = Witnessed {
        occurrences: sites.len(),
        files,
        skipped,
        unread,
        ..Default::default()
    };
    let covered = |s: &Site| {
        let at = Position {
            line: s.line,
            character: s.character,
        };
        ranges
            .iter()
            .any(|(p, r)| *p == s.path && r.start <= at && at <= r.end)
    };
    let mut ask = Vec::new();
    for s in sites {
        if covered(&s) {
            w.confirmed += 1;
        } else if decl.iter().any(|(p, line)| *p == s.path && *line == s.line) {
            // The declaration itself: the answer's head shows it.
            w.confirmed += 1;
        } else {
            ask.push(s);
        }
    }
    witnessed::classify(st, &l.srv, &decl, ask, &mut w).await;
    let enc = l.srv.encoding();
    let mut left_out = Vec::new();
    let mut other_uses = 0;
    for s in std::mem::take(&mut w.missing) {
        let is_call = crate::text::read_text(st.ws(), &s.path)
            .ok()
            .and_then(|t| {
                let line = lines(&t).get(s.line as usize)?.to_string();
                let after = &line[byte_of_units(&line, s.character, enc)..];
                let rest =
                    after.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
                Some(rest.trim_start().starts_with('('))
            })
            .unwrap_or(false);
        if is_call {
            left_out.push(s);
        } else {
            other_uses += 1;
        }
    }
    w.missing = left_out.clone();
    Ok(CallersChecked {
        w,
        left_out,
        other_uses,
    })
}

/// What the witness said of the callers.
struct CallersChecked {
    w: Witnessed,
    /// Calls of the asked function that no caller lists.
    left_out: Vec<Site>,
    /// Uses of it that are not calls by their syntax.
    other_uses: usize,
}

/// A prepared item as shown: `kind name — path:line:col`.
fn item_text(r: &mut Renderer, i: &HierarchyItem) -> String {
    let at = i.selection_range.start;
    let shown = match uri_to_path(&i.uri) {
        Some(p) => {
            let loc = r.loc(&p, at.line, at.character);
            format!("{}:{}:{}", loc.path, loc.line, loc.column)
        }
        None => i.uri.clone(),
    };
    format!("{} {} — {shown}", symbol_kind(i.kind), i.name)
}
