//! `lsp_rename`, after the write: the server is asked for the references of the new name at the
//! renamed position, and every planned edit that carries the new name must be among them. A
//! rename that reached something else (an edit that misses the asked-about identifier, or edits
//! the server's own references do not confirm) is rolled back whole.

use crate::client::Server;
use crate::protocol::TextDocumentPositionParams;
use crate::protocol::{ReferenceParams, References};
use crate::rename::{Plan, Site};
use crate::state::State;
use crate::text::{Encoding, path_to_uri, units_of_byte};
use crate::tools::Target;
use crate::tools::asking;
use agent_tier::lines;
use agent_tier::workspace::confine;
use std::collections::HashSet;
use std::path::PathBuf;

/// What the check after a rename found.
pub(super) enum Check {
    /// The references of the new name reach `covered` edits; `unchecked` edits carry a text
    /// without the new name (an import rewritten around it, say) and were not checked;
    /// `commentary` edits lie in comments or strings, which servers rename (gopls renames doc
    /// comments) but references never list.
    Verified {
        covered: usize,
        unchecked: usize,
        commentary: usize,
    },
    /// The check could not be made or could not finish; the change stays and the reason is said.
    NotVerified(String),
    /// The server's own answer contradicts its edit: the change is rolled back.
    Failed(String),
}

/// The 0-based line (a line ends at `\n`, `\r\n` or a lone `\r`: [`agent_tier::lines`]) and
/// the column (in `enc` units) of byte `at`; `None` when the line before `at` is not UTF-8 (the
/// position cannot be given exactly).
pub(super) fn line_col(bytes: &[u8], at: usize, enc: Encoding) -> Option<(u32, u32)> {
    bytes.get(..at)?;
    let (line, start) = lines::Cursor::new(bytes).seek(at);
    let head = std::str::from_utf8(&bytes[start..at.min(lines::line_end(bytes, at))]).ok()?;
    Some((
        u32::try_from(line).ok()?,
        units_of_byte(head, head.len(), enc),
    ))
}

/// Whether byte `at` sits in a comment or a string literal, as far as its line shows: a comment
/// marker earlier on the line, a block comment's continuation, or a quote right before it.
fn in_comment_or_string(bytes: &[u8], at: usize) -> bool {
    let Some(before) = bytes.get(..at) else {
        return false;
    };
    let start = lines::line_start(bytes, at);
    let head = String::from_utf8_lossy(&before[start..]);
    let trimmed = head.trim_start();
    ["//", "#", "/*"].iter().any(|m| head.contains(m))
        || trimmed.starts_with('*')
        || head.ends_with(['"', '\'', '`'])
}

/// The byte offset where 0-based `line` starts (the end for a line past the last).
fn line_start(bytes: &[u8], line: u32) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match lines::next_terminator(bytes, start) {
            Some((at, len)) => start = at + len,
            None => return bytes.len(),
        }
    }
    start
}

/// Where the new name lies in the file's new bytes after `site`, as an LSP position.
fn new_name_at(plan: &Plan, site: &Site, new_name: &str, enc: Encoding) -> Option<(u32, u32)> {
    let idx = site.text.find(new_name)?;
    let bytes = plan
        .changes
        .iter()
        .find(|c| c.path == site.path)?
        .new
        .as_deref()?;
    line_col(bytes, site.at + idx, enc)
}

