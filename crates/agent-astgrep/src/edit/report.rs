//! What `ast_edit` returns: [`EditReport`], and the text a model reads (the proposal and its
//! bounded diff), rendered from it.

use crate::engine::FileRewrite;
use crate::shown;
use crate::stats::Stats;
use agent_tier::Report;
use agent_tier::display::plural;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::fmt::Write as _;

/// The result of `ast_edit`: the staged edit (its id for `resolve`) and what it would change,
/// or, when the rewrite changes nothing, no edit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EditReport {
    /// The staged edit's id, for `resolve`; null when nothing was staged.
    pub edit_id: Option<String>,
    /// Replacements the edit makes.
    pub replacements: usize,
    /// Matches nested inside a rewritten match, left as they are (absent when nothing was
    /// staged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inner_matches_left: Option<usize>,
    /// The files the edit changes, relative to the workspace root.
    pub files: Vec<String>,
    /// The files that parsed before the rewrite and no longer do, each with where (absent when
    /// nothing was staged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_longer_parse: Option<Vec<String>>,
    /// What the walk did.
    pub stats: Stats,
    /// What the text says besides these fields.
    #[serde(skip)]
    pub(crate) call: EditCall,
}

/// The call, the limits it ran under and the rewritten files, as the text needs them.
#[derive(Debug, Clone)]
pub(crate) struct EditCall {
    pub(crate) pattern: String,
    pub(crate) language: &'static str,
    /// The context that accepted the pattern.
    pub(crate) context: String,
    /// Matches whose rewrite leaves the code as it is.
    pub(crate) unchanged: usize,
    pub(crate) max_file_bytes: u64,
    pub(crate) max_diff_lines: usize,
    /// The files the edit changes, old and new text (for the diff).
    pub(crate) rewrites: Vec<FileRewrite>,
}

impl EditReport {
    /// The result of a rewrite that changes nothing: no edit staged.
    pub(crate) fn unchanged(stats: Stats, call: EditCall) -> Self {
        EditReport {
            edit_id: None,
            replacements: 0,
            inner_matches_left: None,
            files: Vec::new(),
            no_longer_parse: None,
            stats,
            call,
        }
    }
}

impl Report for EditReport {
    fn text(&self) -> String {
        let call = &self.call;
        let footer = self.stats.summary(call.language, call.max_file_bytes);
        let Some(id) = &self.edit_id else {
            let pattern_line = shown::escape(&call.pattern.trim().replace('\n', "⏎")).into_owned();
            let mut text = format!(
                "(nothing staged) no change: `{pattern_line}` ({}, parsed as {}) ",
                call.language, call.context
            );
            if call.unchanged > 0 {
                let _ = write!(
                    text,
                    "matched {} but the rewrite leaves the code as it is",
                    plural(call.unchanged, "time", "times")
                );
            } else {
                text.push_str("matched nothing");
            }
            let _ = write!(text, "\n{footer}");
            return text;
        };
        let mut text = format!(
            "(proposed) {} in {} … call resolve with edit_id \"{id}\" (operation \"accept\" writes them all, \"discard\" drops them); nothing is written yet",
            plural(self.replacements, "replacement", "replacements"),
            plural(self.files.len(), "file", "files"),
        );
        let inner = self.inner_matches_left.unwrap_or(0);
        if inner > 0 {
            let _ = write!(
                text,
                "\n{} nested inside a rewritten match {} left as {} (the outermost match wins)",
                plural(inner, "match", "matches"),
                if inner == 1 { "was" } else { "were" },
                if inner == 1 { "it is" } else { "they are" }
            );
        }
        let broken = self.no_longer_parse.as_deref().unwrap_or_default();
        if !broken.is_empty() {
            let _ = write!(
                text,
                "\nwarning: after this rewrite {} no longer {}: {}",
                plural(broken.len(), "file", "files"),
                if broken.len() == 1 { "parses" } else { "parse" },
                broken.join("; ")
            );
        }
        let _ = write!(
            text,
            "\n{footer}\n\n{}",
            bounded_diff(&call.rewrites, call.max_diff_lines)
        );
        text
    }
}

/// The proposal's unified diff, at most `max_lines` lines; each file's name and each line of
/// its text escaped (a file name cannot start a header line of its own) and clipped.
fn bounded_diff(files: &[FileRewrite], max_lines: usize) -> String {
    let mut lines = Vec::new();
    let mut total = 0;
    for f in files {
        let diff = similar::TextDiff::from_lines(&f.old, &f.new);
        let rel = shown::escape(&f.rel);
        let text = diff
            .unified_diff()
            .context_radius(2)
            .header(&format!("a/{rel}"), &format!("b/{rel}"))
            .to_string();
        // `similar` ends a line where `agent_tier::lines` does (`\n`, `\r\n`, a lone `\r`)
        // and keeps each line's own ending in the diff, so the diff is split the same way.
        for line in agent_tier::lines::lines(&text) {
            total += 1;
            if lines.len() < max_lines {
                lines.push(shown::clip(line));
            }
        }
    }
    if total > max_lines {
        lines.push(format!(
            "… diff truncated: {} more lines (accepting applies all of it)",
            total - max_lines
        ));
    }
    lines.join("\n")
}
