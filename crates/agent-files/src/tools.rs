//! `write` and `edit`, and what the writing tools share (reading a file to change it, the changed
//! files they report). Each call's file work runs on the blocking pool; on success the writing tools
//! report the files they changed (typed, for wrappers; and in `structured.changed_files` for the
//! client).

use agent_tier::display::clip_path;
use agent_tier::workspace::{self, FileChange, FsError};
use agent_tier::{BoxError, CallContext, Hints, Report, ResourceKey, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Largest file `write`, `edit` and `apply_patch` read to change (they need it whole).
const EDIT_CAP: u64 = 64 * 1024 * 1024;

/// The whole content of the regular file `path` (`None` when it does not exist); a FIFO, device,
/// socket or directory, or a file over [`EDIT_CAP`], is an error naming `arg`.
pub(crate) fn read_for_change(
    root: &Path,
    path: &Path,
    arg: &str,
) -> Result<Option<Vec<u8>>, BoxError> {
    match workspace::read_regular(root, path, EDIT_CAP + 1) {
        Ok(r) if r.size > EDIT_CAP || r.bytes.len() as u64 > EDIT_CAP => Err(format!(
            "`{arg}`: `{}` is {} bytes, more than the {EDIT_CAP} bytes the file tools change; nothing was written",
            clip_path(&path.display().to_string()),
            r.size.max(r.bytes.len() as u64)
        )
        .into()),
        Ok(r) => Ok(Some(r.bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("`{arg}`: {e}; nothing was written").into()),
    }
}

/// The files a call changed, as its result names them: relative to the root.
pub(crate) fn changed_files(root: &Path, paths: &[&Path]) -> Vec<String> {
    paths
        .iter()
        .map(|p| workspace::display_path(root, p))
        .collect()
}

/// The result of `write`.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Written {
    /// The file written, relative to the root.
    changed_files: Vec<String>,
    /// Its length in bytes.
    #[serde(skip)]
    bytes: usize,
}

impl Report for Written {
    fn text(&self) -> String {
        format!(
            "wrote {} ({} bytes)",
            self.changed_files.join(", "),
            self.bytes
        )
    }
}

/// The result of `edit`.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Edited {
    /// The file edited, relative to the root.
    changed_files: Vec<String>,
    /// How many times `old_string` was replaced.
    replacements: usize,
    /// `replace_all` was set.
    #[serde(skip)]
    all: bool,
    /// The definition an edit by `symbol` changed: what was done, to what, where.
    #[serde(skip_serializing_if = "Option::is_none")]
    symbol: Option<String>,
}

impl Report for Edited {
    fn text(&self) -> String {
        let shown = self.changed_files.join(", ");
        if let Some(done) = &self.symbol {
            format!("edited {shown}: {done}")
        } else if self.all {
            format!("edited {shown} ({} replacement(s))", self.replacements)
        } else {
            format!("edited {shown}")
        }
    }
}

fn io_err(context: &'static str, path: &Path, source: std::io::Error) -> FsError {
    FsError::Io {
        context,
        path: path.display().to_string(),
        source,
    }
}

pub(crate) struct WriteTool;

/// Arguments of `write`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteArgs {
    /// Workspace-relative file.
    #[serde(alias = "file", alias = "file_path")]
    path: String,
    /// The whole new content.
    content: String,
    // Report the problems it would bring; write nothing (the instructions say so once).
    dry_run: Option<bool>,
}

impl Tool for WriteTool {
    type Args = WriteArgs;
    fn name(&self) -> &str {
        "write"
    }
    fn hints(&self) -> Hints {
        // Writing the same content twice leaves the same file.
        Hints {
            idempotent: true,
            ..Hints::from_tier(Tier::Write)
        }
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Write a whole file, creating it and its directories if needed. Atomic; keeps the file's mode.".into()
    }
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::FILES
    }
    async fn call(&self, args: WriteArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        crate::off_thread(move || {
            let root = &root;
            let path = workspace::confine(root, "path", &args.path)?;
            if path.is_dir() {
                return Err(format!(
                    "`path` = `{}` is a directory; give a file path",
                    clip_path(&args.path)
                )
                .into());
            }
            let expected = read_for_change(root, &path, "path")?;
            let change = [FileChange {
                path: path.clone(),
                expected,
                new: Some(args.content.clone().into_bytes()),
            }];
            if args.dry_run.unwrap_or(false) {
                return Ok(ToolOutput::dry_run("write", root, &change));
            }
            workspace::apply_all(root, &change)?;
            let written = Written {
                changed_files: changed_files(root, &[&path]),
                bytes: args.content.len(),
            };
            Ok(ToolOutput::report(&written).with_file_changes(root, &change))
        })
        .await
    }
}

pub(crate) struct EditTool;

