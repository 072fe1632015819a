//! `apply_patch`: either patch format, planned whole against the files as they are, then written
//! all-or-nothing.

use crate::envelope::{self, Chunk, Op};
use crate::error::ParseError;
use crate::patch::{self, Hunk, Tolerated};
use crate::tools::{changed_files, read_for_change};
use agent_tier::workspace::{self, FileChange};
use agent_tier::{BoxError, CallContext, Report, ResourceKey, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub(crate) struct ApplyPatchTool;

/// Arguments of `apply_patch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPatchArgs {
    /// Unified diff or `*** Begin Patch` envelope.
    #[serde(alias = "input", alias = "diff")]
    patch: String,
    // Report the problems it would bring; write nothing (the instructions say so once).
    dry_run: Option<bool>,
}

impl Tool for ApplyPatchTool {
    type Args = ApplyPatchArgs;
    fn name(&self) -> &str {
        "apply_patch"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Change several places or files, all or nothing (one replacement: edit). `patch`: a unified diff (miscounted hunks are recounted; `/dev/null` creates or deletes) or a `*** Begin Patch` ... `*** End Patch` envelope: `*** Add File: p` (`+` lines), `*** Delete File: p`, `*** Update File: p` (optional `*** Move to: q`; chunks of ` `/`-`/`+` lines opened by `@@` or `@@ <line to search from>`); Add File and Move to never overwrite a file. Context matched exactly, else ignoring trailing whitespace or typographic quotes/dashes (noted); a chunk matching several places is refused.".into()
    }
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::FILES
    }
    async fn call(&self, args: ApplyPatchArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        let dry = args.dry_run.unwrap_or(false);
        crate::off_thread(move || apply_patch(&root, &args.patch, dry)).await
    }
}

/// The result of `apply_patch`.
#[derive(Serialize, JsonSchema)]
struct Patched {
    /// The files written or deleted, relative to the root.
    changed_files: Vec<String>,
    /// The hunks recounted and the files matched only under a tolerance, one note each.
    #[serde(skip)]
    notes: Vec<String>,
}

impl Report for Patched {
    fn text(&self) -> String {
        let mut text = format!(
            "patched {} file(s): {}",
            self.changed_files.len(),
            self.changed_files.join(", ")
        );
        for note in &self.notes {
            text.push('\n');
            text.push_str(note);
        }
        text
    }
}

/// What a section does to the text of its file.
enum Body {
    Unified(Vec<Hunk>),
    Envelope(Vec<Chunk>),
    /// An envelope's `*** Add File:`, whole.
    Whole(String),
    /// An envelope's `*** Delete File:` (nothing to verify against).
    Delete,
}

/// One file section of either format.
struct Section {
    /// `None`: the file is created.
    old_path: Option<String>,
    /// `None`: the file is deleted.
    new_path: Option<String>,
    body: Body,
}

/// The patch's sections, and a note for every hunk whose header counts were replaced by its
/// body's (`hunk 1 of a.py: header said -1,2 +1,2, body has -1,3 +1,3; recounted`).
fn sections(text: &str) -> Result<(Vec<Section>, Vec<String>), ParseError> {
    if envelope::is_envelope(text) {
        let sections = envelope::parse(text)?
            .into_iter()
            .map(|op| match op {
                Op::Add { path, content } => Section {
                    old_path: None,
                    new_path: Some(path),
                    body: Body::Whole(content),
                },
                Op::Delete { path } => Section {
                    old_path: Some(path),
                    new_path: None,
                    body: Body::Delete,
                },
                Op::Update {
                    path,
                    move_to,
                    chunks,
                } => Section {
                    new_path: Some(move_to.unwrap_or_else(|| path.clone())),
                    old_path: Some(path),
                    body: Body::Envelope(chunks),
                },
            })
            .collect();
        return Ok((sections, Vec::new()));
    }
    let files = patch::parse(text)?;
    let notes = files
        .iter()
        .flat_map(|f| {
            f.hunks.iter().enumerate().filter_map(move |(n, h)| {
                let r = h.recount.as_ref()?;
                Some(format!("hunk {} of {}: {}", n + 1, f.name(), r.describe()))
            })
        })
        .collect();
    let sections = files
        .into_iter()
        .map(|f| Section {
            old_path: f.old_path,
            new_path: f.new_path,
            body: Body::Unified(f.hunks),
        })
        .collect();
    Ok((sections, notes))
}

/// The planned state of every file the patch touches.
struct Plan<'a> {
    root: &'a Path,
    changes: Vec<FileChange>,
    /// A note for every file some of whose hunks matched only under a tolerance.
    notes: Vec<String>,
}

