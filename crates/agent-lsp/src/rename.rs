//! `lsp_rename`'s plan: the server's `WorkspaceEdit` turned into all-or-nothing file changes.
//!
//! - The server must compute its edit from what is on disk: every document it has open is
//!   re-synced from disk first ([`resync`]), and a file the edit touches that it did not have open
//!   is opened with its disk content and the rename asked again ([`unsynced`]), so an edit is
//!   never planned from a stale view (a kernel cell, an editor or `git checkout` changed a file).
//! - Each file's change is computed against the exact bytes the server was given, which are also
//!   the change's expected content: if the file changes again before the write, nothing is
//!   written (`workspace::apply_all`).
//! - Edits apply to bytes: whatever lies outside the edited ranges (a Latin-1 byte, a BOM, CRLF)
//!   is kept exactly. Positions are converted on the edited line only; a position or a range that
//!   falls on bytes that are not UTF-8 refuses the whole rename rather than guess.

use crate::client::Server;
use crate::error::LspError;
use crate::protocol::{DocumentChange, FileOperation, TextEdit, WorkspaceEdit};
use crate::text::{Encoding, byte_of_units, units_of_byte, uri_to_path};
use agent_tier::lines;
use agent_tier::workspace::{FileChange, confine, display_path, read_regular};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The largest file a rename reads (a source file; anything larger is refused).
const MAX_FILE: u64 = 64 << 20;

/// Files an edit changes, computed in memory before anything is written.
pub struct Plan {
    pub changes: Vec<FileChange>,
    /// (display path, number of text edits) in order of first touch.
    pub per_file: Vec<(String, usize)>,
    pub renames: Vec<(String, String)>,
    /// (path, new text or None when deleted) after the change.
    pub after: Vec<(PathBuf, Option<String>)>,
    /// Where each text edit landed, for checking the result with the server afterwards.
    pub sites: Vec<Site>,
}

/// One planned text edit: the bytes it replaced in the content the server was given, and where
/// its new text lies in the file's new content.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: PathBuf,
    /// Byte range replaced, in the content before the rename.
    pub before: (usize, usize),
    /// Byte offset of the inserted text in the content after the rename.
    pub at: usize,
    pub text: String,
}

fn arg_err(s: impl Into<String>) -> LspError {
    LspError::Arg(s.into())
}

