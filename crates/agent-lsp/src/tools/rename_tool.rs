//! `lsp_rename`: planned from the disk, applied all-or-nothing, reported per file.

use super::by_name::address_fields;
use super::by_name::quoted;
use super::rename_check::Check;
use super::witnessed::{NoWitness, check_identifier, identifier_of, site_text};
use crate::error::LspError;
use crate::protocol::TextDocumentPositionParams;
use crate::protocol::{PrepareRename, Rename, RenameParams};
use crate::rename;
use crate::state::State;
use crate::text::{path_to_uri, units_of_byte};
use crate::tools::{At, Named};
use crate::tools::{RenameArgs, arg_err};
use agent_tier::ToolOutput;
use agent_tier::workspace::{apply_all, confine};
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod report;
use crate::tools::asking;
use crate::tools::by_name;
use crate::tools::move_file;
use crate::tools::rename_check;
use crate::tools::target;
use crate::tools::witnessed;
use report::{FileEdits, RenameReport, RenamedFile};

/// `lsp_rename`: a symbol renamed, or with `new_path` the file `path` moved.
pub async fn rename(st: &State, a: RenameArgs) -> Result<ToolOutput, LspError> {
    let dry_run = a.dry_run.unwrap_or(false);
    match (&a.new_path, a.symbol.clone(), a.new_name.clone()) {
        (Some(to), None, None) => {
            let from = a
                .path
                .as_deref()
                .ok_or_else(|| arg_err("`path` is required with `new_path`: the file to move"))?;
            if a.line.is_some() || a.occurrence.is_some() {
                return Err(arg_err(
                    "a move takes `path` and `new_path` only; leave out `line` and `occurrence`",
                ));
            }
            move_file::move_file(st, from, to, dry_run).await
        }
        (Some(_), _, _) => Err(arg_err(
            "`new_path` moves the file `path` and takes no `symbol` or `new_name`; to rename a symbol, leave out `new_path`",
        )),
        (None, None, _) => Err(arg_err(
            "`symbol` is required: the name to rename (or `path` and `new_path`, to move a file)",
        )),
        (None, Some(_), None) => Err(arg_err("`new_name` is required: the new identifier")),
        (None, Some(symbol), Some(new_name)) => {
            rename_symbol(st, a, symbol, new_name, dry_run).await
        }
    }
}