impl Plan<'_> {
    /// The file's content as the patch has left it so far (`None`: absent), reading it from
    /// disk the first time.
    fn current(&mut self, rel: &str) -> Result<(usize, Option<Vec<u8>>), BoxError> {
        let path = workspace::confine(self.root, "patch", rel)?;
        if let Some(i) = self.changes.iter().position(|c| c.path == path) {
            return Ok((i, self.changes[i].new.clone()));
        }
        let on_disk = read_for_change(self.root, &path, "patch")?;
        self.changes.push(FileChange {
            path,
            expected: on_disk.clone(),
            new: on_disk.clone(),
        });
        Ok((self.changes.len() - 1, on_disk))
    }

    fn text(rel: &str, bytes: Option<Vec<u8>>) -> Result<String, BoxError> {
        String::from_utf8(bytes.unwrap_or_default())
            .map_err(|_| format!("`{rel}` is not UTF-8 text; nothing was written").into())
    }

    fn section(&mut self, s: Section) -> Result<(), BoxError> {
        let old_text = match &s.old_path {
            Some(old) => {
                let (i, bytes) = self.current(old)?;
                if bytes.is_none() {
                    return Err(format!(
                        "`patch` changes `{old}`, which does not exist; nothing was written"
                    )
                    .into());
                }
                let text = Self::text(old, bytes)?;
                if s.new_path.as_deref() != Some(old.as_str()) {
                    // Deleted, or moved away: the old path ends up absent.
                    self.changes[i].new = None;
                }
                Some(text)
            }
            None => None,
        };
        let Some(new) = &s.new_path else {
            if let (Body::Unified(hunks), Some(text)) = (&s.body, &old_text) {
                let old = s.old_path.as_deref().unwrap_or_default();
                patch::verify_deletion(text, hunks)
                    .map_err(|e| format!("`patch` deletes `{old}`: {e}; nothing was written"))?;
            }
            return Ok(());
        };
        let (i, existing) = self.current(new)?;
        let base = match old_text {
            Some(text) => {
                if s.old_path.as_deref() != Some(new.as_str()) && existing.is_some() {
                    return Err(format!(
                        "`patch` moves a file onto `{new}`, which already exists (a move never overwrites: delete it first in the same patch, `*** Delete File: {new}`); nothing was written"
                    )
                    .into());
                }
                text
            }
            None if existing.is_some() => {
                return Err(format!(
                    "`patch` creates `{new}`, which already exists (a new file never overwrites one: delete it first in the same patch, `*** Delete File: {new}`, or change it with `*** Update File: {new}`); nothing was written"
                )
                .into());
            }
            None => String::new(),
        };
        let (result, tolerated) = match &s.body {
            Body::Unified(hunks) => patch::apply(&base, hunks),
            Body::Envelope(chunks) => envelope::apply(&base, chunks),
            Body::Whole(content) => Ok((content.clone(), Tolerated::default())),
            Body::Delete => Ok((base, Tolerated::default())),
        }
        .map_err(|e| format!("{new}: {e}; nothing was written"))?;
        self.notes.extend(tolerated.notes(new));
        self.changes[i].new = Some(result.into_bytes());
        Ok(())
    }
}

fn apply_patch(root: &Path, text: &str, dry_run: bool) -> Result<ToolOutput, BoxError> {
    let (sections, notes) = sections(text)?;
    // A refusal says which hunks were recounted too: the miscount may be why it does not apply.
    let noted = |e: BoxError| -> BoxError {
        if notes.is_empty() {
            e
        } else {
            format!("{e}\n{}", notes.join("\n")).into()
        }
    };
    let mut plan = Plan {
        root,
        changes: Vec::new(),
        notes: Vec::new(),
    };
    for s in sections {
        plan.section(s).map_err(noted)?;
    }
    // Files the patch read but left as they were are not written.
    let changes: Vec<FileChange> = plan
        .changes
        .into_iter()
        .filter(|c| c.new != c.expected)
        .collect();
    if changes.is_empty() {
        return Err(noted("`patch` changes nothing; no file was written".into()));
    }
    if dry_run {
        let mut out = ToolOutput::dry_run("apply_patch", root, &changes);
        for n in notes.iter().chain(&plan.notes) {
            out.text.push('\n');
            out.text.push_str(n);
        }
        return Ok(out);
    }
    workspace::apply_all(root, &changes)?;
    let paths: Vec<&Path> = changes.iter().map(|c| c.path.as_path()).collect();
    let patched = Patched {
        changed_files: changed_files(root, &paths),
        notes: notes.into_iter().chain(plan.notes).collect(),
    };
    Ok(ToolOutput::report(&patched).with_file_changes(root, &changes))
}
