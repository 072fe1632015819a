//! `ast_grep`: one search over one or several languages, rendered.

use crate::engine::{self, Budget};
use crate::error::AstGrepError;
use crate::limits::RESULT_TEXT_BYTES;
use crate::shown::escape;
use crate::{AstGrepArgs, Shared, pattern, plural, scopes, walk_summary};
use agent_tier::ToolOutput;
use serde_json::json;
use std::fmt::Write as _;

pub(crate) fn grep(
    shared: &Shared,
    args: AstGrepArgs,
    budget: &Budget,
) -> Result<ToolOutput, AstGrepError> {
    let config = &shared.config;
    let max = args.max_results.unwrap_or(50);
    let (scopes, rejected) = scopes::compiled_scopes(
        &shared.root,
        args.path.as_deref(),
        args.language.as_deref(),
        &args.pattern,
    )?;
    let runs: Vec<_> = scopes
        .iter()
        .map(|(scope, compiled)| {
            (
                scope.lang,
                format!(
                    "{} by {}, parsed as {} → {}",
                    scope.lang.id(),
                    scope.lang_from,
                    compiled.context,
                    compiled.kind
                ),
                engine::search(scope, compiled, config, &shared.cache, budget, max),
            )
        })
        .collect();
    let mut matches: Vec<engine::Match> = Vec::new();
    let mut files_matched = 0;
    let mut total = 0;
    let mut stopped_early = false;
    for (_, _, r) in &runs {
        matches.extend(r.matches.iter().cloned());
        files_matched += r.files_matched;
        total += r.total;
        stopped_early |= r.stats.stopped_early;
    }
    // Several languages: one order over all of them (each run is already in this order, and
    // holds its first `max`, so the first `max` of them all are here).
    if runs.len() > 1 {
        matches.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    }
    matches.truncate(max);
    let shown = matches.len();
    let pattern_line = escape(&args.pattern.trim().replace('\n', "⏎")).into_owned();
    // `python, parsed as expression` — or for several languages, each with its context.
    let parsed = runs
        .iter()
        .map(|(_, c, _)| c.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let rejected_note = if rejected.is_empty() {
        String::new()
    } else {
        format!(
            "; does not parse as: {}",
            rejected
                .iter()
                .map(|(l, _)| l.id())
                .collect::<Vec<_>>()
                .join(", ")
        )
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
            plural(files_matched, "file", "files"),
        );
    }
    // Matches are listed while the text stays within its budget; the rest are counted.
    let listing_starts = text.len();
    let mut listed = 0;
    for m in &matches {
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
            format!("max_results {max}")
        };
        let _ = writeln!(
            text,
            "\n… {listed} of {total} matches shown ({why}); narrow `path` or raise `max_results`",
        );
    }
    let summaries: Vec<String> = runs
        .iter()
        .map(|(l, _, r)| walk_summary(&r.stats, *l, config))
        .collect();
    let _ = write!(text, "\n{}", summaries.join("\n"));
    if stopped_early {
        let _ = write!(
            text,
            "\nstopped early at the time limit of {} s: the results are partial; narrow `path`",
            config.time_limit_secs
        );
    }
    if total == 0
        && let Some(note) = scopes::lowercase_metavariables(&args.pattern)
    {
        let _ = write!(text, "\n{note}");
    }
    if total == 0 {
        for (scope, compiled) in &scopes {
            let swallowed = pattern::swallowed_metavars(&args.pattern, compiled);
            if swallowed.is_empty() {
                continue;
            }
            let one = swallowed.len() == 1;
            let _ = write!(
                text,
                "\nnote: {} {} not parsed as {}: the {} grammar read {} as part of other code (a token, identifier or string), so the pattern cannot bind {} and matches that text only literally. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)",
                swallowed.join(", "),
                if one { "was" } else { "were" },
                if one {
                    "a metavariable"
                } else {
                    "metavariables"
                },
                scope.lang.id(),
                if one { "it" } else { "them" },
                if one { "it" } else { "them" },
            );
        }
    }
    let languages: Vec<&str> = runs.iter().map(|(l, _, _)| l.id()).collect();
    let structured = json!({
        "language": languages.join(", "),
        "context": scopes.iter().map(|(_, c)| c.context.as_str()).collect::<Vec<_>>().join("; "),
        "understood": scopes.iter().map(|(s, c)| json!({"language": s.lang.id(), "language_from": s.lang_from, "context": c.context, "node_kind": c.kind})).collect::<Vec<_>>(),
        "total": total,
        "shown": shown,
        "more": total - shown,
        "files_matched": files_matched,
        "matches": matches,
        "stats": if runs.len() == 1 { json!(runs[0].2.stats) } else { json!(runs.iter().map(|(l, _, r)| json!({"language": l.id(), "stats": r.stats})).collect::<Vec<_>>()) },
    });
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// One match as the result lists it: its place, its lines (escaped and clipped when found),
/// and its captures (clipped when found, escaped here; a multi-line one as its first line).
fn render(text: &mut String, m: &engine::Match) {
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