/// Check a written rename with the server (which already holds the new contents).
pub(super) async fn check_rename(
    st: &State,
    srv: &Server,
    t: &Target,
    new_name: &str,
    plan: &Plan,
    before: &[u8],
) -> Check {
    let offers = srv
        .caps()
        .references_provider
        .as_ref()
        .is_some_and(|c| c.on());
    if !offers {
        return Check::NotVerified(format!(
            "{} does not offer references to check the rename with",
            srv.spec.id
        ));
    }
    let enc = srv.encoding();
    let asked = line_start(before, t.line0) + t.byte;
    let Some(site) = plan
        .sites
        .iter()
        .find(|s| s.path == t.path && s.before.0 <= asked && asked <= s.before.1)
    else {
        return Check::Failed(format!(
            "{}'s edit does not change `{}` at {}:{} — the position that was asked about — so it renamed something else",
            srv.spec.id,
            t.symbol,
            t.display,
            t.line0 + 1
        ));
    };
    let Some((line, character)) = new_name_at(plan, site, new_name, enc) else {
        return Check::NotVerified(format!(
            "the edit at the renamed position writes `{}`, not the new name",
            site.text
        ));
    };
    let params = ReferenceParams::with_declaration(TextDocumentPositionParams::new(
        path_to_uri(&site.path),
        line,
        character,
    ));
    let (refs, partial) = match asking::ask_settled::<References>(st, srv, &params).await {
        Ok(answer) => answer,
        Err(e) => {
            return Check::NotVerified(format!("asking for the references failed: {e}"));
        }
    };
    let mut found: HashSet<(PathBuf, u32, u32)> = HashSet::new();
    for r in &refs.0 {
        let Some(p) = crate::text::uri_to_path(r.uri()) else {
            continue;
        };
        let Ok(p) = confine(st.ws(), "reference", &p.display().to_string()) else {
            continue;
        };
        let at = r.start();
        found.insert((p, at.line, at.character));
    }
    let (mut covered, mut unchecked, mut commentary) = (0, 0, 0);
    let mut missed = Vec::new();
    for s in &plan.sites {
        let name_at = s.text.find(new_name).map(|i| s.at + i);
        let after = plan
            .changes
            .iter()
            .find(|c| c.path == s.path)
            .and_then(|c| c.new.as_deref())
            .unwrap_or_default();
        match new_name_at(plan, s, new_name, enc) {
            Some((l, c)) if found.contains(&(s.path.clone(), l, c)) => covered += 1,
            Some(_) if name_at.is_some_and(|at| in_comment_or_string(after, at)) => commentary += 1,
            Some((l, _)) => missed.push(format!(
                "{}:{}",
                agent_tier::workspace::display_path(st.ws(), &s.path),
                l + 1
            )),
            None => unchecked += 1,
        }
    }
    if missed.is_empty() {
        return Check::Verified {
            covered,
            unchecked,
            commentary,
        };
    }
    let shown = missed
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = missed.len().saturating_sub(5);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let why = format!(
        "the references of `{new_name}` that {} gives after the write do not include {} of the {} edit(s): {shown}{more}",
        srv.spec.id,
        missed.len(),
        missed.len() + covered
    );
    if partial && !srv.is_idle() {
        // A server still at work may answer incompletely: say so rather than undo on a
        // guess. A server that reports no work in progress gets no such excuse.
        Check::NotVerified(format!(
            "{why} (the server was still indexing, so this may be incomplete; check those lines)"
        ))
    } else {
        Check::Failed(why)
    }
}

/// Undo a written rename: every file back to the content it was planned from, and every
/// running server told. Fails (saying which file) when something changed a file meanwhile.
pub(super) async fn roll_back(
    st: &State,
    plan: &Plan,
    applied: &agent_tier::workspace::Applied,
) -> Result<(), agent_tier::workspace::FsError> {
    agent_tier::workspace::undo_all(st.ws(), &plan.changes, applied)?;
    for s in st.sup.running() {
        for c in &plan.changes {
            match &c.expected {
                Some(bytes) if s.is_open(&c.path).await => {
                    let _ = s.sync(&c.path, &String::from_utf8_lossy(bytes), true).await;
                }
                None => s.close(&c.path).await,
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_bytes() {
        let text = "ab\nxé plus\n".as_bytes();
        assert_eq!(line_start(text, 0), 0);
        assert_eq!(line_start(text, 1), 3);
        assert_eq!(line_start(text, 5), text.len());
        let at = "ab\nxé ".len();
        assert_eq!(line_col(text, at, Encoding::Utf16), Some((1, 3)));
        assert_eq!(line_col(text, at, Encoding::Utf8), Some((1, 4)));
        assert_eq!(line_col(b"\xff plus", 2, Encoding::Utf8), None);
        // A lone `\r` ends a line too.
        let text = "ab\rxé plus\r\nz".as_bytes();
        assert_eq!(line_start(text, 1), 3);
        assert_eq!(line_start(text, 2), text.len() - 1);
        assert_eq!(line_col(text, at, Encoding::Utf16), Some((1, 3)));
        assert_eq!(line_col(text, text.len(), Encoding::Utf16), Some((2, 1)));
    }

    #[test]
    fn comments_and_strings_by_their_line() {
        let at = |text: &str, word: &str| (text.as_bytes().to_vec(), text.rfind(word).unwrap());
        for (text, word, yes) in [
            ("x = 1\n// plus builds it\n", "plus", true),
            ("x = 1  # plus\n", "plus", true),
            ("/**\n * plus builds\n */\n", "plus", true),
            ("s = \"plus\"\n", "plus", true),
            ("y = plus(1)  # plus\n", "plus(", false),
            ("int plus = 2;\n", "plus", false),
        ] {
            let (bytes, i) = at(text, word);
            assert_eq!(in_comment_or_string(&bytes, i), yes, "{text:?}");
        }
    }
}