/// Arguments of `edit`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditArgs {
    /// Workspace-relative file.
    #[serde(alias = "file", alias = "file_path")]
    path: String,
    /// Exact text, unique unless `replace_all`.
    old_string: Option<String>,
    /// Replacement text.
    new_string: String,
    replace_all: Option<bool>,
    /// A definition's name path (`Class.method`) instead of `old_string`.
    symbol: Option<String>,
    /// With `symbol`: put `new_string` before or after it.
    insert: Option<crate::symbol_edit::Insert>,
    // Report the problems it would bring; write nothing (the instructions say so once).
    dry_run: Option<bool>,
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
        "Replace one exact text that occurs once in a file, or every occurrence with `replace_all`; or a whole definition by `symbol` (no server needed), re-indented."
            .into()
    }
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::FILES
    }
    async fn call(&self, args: EditArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        let finder = cx.registry().definitions();
        crate::off_thread(move || {
        let root = &root;
        let path = workspace::confine_existing(root, "path", &args.path)?;
        let bytes = read_for_change(root, &path, "path")?
            .ok_or_else(|| io_err("cannot read", &path, std::io::ErrorKind::NotFound.into()))?;
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| format!("`path` = `{}` is not UTF-8 text", clip_path(&args.path)))?;
        let old_string = match (&args.old_string, &args.symbol) {
            (Some(_), Some(_)) => {
                return Err("give `old_string` (exact text) or `symbol` (a definition by name), not both; nothing was written".into());
            }
            (None, Some(symbol)) => return by_symbol(root, &path, &args, &text, bytes, symbol, finder.as_deref()),
            (None, None) => {
                return Err("`old_string` is required: the exact text to replace (or `symbol`: a definition by name path, `Class.method`)".into());
            }
            (Some(o), None) => o.clone(),
        };
        if args.insert.is_some() {
            return Err("`insert` places `new_string` before or after a `symbol`; give `symbol` instead of `old_string`, or leave out `insert`".into());
        }
        if old_string.is_empty() {
            return Err("`old_string` is empty; give the exact text to replace".into());
        }
        let all = args.replace_all.unwrap_or(false);
        let count = text.matches(&old_string).count();
        match count {
            0 => {
                return Err(format!(
                    "`old_string` does not occur in {}; nothing was written (read the file and copy the text exactly)",
                    clip_path(&args.path)
                )
                .into());
            }
            1 => {}
            _ if all => {}
            n => {
                return Err(format!(
                    "`old_string` occurs {n} times in {}; include more surrounding text so that it is unique, or set `replace_all`: true to replace all {n}; nothing was written",
                    clip_path(&args.path)
                )
                .into());
            }
        }
        // Size before memory: the result's length is known from the count, so a replacement
        // that would grow the file past what the file tools change is refused before any of it
        // is built (a 4 MiB file of `a` with every `a` made 1 KiB would need 4 GiB).
        let new_len = (text.len() as u128)
            .saturating_sub(count as u128 * old_string.len() as u128)
            .saturating_add(count as u128 * args.new_string.len() as u128);
        if new_len > EDIT_CAP as u128 {
            return Err(format!(
                "replacing {count} occurrence(s) of `old_string` would make {} {new_len} bytes, more than the {EDIT_CAP} bytes the file tools write; nothing was written",
                clip_path(&args.path)
            )
            .into());
        }
        let new_text = if all {
            text.replace(&old_string, &args.new_string)
        } else {
            text.replacen(&old_string, &args.new_string, 1)
        };
        let change = [FileChange {
            path: path.clone(),
            expected: Some(bytes),
            new: Some(new_text.into_bytes()),
        }];
        if args.dry_run.unwrap_or(false) {
            return Ok(ToolOutput::dry_run("edit", root, &change));
        }
        workspace::apply_all(root, &change)?;
        let edited = Edited {
            changed_files: changed_files(root, &[&path]),
            replacements: count,
            all,
            symbol: None,
        };
        Ok(ToolOutput::report(&edited).with_file_changes(root, &change))
        }).await
    }
}

/// `edit` by `symbol`: the definition it names, changed through [`crate::symbol_edit`].
fn by_symbol(
    root: &Path,
    path: &Path,
    args: &EditArgs,
    text: &str,
    bytes: Vec<u8>,
    symbol: &str,
    finder: Option<&dyn agent_tier::definitions::DefinitionFinder>,
) -> Result<ToolOutput, BoxError> {
    use crate::symbol_edit::{Insert, apply};
    if args.replace_all.is_some() {
        return Err("`replace_all` is for `old_string`; a `symbol` names one definition — leave out `replace_all`".into());
    }
    let finder = finder.ok_or(
        "an edit by `symbol` needs the structural-search family (its grammars find definitions), which this run does not have; give `old_string` instead",
    )?;
    let shown = workspace::display_path(root, path);
    let (new_text, def) = apply(
        finder,
        path,
        &shown,
        text,
        symbol,
        args.insert,
        &args.new_string,
    )?;
    if new_text.len() as u64 > EDIT_CAP {
        return Err(format!(
            "the edit would make {} {} bytes, more than the {EDIT_CAP} bytes the file tools write; nothing was written",
            clip_path(&shown),
            new_text.len()
        )
        .into());
    }
    let change = [FileChange {
        path: path.to_path_buf(),
        expected: Some(bytes),
        new: Some(new_text.into_bytes()),
    }];
    if args.dry_run.unwrap_or(false) {
        return Ok(ToolOutput::dry_run("edit", root, &change));
    }
    workspace::apply_all(root, &change)?;
    let done = match args.insert {
        None => "replaced",
        Some(Insert::Before) => "inserted before",
        Some(Insert::After) => "inserted after",
    };
    let edited = Edited {
        changed_files: changed_files(root, &[path]),
        replacements: 1,
        all: false,
        symbol: Some(format!(
            "{done} {} {} (line {})",
            def.kind,
            def.name_path(),
            def.line
        )),
    };
    Ok(ToolOutput::report(&edited).with_file_changes(root, &change))
}
