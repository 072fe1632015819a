//! Diagnostics for changes made outside our write tools: a client's own edit tool (served with
//! `--without files`, the model edits through it and our write wrapper never sees the change),
//! a kernel cell, a person.
//!
//! After every call, whatever the tool, each document a running server has open is compared
//! with the file on disk (by size and modification time first, then by content). A file whose
//! content is no longer what the server last had — and is not what our own tools last wrote
//! there ([`agent_tier::workspace::is_own_write`]) — was changed outside: it goes through the
//! same check as a write ([`after_write`](crate::on_write::after_write), with the server's last
//! text as the previous content: the same ledger, baseline and scope rules), and the call's
//! answer carries the report, naming the files. A document synced by the call itself (an `lsp` call on the changed
//! file) counts from the text the server had before that sync.
//!
//! What it does not see: a file no server had open (there is no earlier content to compare
//! with; the model's next `lsp` call on it opens it), and a change that a call of our own write
//! tools overwrote before any call looked.

use crate::on_write::WriteReport;
use crate::state::State;
use agent_tier::outside::{Before, ChangeChecker};
use agent_tier::workspace::{confine, forget_own_write, is_own_write};
use agent_tier::{BoxFuture, CallContext, RoomId, ToolOutput, Wrapper};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// Size and modification time of a file, as last seen holding the text its server had.
type Fingerprint = (u64, SystemTime);

/// Appends, to every call's answer, the problems that changes made outside our write tools
/// introduced since the previous call.
pub struct OutsideEdits {
    state: Arc<State>,
    /// Files seen on disk with the text their server had: not read again until they change.
    same: Mutex<HashMap<PathBuf, Fingerprint>>,
}

impl OutsideEdits {
    /// The wrapper for the language-server family's state.
    pub fn new(state: Arc<State>) -> OutsideEdits {
        OutsideEdits {
            state,
            same: Mutex::new(HashMap::new()),
        }
    }

    fn fingerprint(path: &Path) -> Option<Fingerprint> {
        let m = std::fs::symlink_metadata(path).ok()?;
        Some((m.len(), m.modified().ok()?))
    }

    /// Whether `path` on disk differs from `had` and was not written by our own tools.
    fn changed_outside(&self, path: &Path, had: &str) -> bool {
        let print = Self::fingerprint(path);
        if print.is_some() && self.same.lock().get(path) == print.as_ref() {
            return false;
        }
        let Ok(now) = crate::text::read_text(self.state.ws(), path) else {
            // Gone or unreadable: nothing to check it against.
            return false;
        };
        if now == had {
            if let Some(p) = print {
                self.same.lock().insert(path.to_path_buf(), p);
            }
            return false;
        }
        self.same.lock().remove(path);
        if is_own_write(path, now.as_bytes()) {
            // Our own write: its call's write wrapper reports on it.
            return false;
        }
        forget_own_write(path);
        true
    }

    /// The files changed outside our write tools since the last look, but `except` (the call's
    /// own changed files, relative): each with the text its server had before.
    async fn changes(&self, except: &HashSet<PathBuf>) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        for srv in self.state.sup.running() {
            for (path, had) in srv
                .drifted(|p, had| !except.contains(p) && self.changed_outside(p, had))
                .await
            {
                out.entry(path).or_insert(had);
            }
        }
        out
    }
}

/// Check `changes` (absolute path → what it held before; `None`: it did not exist) like a write
/// of ours, for `room`: the report, naming them as changed outside. The servers are left
/// holding the new contents, and the next look does not count this sync as a change.
async fn check(
    state: &State,
    changes: Vec<(PathBuf, Option<Vec<u8>>)>,
    room: &RoomId,
) -> Option<WriteReport> {
    let root = state.ws();
    let mut files = Vec::new();
    let mut previous = BTreeMap::new();
    let mut paths = Vec::new();
    for (path, had) in changes {
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().into_owned();
        if let Some(had) = had {
            previous.insert(rel.clone(), had);
        }
        files.push(rel);
        paths.push(path);
    }
    if files.is_empty() {
        return None;
    }
    let mut report = crate::on_write::after_write(
        state,
        &files,
        &previous,
        crate::on_write::Change::Written,
        room,
    )
    .await;
    // The check synced the changed files (their old text for the baseline, then the new): that
    // is not a change for the next look.
    for srv in state.sup.running() {
        srv.settled(&paths);
    }
    report.outside = files;
    tracing::info!(target: "agent_lsp", files = ?report.outside, new = report.new.len(), "changes made outside the write tools");
    Some(report)
}

impl Wrapper for OutsideEdits {
    fn wraps(&self, _output: &ToolOutput) -> bool {
        true
    }

    fn after<'a>(
        &'a self,
        mut output: ToolOutput,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let root = self.state.ws();
            let except: HashSet<PathBuf> =
                output.changed_files.iter().map(|f| root.join(f)).collect();
            let changes = self.changes(&except).await;
            if changes.is_empty() {
                return output;
            }
            let changes = changes
                .into_iter()
                .map(|(p, had)| (p, Some(had.into_bytes())))
                .collect();
            let Some(report) = check(&self.state, changes, &cx.room()).await else {
                return output;
            };
            let part = ToolOutput::report(&report);
            if part.text.is_empty() {
                return output;
            }
            output.text.push_str(&part.text);
            if let Some(add) = part.structured {
                match &mut output.structured {
                    Some(Value::Object(o)) => {
                        o.insert("changed_outside".into(), add);
                    }
                    None => {
                        output.structured = Some(serde_json::json!({ "changed_outside": add }));
                    }
                    Some(_) => {}
                }
            }
            output
        })
    }
}

/// The family's [`ChangeChecker`]: a change a client's own edit tool reports right after it
/// wrote (Claude Code's `PostToolUse` hook, through the host's control socket).
pub struct OutsideChecker(pub Arc<State>);

impl ChangeChecker for OutsideChecker {
    fn check<'a>(
        &'a self,
        file: &'a Path,
        before: Before,
        room: &'a RoomId,
    ) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let state = &self.0;
            let Ok(path) = confine(state.ws(), "file", &file.to_string_lossy()) else {
                return String::new();
            };
            let had = match before {
                Before::Content(bytes) => Some(bytes),
                Before::Absent => None,
                Before::Unknown => {
                    let mut seen = None;
                    for srv in state.sup.running() {
                        if let Some(t) = srv.last_seen(&path).await {
                            seen = Some(t.into_bytes());
                            break;
                        }
                    }
                    // No earlier content known: nothing can be said about what is new.
                    let Some(seen) = seen else {
                        return String::new();
                    };
                    Some(seen)
                }
            };
            match check(state, vec![(path, had)], room).await {
                Some(report) => ToolOutput::report(&report).text.trim_start().to_string(),
                None => String::new(),
            }
        })
    }
}
