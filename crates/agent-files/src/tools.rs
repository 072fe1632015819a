//! The four tools. Each call's file work runs on the blocking pool; on success the writing tools
//! report the files they changed (typed, for wrappers; and in `structured.changed_files` for the
//! client).

use crate::patch;
use agent_tier::workspace::{self, FileChange, FsError};
use agent_tier::{BoxError, CallContext, Registry, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Largest file `read` returns whole.
const READ_CAP: usize = 256 * 1024;
/// Largest file `write`, `edit` and `apply_patch` read to change (they need it whole).
const EDIT_CAP: u64 = 64 * 1024 * 1024;

/// The whole content of the regular file `path` (`None` when it does not exist); a FIFO, device,
/// socket or directory, or a file over [`EDIT_CAP`], is an error naming `arg`.
fn read_for_change(path: &Path, arg: &str) -> Result<Option<Vec<u8>>, BoxError> {
    match workspace::read_regular(path, EDIT_CAP + 1) {
        Ok(r) if r.size > EDIT_CAP || r.bytes.len() as u64 > EDIT_CAP => Err(format!(
            "`{arg}`: `{}` is {} bytes, more than the {EDIT_CAP} bytes the file tools change; nothing was written",
            path.display(),
            r.size.max(r.bytes.len() as u64)
        )
        .into()),
        Ok(r) => Ok(Some(r.bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("`{arg}`: {e}; nothing was written").into()),
    }
}

/// Register the four file tools.
pub fn attach(registry: &Registry) {
    registry.register(ReadTool);
    registry.register(WriteTool);
    registry.register(EditTool);
    registry.register(ApplyPatchTool);
}

/// Run a call's file work on the blocking pool, off the async threads.
async fn off_thread(
    work: impl FnOnce() -> Result<ToolOutput, BoxError> + Send + 'static,
) -> Result<ToolOutput, BoxError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| BoxError::from(format!("the file work stopped: {e}")))?
}

fn changed(root: &Path, paths: &[&Path]) -> serde_json::Value {
    json!({ "changed_files": paths.iter().map(|p| workspace::display_path(root, p)).collect::<Vec<_>>() })
}

fn io_err(context: &'static str, path: &Path, source: std::io::Error) -> FsError {
    FsError::Io {
        context,
        path: path.display().to_string(),
        source,
    }
}

struct ReadTool;

/// Arguments of `read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read, relative to the workspace root.
    path: String,
}

impl Tool for ReadTool {
    type Args = ReadArgs;
    fn name(&self) -> &str {
        "read"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Read a file inside the workspace.".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: ReadArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        off_thread(move || {
            let root = &root;
            let path = workspace::confine_existing(root, "path", &args.path)?;
            // Never more than is returned, and never a FIFO or device (the open does not block).
            let read = workspace::read_regular(&path, READ_CAP as u64)
                .map_err(|e| io_err("cannot read", &path, e))?;
            let mut text = String::from_utf8_lossy(&read.bytes).into_owned();
            let shown = read.bytes.len() as u64;
            if read.size > shown {
                text.push_str(&format!("\n[… {} more bytes not shown]", read.size - shown));
            }
            Ok(ToolOutput::text(text))
        })
        .await
    }
}

struct WriteTool;

/// Arguments of `write`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// File to write, relative to the workspace root; created with its directories if missing.
    path: String,
    /// The whole new content.
    content: String,
}

impl Tool for WriteTool {
    type Args = WriteArgs;
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Write a whole file inside the workspace (atomically; the file's mode is kept).".into()
    }
    fn resource_key(&self) -> String {
        "files".into()
    }
    async fn call(&self, args: WriteArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        off_thread(move || {
            let root = &root;
            let path = workspace::confine(root, "path", &args.path)?;
            if path.is_dir() {
                return Err(
                    format!("`path` = `{}` is a directory; give a file path", args.path).into(),
                );
            }
            let expected = read_for_change(&path, "path")?;
            workspace::apply_all(
                root,
                &[FileChange {
                    path: path.clone(),
                    expected,
                    new: Some(args.content.clone().into_bytes()),
                }],
            )?;
            Ok(ToolOutput::text(format!(
                "wrote {} ({} bytes)",
                workspace::display_path(root, &path),
                args.content.len()
            ))
            .with_structured(changed(root, &[&path]))
            .with_changed_files([workspace::display_path(root, &path)]))
        })
        .await
    }
}

struct EditTool;

/// Arguments of `edit`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// File to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace; it must occur exactly once in the file.
    old_string: String,
    /// The replacement text.
    new_string: String,
}

