//! What `ast_grep` returns: [`GrepReport`], and the text a model reads, rendered from it.

use crate::engine::Match;
use crate::limits::RESULT_TEXT_BYTES;
use crate::shown::escape;
use crate::stats::Stats;
use agent_tier::Report;
use agent_tier::display::plural;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::fmt::Write as _;

/// The result of `ast_grep`: the first matches (at most `max_results`, in path-then-position
/// order), how many were found in all, how each language understood the pattern and what each
/// language's walk did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GrepReport {
    /// The languages searched, comma-separated.
    pub language: String,
    /// The context each language parsed the pattern in, `; `-separated.
    pub context: String,
    /// How each language searched understood the pattern.
    pub understood: Vec<Understood>,
    /// Matches found in all.
    pub total: usize,
    /// Matches in `matches`.
    pub shown: usize,
    /// Matches found but not listed (`total` − `shown`).
    pub more: usize,
    /// Files with at least one match.
    pub files_matched: usize,
    /// The first matches, in path-then-position order.
    pub matches: Vec<Match>,
    /// What the walk did: the one language's counts, or each language's.
    pub stats: WalkStats,
    /// When nothing matched: how many files the ignore rules left out where it searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
    /// What the text says besides these fields.
    #[serde(skip)]
    pub(crate) call: GrepCall,
}

/// How one language understood the pattern.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Understood {
    /// The language's id.
    pub language: &'static str,
    /// How the language was chosen: `argument`, `extension` or `directory scan`.
    pub language_from: &'static str,
    /// The context that accepted the pattern (`statement`, `expression`, …).
    pub context: String,
    /// The kind of the pattern's root node (`call`, `function_definition`, …).
    pub node_kind: String,
}

/// What the walk did, for one language searched or for each of several.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WalkStats {
    /// One language was searched: its walk's counts.
    One(Stats),
    /// Several languages were searched: each one's counts.
    PerLanguage(Vec<LanguageStats>),
}

/// One language's walk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LanguageStats {
    /// The language's id.
    pub language: &'static str,
    /// What its walk did.
    pub stats: Stats,
}

/// The call and the limits it ran under, as the text needs them.
#[derive(Debug, Clone, Default)]
pub(crate) struct GrepCall {
    pub(crate) pattern: String,
    /// The languages present whose grammar rejected the pattern.
    pub(crate) rejected: Vec<&'static str>,
    pub(crate) max_results: usize,
    pub(crate) max_file_bytes: u64,
    pub(crate) time_limit_secs: u64,
    /// The note for a pattern with lowercase metavariables, when it has some.
    pub(crate) lowercase_note: Option<String>,
    /// Per language, the metavariables its grammar read as part of other code.
    pub(crate) swallowed: Vec<(&'static str, Vec<String>)>,
}

impl GrepReport {
    /// Each language's id and walk, in the order they were searched.
    fn walks(&self) -> Vec<(&str, &Stats)> {
        match &self.stats {
            WalkStats::One(stats) => vec![(self.language.as_str(), stats)],
            WalkStats::PerLanguage(all) => all.iter().map(|l| (l.language, &l.stats)).collect(),
        }
    }
}

impl Report for GrepReport {
    fn text(&self) -> String {
        let call = &self.call;
        let (total, shown) = (self.total, self.shown);
        let pattern_line = escape(&call.pattern.trim().replace('\n', "⏎")).into_owned();
        // `python by argument, parsed as expression → call` — or for several languages, each.
        let parsed = self
            .understood
            .iter()
            .map(|u| {
                format!(
                    "{} by {}, parsed as {} → {}",
                    u.language, u.language_from, u.context, u.node_kind
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let rejected_note = if call.rejected.is_empty() {
            String::new()
        } else {
            format!("; does not parse as: {}", call.rejected.join(", "))
        };

        let mut text = String::new();
        if total == 0 {
            let _ = writeln!(
                text,
                "no matches for `{pattern_line}` ({parsed}{rejected_note})"
            );
        } else {
            let _ = writeln!(
                text,
                "{} in {} for `{pattern_line}` ({parsed}{rejected_note})",
                plural(total, "match", "matches"),
                plural(self.files_matched, "file", "files"),
            );
        }
        // Matches are listed while the text stays within its budget; the rest are counted.
        let listing_starts = text.len();
        let mut listed = 0;
        for m in &self.matches {
            if text.len() - listing_starts >= RESULT_TEXT_BYTES {
                break;
            }
            render(&mut text, m);
            listed += 1;
        }
        if listed < total {
            let why = if listed < shown {
                format!(
                    "the result's text stops at {} KiB",
                    RESULT_TEXT_BYTES / 1024
                )
            } else {
                format!("max_results {}", call.max_results)
            };
            let _ = writeln!(
                text,
                "\n… {listed} of {total} matches shown ({why}); narrow `path` or raise `max_results`",
            );
        }
        let walks = self.walks();
        let summaries: Vec<String> = walks
            .iter()
            .map(|(lang, stats)| stats.summary(lang, call.max_file_bytes))
            .collect();
        let _ = write!(text, "\n{}", summaries.join("\n"));
        if walks.iter().any(|(_, s)| s.stopped_early) {
            let _ = write!(
                text,
                "\nstopped early at the time limit of {} s: the results are partial; narrow `path`",
                call.time_limit_secs
            );
        }
        if let Some(note) = &self.left_out {
            let _ = write!(text, "\n{note}");
        }
        if total == 0
            && let Some(note) = &call.lowercase_note
        {
            let _ = write!(text, "\n{note}");
        }
        if total == 0 {
            for (lang, swallowed) in &call.swallowed {
                let one = swallowed.len() == 1;
                let _ = write!(
                    text,
                    "\nnote: {} {} not parsed as {}: the {lang} grammar read {} as part of other code (a token, identifier or string), so the pattern cannot bind {} and matches that text only literally. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)",
                    swallowed.join(", "),
                    if one { "was" } else { "were" },
                    if one {
                        "a metavariable"
                    } else {
                        "metavariables"
                    },
                    if one { "it" } else { "them" },
                    if one { "it" } else { "them" },
                );
            }
        }
        text
    }
}

/// One match as the result lists it: its place, its lines (escaped and clipped when found),
/// and its captures (clipped when found, escaped here; a multi-line one as its first line).
fn render(text: &mut String, m: &Match) {
    let _ = writeln!(text, "\n{}:{}:{}", escape(&m.file), m.line, m.column);
    let width = (m.line + m.lines.len()).to_string().len();
    for (i, l) in m.lines.iter().enumerate() {
        let _ = writeln!(text, "  {:>width$} | {l}", m.line + i);
    }
    if m.more_lines > 0 {
        let _ = writeln!(text, "  {:>width$} | … {} more lines", "", m.more_lines);
    }
    for (name, value) in &m.captures {
        let lines = m.capture_lines.get(name).copied().unwrap_or(1);
        let value = if value.is_empty() {
            "(nothing)".to_string()
        } else if lines > 1 || value.contains(['\n', '\r']) {
            let first = agent_tier::lines::lines(value).next().unwrap_or_default();
            format!("{} … ({lines} lines)", escape(first))
        } else {
            escape(value).into_owned()
        };
        let _ = writeln!(text, "  ${name} = {value}");
    }
}