/// The bytes of `path`, `None` when it does not exist; a FIFO, device or over-large file is an
/// error, never a wait.
pub fn read_bytes(ws: &Path, path: &Path) -> Result<Option<Vec<u8>>, LspError> {
    match read_regular(ws, path, MAX_FILE + 1) {
        Ok(r) if r.bytes.len() as u64 > MAX_FILE => Err(arg_err(format!(
            "`{}` is larger than {} MiB; nothing was written",
            display_path(ws, path),
            MAX_FILE >> 20
        ))),
        Ok(r) => Ok(Some(r.bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LspError::Read {
            path: display_path(ws, path),
            source: e,
        }),
    }
}

/// Bring every document `srv` has open up to its content on disk (didChange when it differs,
/// didClose when it is gone). Returns the bytes each open document now has in the server.
pub async fn resync(srv: &Server, ws: &Path) -> Result<HashMap<PathBuf, Vec<u8>>, LspError> {
    let mut synced = HashMap::new();
    for p in srv.open_paths().await {
        match read_bytes(ws, &p)? {
            Some(bytes) => {
                srv.sync(&p, &String::from_utf8_lossy(&bytes), false)
                    .await?;
                synced.insert(p, bytes);
            }
            None => srv.close(&p).await,
        }
    }
    Ok(synced)
}

/// The files whose text `edit` changes that the server was not synced with (confined: a file out
/// of the root refuses the rename).
pub fn unsynced(
    ws: &Path,
    edit: &WorkspaceEdit,
    synced: &HashMap<PathBuf, Vec<u8>>,
) -> Result<Vec<PathBuf>, LspError> {
    let mut uris: Vec<&str> = Vec::new();
    if let Some(ops) = &edit.document_changes {
        uris.extend(ops.iter().filter_map(|op| match op {
            DocumentChange::Edit(e) => Some(e.text_document.uri.as_str()),
            DocumentChange::File(_) => None,
        }));
    } else if let Some(changes) = &edit.changes {
        uris.extend(changes.iter().map(|(uri, _)| uri.as_str()));
    }
    let mut out = Vec::new();
    for uri in uris {
        let p = to_path(ws, uri)?;
        if !synced.contains_key(&p) && !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

fn to_path(ws: &Path, uri: &str) -> Result<PathBuf, LspError> {
    let p = uri_to_path(uri).ok_or_else(|| {
        arg_err(format!(
            "the server's edit names `{uri}`, which is not a file; nothing was written"
        ))
    })?;
    confine(ws, "a file the rename edits", &p.display().to_string()).map_err(LspError::from)
}

/// The byte offset in `bytes` of an LSP position (0-based line — a line ends at `\n`, `\r\n`
/// or a lone `\r`, [`agent_tier::lines`] — and column in `enc` units). The column is converted
/// on that line only; a line past the end clamps to the end, a column past the line to its end.
/// A column that falls in or after bytes of the line that are not UTF-8 is refused (`None`).
fn byte_offset(bytes: &[u8], line: u32, character: u32, enc: Encoding) -> Option<usize> {
    let mut start = 0usize;
    for _ in 0..line {
        match lines::next_terminator(bytes, start) {
            Some((at, len)) => start = at + len,
            None => return Some(bytes.len()),
        }
    }
    let end = lines::next_terminator(bytes, start).map_or(bytes.len(), |(at, _)| at);
    let line_bytes = &bytes[start..end];
    match std::str::from_utf8(line_bytes) {
        Ok(s) => Some(start + byte_of_units(s, character, enc)),
        Err(e) => {
            // Only the valid prefix can be counted in; a column beyond it is a guess.
            let valid = std::str::from_utf8(&line_bytes[..e.valid_up_to()]).ok()?;
            (character <= units_of_byte(valid, valid.len(), enc))
                .then(|| start + byte_of_units(valid, character, enc))
        }
    }
}

/// Per applied edit: the byte range it replaced, where its new text starts, and that text.
type Landed = Vec<((usize, usize), usize, String)>;

/// Apply `edits` (LSP `TextEdit`s) to `bytes`; also returns, per edit in file order, the byte
/// range it replaced and where its new text starts in the result.
fn apply_text_edits(
    bytes: &[u8],
    edits: &[TextEdit],
    enc: Encoding,
    shown: &str,
) -> Result<(Vec<u8>, Landed), LspError> {
    let not_utf8 = |line: u32| {
        arg_err(format!(
            "the rename edits `{shown}` at line {} where the file has bytes that are not UTF-8, so the server's positions cannot be placed exactly; nothing was written (convert the file to UTF-8, or rename there by hand)",
            line + 1
        ))
    };
    let mut spans: Vec<(usize, usize, usize, &str)> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let (sl, sc) = (e.range.start.line, e.range.start.character);
        let (el, ec) = (e.range.end.line, e.range.end.character);
        let s = byte_offset(bytes, sl, sc, enc).ok_or_else(|| not_utf8(sl))?;
        let en = byte_offset(bytes, el, ec, enc)
            .ok_or_else(|| not_utf8(el))?
            .max(s);
        if std::str::from_utf8(&bytes[s..en]).is_err() {
            return Err(not_utf8(sl));
        }
        spans.push((s, en, i, e.new_text.as_str()));
    }
    // Apply from the end so earlier offsets stay valid; equal starts keep their order.
    spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.2.cmp(&a.2)));
    let mut out = bytes.to_vec();
    let mut limit = usize::MAX;
    let mut landed = Vec::with_capacity(spans.len());
    for (s, e, _, new) in spans {
        if e > limit {
            return Err(arg_err(format!(
                "the server's edits for `{shown}` overlap; nothing was written"
            )));
        }
        out.splice(s..e, new.bytes());
        limit = s;
        landed.push(((s, e), new));
    }
    // Walking back up in file order, each edit's new text starts where it was, moved by what the
    // edits before it added or removed.
    let mut shift: isize = 0;
    let mut sites = Vec::with_capacity(landed.len());
    for ((s, e), new) in landed.into_iter().rev() {
        sites.push(((s, e), s.saturating_add_signed(shift), new.to_string()));
        shift += new.len() as isize - (e - s) as isize;
    }
    Ok((out, sites))
}

