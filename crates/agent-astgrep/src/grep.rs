//! `ast_grep`: one search over one or several languages — the scopes planned, each language's
//! walk, and their matches merged in one order — as a [`GrepReport`].

use crate::engine::{self, Budget};
use crate::error::AstGrepError;
use crate::{Shared, blocking, pattern, scopes};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Tier, Tool, ToolOutput};
use serde::Deserialize;
use std::sync::Arc;

pub(crate) mod report;

use report::{GrepCall, GrepReport, LanguageStats, Understood, WalkStats};

/// Arguments of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepArgs {
    /// Code snippet with metavariables.
    pub pattern: String,
    /// File, directory or glob (`src/**/*.py`); default: everything. `.gitignore` is honoured.
    #[serde(default)]
    pub path: Option<String>,
    /// bash, c, c_sharp, cpp, css, dart, go, html, java, javascript, json, kotlin, lua, php,
    /// python, ruby, rust, swift, toml, tsx, typescript, yaml. Default: the file's or glob's
    /// extension; over a directory, every bundled language whose grammar accepts the pattern.
    #[serde(default, alias = "lang")]
    pub language: Option<String>,
    /// Matches listed (default 50); the rest are counted.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_results: Option<usize>,
    /// Instead of searching, show the syntax tree the pattern parsed to and, when `path` is one
    /// file, that file's: for a pattern that finds nothing.
    #[serde(default)]
    pub tree: bool,
}

pub(crate) struct AstGrepTool(pub(crate) Arc<Shared>);

impl Tool for AstGrepTool {
    type Args = AstGrepArgs;

    fn name(&self) -> &str {
        "ast_grep"
    }
    fn hints(&self) -> agent_tier::Hints {
        agent_tier::Hints::query()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> String {
        "Find code by its syntax shape, never text in strings or comments (what a symbol means: \
         lsp). The pattern is parsed like the files, so spacing and line breaks do not matter. \
         Metavariables are `$` + UPPERCASE: `$X` one node, `$$$ARGS` a run of sibling nodes \
         (maybe none), `$_` one node unbound; `$x` is literal. A repeated metavariable must \
         match the same code. Example: `if ($X != null) $X.dispose()`."
            .to_string()
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: AstGrepArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        let shared = self.0.clone();
        if args.tree {
            let report = blocking(&self.0.config, move |_| tree(&shared, args)).await?;
            return Ok(ToolOutput::report(&report));
        }
        let report = blocking(&self.0.config, move |b| grep(&shared, args, b)).await?;
        Ok(ToolOutput::report(&report))
    }
}

/// The trees of `tree: true`: of the pattern in the (first) language that accepts it, and of
/// `path` when it is one file.
fn tree(shared: &Shared, args: AstGrepArgs) -> Result<crate::tree::TreeReport, AstGrepError> {
    let (scopes, _) = scopes::compiled_scopes(
        &shared.root,
        args.path.as_deref(),
        args.language.as_deref(),
        &args.pattern,
    )?;
    let (scope, compiled) = scopes.first().ok_or(AstGrepError::EmptyPattern)?;
    crate::tree::tree(scope, compiled, &args.pattern)
}

/// Search every scope the call names (one language, or each language present that accepts the
/// pattern), keeping the first `max_results` matches over all of them.
fn grep(shared: &Shared, args: AstGrepArgs, budget: &Budget) -> Result<GrepReport, AstGrepError> {
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
            let found = engine::search(scope, compiled, config, &shared.cache, budget, max);
            (scope.lang, found)
        })
        .collect();
    let mut matches: Vec<engine::Match> = Vec::new();
    let mut files_matched = 0;
    let mut total = 0;
    for (_, r) in &runs {
        matches.extend(r.matches.iter().cloned());
        files_matched += r.files_matched;
        total += r.total;
    }
    // Several languages: one order over all of them (each run is already in this order, and
    // holds its first `max`, so the first `max` of them all are here).
    if runs.len() > 1 {
        matches.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    }
    matches.truncate(max);
    let shown = matches.len();
    let languages: Vec<&str> = runs.iter().map(|(l, _)| l.id()).collect();
    let contexts: Vec<&str> = scopes.iter().map(|(_, c)| c.context.as_str()).collect();
    let understood = scopes
        .iter()
        .map(|(s, c)| Understood {
            language: s.lang.id(),
            language_from: s.lang_from,
            context: c.context.clone(),
            node_kind: c.kind.clone(),
        })
        .collect();
    let swallowed = scopes
        .iter()
        .map(|(s, c)| (s.lang.id(), pattern::swallowed_metavars(&args.pattern, c)))
        .filter(|(_, vars)| !vars.is_empty())
        .collect();
    let stats = match runs.as_slice() {
        [(_, r)] => WalkStats::One(r.stats.clone()),
        _ => WalkStats::PerLanguage(
            runs.into_iter()
                .map(|(l, r)| LanguageStats {
                    language: l.id(),
                    stats: r.stats,
                })
                .collect(),
        ),
    };
    // A search that found nothing says what the ignore rules hid from it (a source tree whose
    // ignore files cover its code must not read as "no match").
    let left_out = if total == 0 {
        scopes
            .first()
            .filter(|(s, _)| s.target.is_dir())
            .and_then(|(s, _)| agent_tier::ignore_rules::left_out_note(&s.target, true))
            .map(|note| format!("{note}; name one in `path` to search it"))
    } else {
        None
    };
    Ok(GrepReport {
        left_out,
        language: languages.join(", "),
        context: contexts.join("; "),
        understood,
        total,
        shown,
        more: total - shown,
        files_matched,
        matches,
        stats,
        call: GrepCall {
            lowercase_note: scopes::lowercase_metavariables(&args.pattern),
            pattern: args.pattern,
            rejected: rejected.iter().map(|(l, _)| l.id()).collect(),
            max_results: max,
            max_file_bytes: config.max_file_bytes,
            time_limit_secs: config.time_limit_secs,
            swallowed,
        },
    })
}
