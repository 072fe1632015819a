//! `glob`: the files under a folder of the root whose paths match a pattern, as ripgrep's walk
//! finds them (ignore files honoured, hidden files skipped unless the pattern names one,
//! symlinks never followed), newest first or by path, capped with a count of the rest.

use crate::walk::{self, Pattern, Skipped};
use agent_tier::display::{clip_path, escape};
use agent_tier::workspace;
use agent_tier::{BoxError, CallContext, Hints, Report, Tier, Tool, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Paths listed when `limit` is not given, and the most one call lists.
const DEFAULT_LIMIT: u32 = 100;
const MAX_LIMIT: u32 = 2000;

pub(crate) struct GlobTool;

// The order of the list: newest modification first (the default), or by path. (No doc
// comments: the tool's description says it, and every word of a schema is read on every
// request.)
#[derive(Deserialize, JsonSchema, Clone, Copy, Default, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Order {
    #[default]
    #[serde(alias = "mtime", alias = "modified", alias = "time")]
    Newest,
    #[serde(alias = "name")]
    Path,
}

/// Arguments of `glob`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobArgs {
    /// `src/**/*.rs`, or `*.py` (any depth).
    #[serde(alias = "glob")]
    pattern: String,
    /// Folder (default: the root).
    #[serde(alias = "dir", alias = "directory")]
    path: Option<String>,
    sort: Option<Order>,
    /// Default 100.
    #[serde(alias = "head_limit", alias = "max_results")]
    limit: Option<u32>,
}

impl Tool for GlobTool {
    type Args = GlobArgs;
    fn name(&self) -> &str {
        "glob"
    }
    fn hints(&self) -> Hints {
        Hints::query()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Find files by path pattern (.gitignore'd and hidden files skipped). Returns paths newest first (or `sort`: `path`), capped, saying how many more.".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: GlobArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let root = cx.run().root.clone();
        crate::off_thread(move || glob(&root, args)).await
    }
}

fn glob(root: &Path, args: GlobArgs) -> Result<ToolOutput, BoxError> {
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot open the workspace root: {e}"))?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(format!("`limit` counts paths listed: give 1 to {MAX_LIMIT}").into());
    }
    let limit = limit as usize;
    let order = args.sort.unwrap_or_default();
    let given = args.path.as_deref().unwrap_or(".");
    let given = if given.trim().is_empty() { "." } else { given };
    let base = workspace::confine_existing(&root, "path", given)?;
    if !base.is_dir() {
        return Err(format!(
            "`path` = `{}` is not a folder; give the folder to look in (to search a file's text: grep)",
            clip_path(given)
        )
        .into());
    }
    let pattern = Pattern::new("pattern", &args.pattern, args.path.as_deref())?;
    let mut kept: Vec<(Reverse<SystemTime>, PathBuf)> = Vec::new();
    let mut total = 0usize;
    // A folder swapped for a link to the outside during the walk lists outside names: each
    // name is shown only if it is reached below the root's descriptor through no symlink.
    let below = workspace::Beneath::open(&root)?;
    let skipped = match walk::start(&base, &pattern) {
        Some(from) => walk::files(&root, &from, &base, Some(&pattern), true, |abs, meta| {
            let Some(meta) = meta else { return true };
            if !below.reaches(abs) {
                return true;
            }
            total += 1;
            let key = match order {
                Order::Newest => meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                // The walk is in path order: the first `limit` are the ones listed.
                Order::Path => SystemTime::UNIX_EPOCH,
            };
            if order == Order::Path && kept.len() >= limit {
                return true;
            }
            kept.push((Reverse(key), abs.to_path_buf()));
            if kept.len() >= 2 * limit {
                kept.sort();
                kept.truncate(limit);
            }
            true
        }),
        None => Skipped::default(),
    };
    kept.sort();
    kept.truncate(limit);
    let listed = Listed {
        files: total,
        shown: kept.len(),
        paths: kept
            .iter()
            .map(|(_, abs)| abs.strip_prefix(&root).unwrap_or(abs).display().to_string())
            .collect(),
        pattern: args.pattern,
        place: (base != root).then(|| given.to_string()),
        order,
        notes: {
            let mut notes = skipped.describe();
            if total == 0 {
                notes.extend(skipped.left_out_note());
            }
            notes
        },
    };
    Ok(ToolOutput::report(&listed))
}

/// The result of `glob`.
#[derive(Serialize, JsonSchema)]
struct Listed {
    /// Files that match.
    files: usize,
    /// Files listed.
    shown: usize,
    /// The paths listed, relative to the root, in `order`.
    #[serde(skip)]
    paths: Vec<String>,
    /// The pattern, as given.
    #[serde(skip)]
    pattern: String,
    /// The folder looked in, as given (`None`: the root).
    #[serde(skip)]
    place: Option<String>,
    /// The order of the list.
    #[serde(skip)]
    order: Order,
    /// What the walk did not look at, one note each.
    #[serde(skip)]
    notes: Vec<String>,
}

impl Report for Listed {
    fn text(&self) -> String {
        let mut text = String::new();
        for path in &self.paths {
            text.push_str(&escape(path));
            text.push('\n');
        }
        let (total, shown, notes) = (self.files, self.shown, &self.notes);
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("; {}", notes.join("; "))
        };
        let order_text = match self.order {
            Order::Newest => "newest first",
            Order::Path => "by path",
        };
        let summary = if total == 0 {
            format!(
                "[no file matches `{}` under {}{notes}; .gitignore'd and hidden files are not listed]",
                clip_path(&self.pattern),
                match &self.place {
                    None => "the root".to_string(),
                    Some(given) => format!("`{}`", clip_path(given)),
                }
            )
        } else if shown == total {
            format!("[{total} file(s), {order_text}{notes}]")
        } else {
            format!(
                "[{shown} of {total} files, {order_text}; {} more: narrow `pattern` or `path`, or raise `limit`{notes}]",
                total - shown
            )
        };
        text.push_str(&summary);
        text
    }
}