/// Plan `edit`. A file in `synced` is edited from (and expected to still hold) the bytes the
/// server was given; any other file is read now.
pub fn plan_edit(
    ws: &Path,
    edit: &WorkspaceEdit,
    enc: Encoding,
    synced: &HashMap<PathBuf, Vec<u8>>,
) -> Result<Plan, LspError> {
    let mut orig: HashMap<PathBuf, Option<Vec<u8>>> = HashMap::new();
    let mut cur: HashMap<PathBuf, Option<Vec<u8>>> = HashMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    let mut counts: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let mut renames = Vec::new();
    let mut sites: Vec<Site> = Vec::new();
    let mut touch = |p: &PathBuf,
                     orig: &mut HashMap<PathBuf, Option<Vec<u8>>>,
                     cur: &mut HashMap<PathBuf, Option<Vec<u8>>>|
     -> Result<(), LspError> {
        if !orig.contains_key(p) {
            let bytes = match synced.get(p) {
                Some(b) => Some(b.clone()),
                None => read_bytes(ws, p)?,
            };
            cur.insert(p.clone(), bytes.clone());
            orig.insert(p.clone(), bytes);
            order.push(p.clone());
        }
        Ok(())
    };
    let text_edits = |p: &PathBuf,
                      edits: &[TextEdit],
                      cur: &mut HashMap<PathBuf, Option<Vec<u8>>>,
                      counts: &mut BTreeMap<PathBuf, usize>,
                      sites: &mut Vec<Site>|
     -> Result<(), LspError> {
        let shown = display_path(ws, p);
        let Some(Some(bytes)) = cur.get(p) else {
            return Err(arg_err(format!(
                "the server's edit changes `{shown}`, which does not exist; nothing was written"
            )));
        };
        let (new, landed) = apply_text_edits(bytes, edits, enc, &shown)?;
        // A second batch for the same file moves the first one's text: only the last batch's
        // sites are kept (the check then covers fewer edits, and says how many).
        sites.retain(|s| &s.path != p);
        sites.extend(landed.into_iter().map(|(before, at, text)| Site {
            path: p.clone(),
            before,
            at,
            text,
        }));
        cur.insert(p.clone(), Some(new));
        *counts.entry(p.clone()).or_default() += edits.len();
        Ok(())
    };
    if let Some(ops) = &edit.document_changes {
        for op in ops {
            match op {
                DocumentChange::File(f @ FileOperation::Create { uri, .. }) => {
                    let p = to_path(ws, uri)?;
                    touch(&p, &mut orig, &mut cur)?;
                    let exists = matches!(cur.get(&p), Some(Some(_)));
                    if !exists || f.overwrites() {
                        cur.insert(p.clone(), Some(Vec::new()));
                    }
                }
                DocumentChange::File(
                    f @ FileOperation::Rename {
                        old_uri, new_uri, ..
                    },
                ) => {
                    let old = to_path(ws, old_uri)?;
                    let new = to_path(ws, new_uri)?;
                    touch(&old, &mut orig, &mut cur)?;
                    touch(&new, &mut orig, &mut cur)?;
                    if matches!(cur.get(&new), Some(Some(_))) && !f.overwrites() {
                        return Err(arg_err(format!(
                            "the server's edit renames a file onto existing `{}`; nothing was written",
                            display_path(ws, &new)
                        )));
                    }
                    let content = cur.get(&old).cloned().flatten();
                    for s in sites.iter_mut().filter(|s| s.path == old) {
                        s.path = new.clone();
                    }
                    cur.insert(new.clone(), content);
                    cur.insert(old.clone(), None);
                    renames.push((display_path(ws, &old), display_path(ws, &new)));
                }
                DocumentChange::File(FileOperation::Delete { uri, .. }) => {
                    let p = to_path(ws, uri)?;
                    touch(&p, &mut orig, &mut cur)?;
                    sites.retain(|s| s.path != p);
                    cur.insert(p, None);
                }
                DocumentChange::Edit(e) => {
                    let p = to_path(ws, &e.text_document.uri)?;
                    touch(&p, &mut orig, &mut cur)?;
                    text_edits(&p, &e.edits, &mut cur, &mut counts, &mut sites)?;
                }
            }
        }
    } else if let Some(changes) = &edit.changes {
        for (u, edits) in changes {
            let p = to_path(ws, u)?;
            touch(&p, &mut orig, &mut cur)?;
            text_edits(&p, edits, &mut cur, &mut counts, &mut sites)?;
        }
    }
    let mut changes = Vec::new();
    let mut after = Vec::new();
    for p in &order {
        let before = orig.get(p).cloned().flatten();
        let now = cur.get(p).cloned().flatten();
        if before != now {
            after.push((
                p.clone(),
                now.as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned()),
            ));
            changes.push(FileChange {
                path: p.clone(),
                expected: before,
                new: now,
            });
        }
    }
    let per_file = counts
        .into_iter()
        .map(|(p, n)| (display_path(ws, &p), n))
        .collect();
    Ok(Plan {
        changes,
        per_file,
        renames,
        after,
        sites,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Position, Range, TextDocumentEdit, TextDocumentIdentifier};
    use crate::text::path_to_uri;
    use agent_tier::workspace::apply_all;

    fn uri(p: &Path) -> String {
        path_to_uri(p)
    }

    /// Replace (line, character) `from` to `to` with `text`.
    fn text_edit(from: (u32, u32), to: (u32, u32), text: &str) -> TextEdit {
        let at = |(line, character)| Position { line, character };
        TextEdit {
            range: Range {
                start: at(from),
                end: at(to),
            },
            new_text: text.to_string(),
        }
    }

    /// An edit in the `changes` form.
    fn changes(files: Vec<(String, Vec<TextEdit>)>) -> WorkspaceEdit {
        WorkspaceEdit {
            changes: Some(files),
            document_changes: None,
        }
    }

    fn plan(ws: &Path, edit: &WorkspaceEdit) -> Result<Plan, LspError> {
        plan_edit(ws, edit, Encoding::Utf16, &HashMap::new())
    }

    #[test]
    fn plan_applies_changes_document_changes_and_file_ops() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let a = ws.join("a.py");
        let b = ws.join("b.py");
        std::fs::write(&a, "é = 1\nprint(é, é)\n").unwrap();
        std::fs::write(&b, "x = 1\n").unwrap();
        // `changes`, UTF-16 columns after a non-ASCII char; two edits on one line.
        let edit = changes(vec![(
            uri(&a),
            vec![
                text_edit((1, 6), (1, 7), "ü"),
                text_edit((1, 9), (1, 10), "ü"),
            ],
        )]);
        let p = plan(&ws, &edit).unwrap();
        assert_eq!(p.per_file, vec![("a.py".to_string(), 2)]);
        // Each edit's new text is found where the plan says it landed.
        let after = p.changes[0].new.clone().unwrap();
        assert_eq!(p.sites.len(), 2);
        for site in &p.sites {
            assert_eq!(&after[site.at..site.at + site.text.len()], "ü".as_bytes());
        }
        assert!(p.sites[0].at < p.sites[1].at);
        assert_eq!(
            p.sites[1].before,
            (17, 19),
            "the second `é` in the old bytes"
        );
        apply_all(&ws, &p.changes).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "é = 1\nprint(ü, ü)\n");

        // `documentChanges`: an edit, a file rename, a create and a delete, all or nothing.
        let c = ws.join("sub/c.py");
        let edit = WorkspaceEdit {
            changes: None,
            document_changes: Some(vec![
                DocumentChange::Edit(TextDocumentEdit {
                    text_document: TextDocumentIdentifier { uri: uri(&b) },
                    edits: vec![text_edit((0, 0), (0, 1), "y")],
                }),
                DocumentChange::File(FileOperation::Rename {
                    old_uri: uri(&b),
                    new_uri: uri(&ws.join("b2.py")),
                    options: None,
                }),
                DocumentChange::File(FileOperation::Create {
                    uri: uri(&c),
                    options: None,
                }),
                DocumentChange::File(FileOperation::Delete {
                    uri: uri(&a),
                    options: None,
                }),
            ]),
        };
        let p = plan(&ws, &edit).unwrap();
        assert_eq!(p.renames, vec![("b.py".to_string(), "b2.py".to_string())]);
        apply_all(&ws, &p.changes).unwrap();
        assert!(!a.exists() && !b.exists());
        assert_eq!(
            std::fs::read_to_string(ws.join("b2.py")).unwrap(),
            "y = 1\n"
        );
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "");

        // An edit outside the workspace is refused before anything is written.
        let edit = changes(vec![("file:///etc/passwd".to_string(), Vec::new())]);
        let err = plan(&ws, &edit).err().unwrap().to_string();
        assert!(err.contains("outside the workspace root"), "{err}");
    }

    #[test]
    fn bytes_outside_the_edits_are_kept_and_edits_on_non_utf8_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let a = ws.join("a.py");
        // Latin-1 `é` on line 0, a BOM-less CRLF line, `old` after a Latin-1 byte on line 2.
        let bytes = b"# caf\xe9\r\nold = 1 # caf\xe9\r\nx = '\xe9'; old\r\n".to_vec();
        std::fs::write(&a, &bytes).unwrap();
        let edit = changes(vec![(uri(&a), vec![text_edit((1, 0), (1, 3), "new")])]);
        let p = plan(&ws, &edit).unwrap();
        apply_all(&ws, &p.changes).unwrap();
        assert_eq!(
            std::fs::read(&a).unwrap(),
            b"# caf\xe9\r\nnew = 1 # caf\xe9\r\nx = '\xe9'; old\r\n"
        );
        // After the Latin-1 byte on its line: the column cannot be placed; nothing is planned.
        let edit = changes(vec![(
            uri(&a),
            vec![
                text_edit((1, 0), (1, 3), "x"),
                text_edit((2, 9), (2, 12), "new"),
            ],
        )]);
        let err = plan(&ws, &edit).err().unwrap().to_string();
        assert!(
            err.contains("at line 3 where the file has bytes that are not UTF-8"),
            "{err}"
        );
        // A range over the invalid byte itself.
        let edit = changes(vec![(uri(&a), vec![text_edit((0, 0), (1, 0), "")])]);
        assert!(plan(&ws, &edit).is_err());
    }

    #[test]
    fn offsets() {
        let t = "ab\r\ncdé\nx".as_bytes();
        assert_eq!(byte_offset(t, 1, 2, Encoding::Utf16), Some(6));
        assert_eq!(byte_offset(t, 1, 99, Encoding::Utf16), Some(8));
        assert_eq!(byte_offset(t, 5, 0, Encoding::Utf16), Some(t.len()));
        assert_eq!(byte_offset(b"ab\xe9cd", 0, 2, Encoding::Utf16), Some(2));
        assert_eq!(byte_offset(b"ab\xe9cd", 0, 3, Encoding::Utf16), None);
        // A lone `\r` ends a line too.
        let t = "ab\rcd\r\nx\ry".as_bytes();
        assert_eq!(byte_offset(t, 1, 1, Encoding::Utf16), Some(4));
        assert_eq!(byte_offset(t, 1, 9, Encoding::Utf16), Some(5));
        assert_eq!(byte_offset(t, 3, 1, Encoding::Utf16), Some(10));
    }

    #[test]
    fn the_synced_bytes_are_the_expectation() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let a = ws.join("a.py");
        std::fs::write(&a, "old = 1\n").unwrap();
        let synced: HashMap<PathBuf, Vec<u8>> = [(a.clone(), b"old = 1\n".to_vec())].into();
        let edit = changes(vec![(uri(&a), vec![text_edit((0, 0), (0, 3), "new")])]);
        let p = plan_edit(&ws, &edit, Encoding::Utf16, &synced).unwrap();
        // The file changed after the server was synced: nothing is written.
        std::fs::write(&a, "# moved\nold = 1\n").unwrap();
        assert!(apply_all(&ws, &p.changes).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "# moved\nold = 1\n");
    }
}
