//! `lsp_rename` with `new_path`: a file moved with the imports of it fixed. The server's
//! `workspace/willRenameFiles` edits and the move are written all or nothing; then the import
//! witness ([`crate::imports`]) reads the workspace by syntax for an import that still names
//! the old path, and a move it finds one for is rolled back. A server that cannot say what a
//! move needs is refused up front: a bare move would break the imports.

use crate::error::LspError;
use crate::protocol::{
    DocumentChange, FileOperation, FileRename, RenameFilesParams, TextDocumentEdit,
    TextDocumentIdentifier, WillRenameFiles, WorkspaceEdit,
};
use crate::rename;
use crate::state::State;
use crate::text::path_to_uri;
use crate::tools::arg_err;
use crate::tools::asking;
use crate::tools::rename_check;
use agent_tier::ToolOutput;
use agent_tier::workspace::{apply_all, confine, confine_existing};

/// Move `from` to `to` (both relative to the root) with the server's import edits.
pub(super) async fn move_file(
    st: &State,
    from: &str,
    to: &str,
    dry_run: bool,
) -> Result<ToolOutput, LspError> {
    let old = confine_existing(st.ws(), "path", from)?;
    if old.is_dir() {
        return Err(arg_err(format!(
            "`path` `{from}` is a folder; `new_path` moves one file: move its files one by one"
        )));
    }
    let new = confine(st.ws(), "new_path", to)?;
    if new.symlink_metadata().is_ok() {
        return Err(arg_err(format!(
            "`new_path` `{to}` already exists; a move never overwrites a file: choose another path, or delete it first"
        )));
    }
    let text = crate::text::read_text(st.ws(), &old).map_err(|e| LspError::Read {
        path: from.to_string(),
        source: e,
    })?;
    let srv = st.sup.server_for(&old).await?;
    if !srv.supports::<WillRenameFiles>() {
        return Err(arg_err(format!(
            "{} cannot say which imports a move of `{from}` needs (it does not offer `workspace/willRenameFiles`), and a bare move would break them; nothing was moved. Move it with apply_patch (`*** Update File: {from}` then `*** Move to: {to}`) and fix its imports by hand (`lsp references` on its names lists the users)",
            srv.spec.id
        )));
    }
    // The server plans from its project: the moved file open, the rest brought up to the
    // disk, loading finished (bounded).
    srv.sync(&old, &text, false).await?;
    srv.wait_ready(st.sup.cfg.ready_timeout).await;
    let mut synced = rename::resync(&srv, st.ws()).await?;
    let params = RenameFilesParams {
        files: vec![FileRename {
            old_uri: path_to_uri(&old),
            new_uri: path_to_uri(&new),
        }],
    };
    let mut edit = asking::ask_edit::<WillRenameFiles>(st, &srv, &params).await?;
    // Files the edit names that the server read by itself: synced and asked again.
    for _ in 0..3 {
        let missing = rename::unsynced(st.ws(), &edit, &synced)?;
        if missing.is_empty() {
            break;
        }
        for p in missing {
            if let Some(bytes) = rename::read_bytes(st.ws(), &p)? {
                srv.sync(&p, &String::from_utf8_lossy(&bytes), false)
                    .await?;
                synced.insert(p, bytes);
            }
        }
        edit = asking::ask_edit::<WillRenameFiles>(st, &srv, &params).await?;
    }
    let plan = rename::plan_edit(
        st.ws(),
        &with_move(edit, &params.files[0]),
        srv.encoding(),
        &synced,
    )?;
    let edited: Vec<(String, usize)> = plan
        .per_file
        .iter()
        .filter(|(p, _)| p != from)
        .cloned()
        .collect();
    let what = format!(
        "`{from}` to `{to}` ({}): {} import edit(s) in {} other file(s){}",
        srv.spec.id,
        edited.iter().map(|(_, n)| n).sum::<usize>(),
        edited.len(),
        if edited.is_empty() {
            String::new()
        } else {
            format!(
                " — {}",
                edited
                    .iter()
                    .map(|(p, n)| format!("{p} ({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if dry_run {
        let mut out = ToolOutput::dry_run("lsp_rename", st.ws(), &plan.changes);
        out.text.push_str(&format!("\nIt would move {what}."));
        return Ok(out);
    }
    let applied = apply_all(st.ws(), &plan.changes)?;
    if let Some(w) = st.witness() {
        w.changed(
            &plan
                .changes
                .iter()
                .map(|c| c.path.clone())
                .collect::<Vec<_>>(),
        );
    }
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
    let ws = st.ws().to_path_buf();
    let old_path = old.clone();
    let left = tokio::task::spawn_blocking(move || crate::imports::left_after_move(&ws, &old_path))
        .await
        .unwrap_or(None);
    let check = match left {
        Some(l) if !l.sites.is_empty() => {
            let why = format!(
                "{} import(s) still name `{from}` after {}'s edits ({} file(s) read for {}):\n{}\n",
                l.sites.len(),
                srv.spec.id,
                l.files,
                l.looked_for,
                l.sites
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            return Err(arg_err(
                match rename_check::roll_back(st, &plan, &applied).await {
                    Ok(()) => format!(
                        "moved back, every file is as it was: {why}Fix those imports by hand with `edit`, or move the file with apply_patch and fix them together"
                    ),
                    Err(e) => format!(
                        "the move failed its check ({why}) and could NOT be rolled back: {e}"
                    ),
                },
            ));
        }
        Some(l) => format!(
            "checked: no import names `{from}` any more ({} file(s) read for {})",
            l.files, l.looked_for
        ),
        None => format!(
            "not checked: no import witness reads `.{}` files; the imports are as {} edited them",
            old.extension().and_then(|e| e.to_str()).unwrap_or(""),
            srv.spec.id
        ),
    };
    let out = ToolOutput::text(format!("moved {what}\n{check}"))
        .with_structured(serde_json::json!({
            "moved": {"from": from, "to": to},
            "server": srv.spec.id,
            "files": edited.iter().map(|(p, n)| serde_json::json!({"path": p, "edits": n})).collect::<Vec<_>>(),
            "check": check,
        }))
        .with_file_changes(st.ws(), &plan.changes);
    Ok(out)
}

/// The server's edit, then the move itself, as one list of document changes.
fn with_move(edit: WorkspaceEdit, moved: &FileRename) -> WorkspaceEdit {
    let mut steps: Vec<DocumentChange> = match (edit.document_changes, edit.changes) {
        (Some(steps), _) => steps,
        (None, Some(changes)) => changes
            .into_iter()
            .map(|(uri, edits)| {
                DocumentChange::Edit(TextDocumentEdit {
                    text_document: TextDocumentIdentifier { uri },
                    edits,
                })
            })
            .collect(),
        (None, None) => Vec::new(),
    };
    steps.push(DocumentChange::File(FileOperation::Rename {
        old_uri: moved.old_uri.clone(),
        new_uri: moved.new_uri.clone(),
        options: None,
    }));
    WorkspaceEdit {
        changes: None,
        document_changes: Some(steps),
    }
}