impl Tool for EditTool {
    type Args = EditArgs;
    fn name(&self) -> &str {
        "edit"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Replace one exact, unique occurrence of `old_string` with `new_string` in a file.".into()
    }
    fn resource_key(&self) -> String {
        "files".into()
    }
    async fn call(&self, args: EditArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        off_thread(move || {
        let root = &root;
        let path = workspace::confine_existing(root, "path", &args.path)?;
        let bytes = read_for_change(&path, "path")?
            .ok_or_else(|| io_err("cannot read", &path, std::io::ErrorKind::NotFound.into()))?;
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| format!("`path` = `{}` is not UTF-8 text", args.path))?;
        if args.old_string.is_empty() {
            return Err("`old_string` is empty; give the exact text to replace".into());
        }
        let count = text.matches(&args.old_string).count();
        match count {
            0 => {
                return Err(format!(
                    "`old_string` does not occur in {}; nothing was written (read the file and copy the text exactly)",
                    args.path
                )
                .into());
            }
            1 => {}
            n => {
                return Err(format!(
                    "`old_string` occurs {n} times in {}; include more surrounding text so that it is unique; nothing was written",
                    args.path
                )
                .into());
            }
        }
        let new_text = text.replacen(&args.old_string, &args.new_string, 1);
        workspace::apply_all(
            root,
            &[FileChange {
                path: path.clone(),
                expected: Some(bytes),
                new: Some(new_text.into_bytes()),
            }],
        )?;
        Ok(
            ToolOutput::text(format!("edited {}", workspace::display_path(root, &path)))
                .with_structured(changed(root, &[&path]))
                .with_changed_files([workspace::display_path(root, &path)]),
        )
        }).await
    }
}

struct ApplyPatchTool;

/// Arguments of `apply_patch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    /// A unified diff (`--- a/file`, `+++ b/file`, `@@ … @@` hunks); `/dev/null` creates or
    /// deletes a file. Applied all-or-nothing.
    patch: String,
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
        "Apply a unified diff to files in the workspace, all-or-nothing: if any hunk does not apply, no file is changed.".into()
    }
    fn resource_key(&self) -> String {
        "files".into()
    }
    async fn call(&self, args: ApplyPatchArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        off_thread(move || {
        let root = &root;
        let files = patch::parse(&args.patch)?;
        let mut changes: Vec<FileChange> = Vec::new();
        for f in &files {
            let target = f.new_path.as_deref().or(f.old_path.as_deref()).ok_or(
                "a file in `patch` has neither an old nor a new path; nothing was written",
            )?;
            if let (Some(old), Some(new)) = (&f.old_path, &f.new_path)
                && old != new
            {
                return Err(format!(
                    "`patch` renames `{old}` to `{new}`; renames are not supported (delete and create instead); nothing was written"
                )
                .into());
            }
            let path = workspace::confine(root, "patch", target)?;
            // A second section for a file already in the patch applies to the first's result.
            let earlier = changes.iter().position(|c| c.path == path);
            let (expected, current) = match earlier {
                Some(i) => (changes[i].expected.clone(), changes[i].new.clone()),
                None => {
                    let on_disk = read_for_change(&path, "patch")?;
                    (on_disk.clone(), on_disk)
                }
            };
            let old_text = match (&f.old_path, &current) {
                (Some(_), Some(b)) => String::from_utf8(b.clone())
                    .map_err(|_| format!("`{target}` is not UTF-8 text; nothing was written"))?,
                (Some(_), None) => {
                    return Err(format!(
                        "`patch` modifies `{target}`, which does not exist; nothing was written"
                    )
                    .into());
                }
                (None, Some(_)) => {
                    return Err(format!(
                        "`patch` creates `{target}`, which already exists; nothing was written"
                    )
                    .into());
                }
                (None, None) => String::new(),
            };
            let new = if f.new_path.is_none() {
                patch::verify_deletion(&old_text, &f.hunks)
                    .map_err(|e| format!("`patch` deletes `{target}`: {e}; nothing was written"))?;
                None
            } else {
                Some(
                    patch::apply(&old_text, &f.hunks)
                        .map_err(|e| format!("{target}: {e}; nothing was written"))?
                        .into_bytes(),
                )
            };
            match earlier {
                Some(i) => changes[i].new = new,
                None => changes.push(FileChange {
                    path,
                    expected,
                    new,
                }),
            }
        }
        workspace::apply_all(root, &changes)?;
        let paths: Vec<&Path> = changes.iter().map(|c| c.path.as_path()).collect();
        let list: Vec<String> = paths
            .iter()
            .map(|p| workspace::display_path(root, p))
            .collect();
        Ok(ToolOutput::text(format!(
            "patched {} file(s): {}",
            list.len(),
            list.join(", ")
        ))
        .with_structured(changed(root, &paths))
        .with_changed_files(list))
        }).await
    }
}