async fn rename_symbol(
    st: &State,
    a: RenameArgs,
    symbol: String,
    new_name: String,
    dry_run: bool,
) -> Result<ToolOutput, LspError> {
    if new_name.trim().is_empty() {
        return Err(arg_err("`new_name` is empty; give the new identifier"));
    }
    // A name alone is resolved to its one declaration; a write never acts on a guess.
    let (at, by) = match (a.line, &a.path) {
        (Some(line), Some(file)) => (
            At {
                file: file.clone(),
                line,
                symbol: symbol.clone(),
                occurrence: a.occurrence,
                exact: false,
            },
            None,
        ),
        (Some(_), None) => {
            return Err(arg_err(
                "`path` is required with `line`: a path relative to the workspace root (or leave out `line` to rename `symbol` by name)",
            ));
        }
        (None, _) if a.occurrence.is_some() => {
            return Err(arg_err(
                "`occurrence` picks among the matches on `line`; give `path` and `line` too, or leave out `occurrence` to rename `symbol` by name",
            ));
        }
        (None, file) => {
            let named = Named {
                file: file.clone(),
                symbol: symbol.trim().to_string(),
            };
            let new_name = quoted(&new_name);
            let next = |path: &str, line: u32, symbol: &str| {
                format!(
                    "{{{}, \"new_name\": {new_name}}}",
                    address_fields(path, line, symbol)
                )
            };
            let by = by_name::by_name(st, "lsp_rename", &named, true, &next).await?;
            (by.at.clone(), Some(by))
        }
    };
    let new_path = confine(st.ws(), "path", &at.file)?;
    check_identifier(&new_name, &new_path)?;
    let t = target::target(st, "lsp_rename", &at, true)?;
    let (srv, _ready) = asking::open(st, &t).await?;
    // The server plans from what it holds: every document it has open is brought up to the
    // disk first (a kernel cell, an editor or `git checkout` may have changed it).
    let mut synced = rename::resync(&srv, st.ws()).await?;
    let enc = srv.encoding();
    let pos = TextDocumentPositionParams::new(
        path_to_uri(&t.path),
        t.line0,
        units_of_byte(&t.line_text, t.byte, enc),
    );
    let at = format!("{}:{}", t.display, t.line0 + 1);
    if srv.caps().prepares_rename() {
        let (v, _) = asking::ask::<PrepareRename>(st, &srv, &pos).await?;
        if v.is_none() {
            return Err(arg_err(format!(
                "{} says `{}` at {at} cannot be renamed (prepareRename returned nothing); check that `symbol` names an identifier defined in the project",
                srv.spec.id, t.symbol
            )));
        }
    }
    let params = RenameParams {
        text_document: pos.text_document,
        position: pos.position,
        new_name: new_name.clone(),
    };
    let mut edit = asking::ask_edit::<Rename>(st, &srv, &params).await?;
    // A file the edit changes that the server read from disk by itself may be stale: open
    // it with its disk content and ask again, until the edit names only synced files.
    let mut absent = Vec::new();
    for round in 0..=3 {
        let missing: Vec<PathBuf> = rename::unsynced(st.ws(), &edit, &synced)?
            .into_iter()
            .filter(|p| !absent.contains(p))
            .collect();
        if missing.is_empty() {
            break;
        }
        if round == 3 {
            return Err(arg_err(format!(
                "{} kept naming files it had not been synced with ({}); nothing was written — try again",
                srv.spec.id,
                missing
                    .iter()
                    .map(|p| agent_tier::workspace::display_path(st.ws(), p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for p in missing {
            match rename::read_bytes(st.ws(), &p)? {
                Some(bytes) => {
                    srv.sync(&p, &String::from_utf8_lossy(&bytes), false)
                        .await?;
                    synced.insert(p, bytes);
                }
                None => absent.push(p),
            }
        }
        edit = asking::ask_edit::<Rename>(st, &srv, &params).await?;
    }
    if edit.is_empty() {
        return Err(arg_err(format!(
            "{} returned no edit for renaming `{}` at {at}; nothing was written",
            srv.spec.id, t.symbol
        )));
    }
    let mut plan = rename::plan_edit(st.ws(), &edit, enc, &synced)?;
    // The witness: every occurrence of the old name the plan leaves alone is put to the
    // server; a plan that misses a site of this declaration is asked for again after the
    // server settles, and never written while it is known to be partial.
    let witness = match identifier_of(&t.symbol) {
        None => Err(NoWitness::NotIdentifier(t.symbol.clone())),
        Some(name) => {
            let character = units_of_byte(&t.line_text, t.byte, enc);
            let decl = witnessed::declaration(&srv, &t.path, t.line0, character)
                .await
                .unwrap_or_default();
            let started = Instant::now();
            let deadline = started + st.sup.cfg.ready_timeout;
            let mut round = 0u32;
            loop {
                let w = witnessed::rename_coverage(st, &srv, name, &t.path, &decl, &plan, &synced)
                    .await;
                let missing = match &w {
                    Ok(w) if !w.missing.is_empty() => w.missing.clone(),
                    _ => break w,
                };
                if Instant::now() >= deadline || round >= 6 {
                    let state = if srv.is_idle() {
                        "reports no work in progress"
                    } else {
                        "is still indexing"
                    };
                    let shown: Vec<String> = missing
                        .iter()
                        .take(20)
                        .map(|s| site_text(st.ws(), s))
                        .collect();
                    return Err(arg_err(format!(
                        "nothing was written: {}'s rename of `{}` edits {} site(s) but leaves out {} site(s) whose definition is the renamed declaration, after asking {round} more time(s) over {} s (the server {state}): {}{} — try again when the server has finished indexing, or rename those sites by hand",
                        srv.spec.id,
                        t.symbol,
                        plan.sites.len(),
                        missing.len(),
                        started.elapsed().as_secs(),
                        shown.join(", "),
                        if missing.len() > 20 { ", …" } else { "" }
                    )));
                }
                round += 1;
                agent_tier::progress(format!(
                    "{}'s rename plan leaves out {} site(s) of `{name}`; waiting for it to settle, then asking again ({round})",
                    srv.spec.id,
                    missing.len()
                ));
                tokio::time::sleep(Duration::from_millis(400 * u64::from(round))).await;
                srv.wait_ready(deadline.saturating_duration_since(Instant::now()))
                    .await;
                edit = asking::ask_edit::<Rename>(st, &srv, &params).await?;
                for p in rename::unsynced(st.ws(), &edit, &synced)? {
                    if let Some(bytes) = rename::read_bytes(st.ws(), &p)? {
                        srv.sync(&p, &String::from_utf8_lossy(&bytes), false)
                            .await?;
                        synced.insert(p, bytes);
                    }
                }
                plan = rename::plan_edit(st.ws(), &edit, enc, &synced)?;
            }
        }
    };
    // A file the witness could not look at (a symlink leading outside the root, unreadable,
    // too large) may use the old name: renaming around it could leave it broken, and no
    // check could say so. Refused whole, naming them.
    if let Ok(w) = &witness
        && w.skipped > 0
    {
        let shown: Vec<String> = w
            .unread
            .iter()
            .map(|p| agent_tier::workspace::display_path(st.ws(), p))
            .collect();
        return Err(arg_err(format!(
            "nothing was written: {} file(s) of this language could not be looked at by the witness ({}{}), so whether they use `{}` is unknown and renaming the rest could leave them broken; a symlink leading outside the workspace is never read. Replace the link with the file, or rename by hand with `edit`",
            w.skipped,
            shown.join(", "),
            if w.skipped > shown.len() { ", …" } else { "" },
            t.symbol
        )));
    }
    if dry_run {
        // Checked as far as a plan can be before it is written: the witness above; the
        // server's references check needs the renamed files, so it is not run.
        let mut out = ToolOutput::dry_run("lsp_rename", st.ws(), &plan.changes);
        out.text.push_str(&format!(
            "\nIt would rename {} site(s) of `{}` to `{}`.",
            plan.sites.len(),
            t.symbol,
            new_name
        ));
        return Ok(out);
    }
    let applied = apply_all(st.ws(), &plan.changes)?;
    if let Some(w) = st.witness() {
        let touched: Vec<PathBuf> = plan.changes.iter().map(|c| c.path.clone()).collect();
        w.changed(&touched);
    }
    // Tell every running server what changed on disk.
    for s in st.sup.running() {
        for (p, now) in &plan.after {
            match now {
                Some(text) if s.is_open(p).await => {
                    let _ = s.sync(p, text, true).await;
                }
                None => s.close(p).await,
                _ => {}
            }
        }
    }
    // Check the written rename with the server's own references; undo it when they
    // contradict the edit.
    let before = synced
        .get(&t.path)
        .cloned()
        .unwrap_or_else(|| t.text.clone().into_bytes());
    let check = rename_check::check_rename(st, &srv, &t, &new_name, &plan, &before).await;
    let verified = match &check {
        Check::Failed(why) => {
            return Err(arg_err(
                match rename_check::roll_back(st, &plan, &applied).await {
                    Ok(()) => format!(
                        "rename `{}` to `{}` rolled back, every file is as it was: {why}. Check the `line` and `symbol`, or rename by hand with `edit`",
                        t.symbol, new_name
                    ),
                    Err(e) => format!(
                        "rename `{}` to `{}` failed its check ({why}) and could NOT be rolled back: {e}; the files listed there hold the renamed text",
                        t.symbol, new_name
                    ),
                },
            ));
        }
        Check::Verified {
            covered,
            unchecked,
            commentary,
        } => {
            let mut skipped = String::new();
            if *commentary > 0 {
                skipped.push_str(&format!(
                    "; {commentary} edit(s) in comments or strings were not checked (references do not list them)"
                ));
            }
            if *unchecked > 0 {
                skipped.push_str(&format!(
                    "; {unchecked} edit(s) without the new name in their text were not checked"
                ));
            }
            format!(
                "verified: {}'s references of `{}` reach all {covered} renamed occurrence(s) in code{skipped}",
                srv.spec.id, new_name
            )
        }
        Check::NotVerified(why) => format!("not verified: {why}"),
    };
    // `verified` only when the witness agrees too.
    let (verified, witness_ok) = match &witness {
        Ok(w) if w.agrees() => (verified, true),
        Ok(w) => (
            format!(
                "not verified: {} occurrence(s) of `{}` were neither renamed nor shown to be another symbol ({}); the server's check: {verified}",
                w.unconfirmed.len(),
                t.symbol,
                w.unconfirmed
                    .iter()
                    .take(5)
                    .map(|s| site_text(st.ws(), s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            false,
        ),
        Err(why) => (
            format!("not verified by a second witness ({why}); the server's own check: {verified}"),
            false,
        ),
    };
    let report = RenameReport {
        server: srv.spec.id.clone(),
        files: plan
            .per_file
            .iter()
            .map(|(path, edits)| FileEdits {
                path: path.clone(),
                edits: *edits,
            })
            .collect(),
        renamed_files: plan
            .renames
            .iter()
            .map(|(from, to)| RenamedFile {
                from: from.clone(),
                to: to.clone(),
            })
            .collect(),
        verified: matches!(check, Check::Verified { .. }) && witness_ok,
        check: verified,
        witness: witness.as_ref().ok().map(|w| w.report(st.ws())),
        resolved: by.map(|by| by.how),
        symbol: t.symbol.clone(),
        new_name: new_name.clone(),
    };
    Ok(ToolOutput::report(&report).with_file_changes(st.ws(), &plan.changes))
}
