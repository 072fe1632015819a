//! `ast_edit`: a rewrite checked (one language, every metavariable bound), computed over the
//! scope and staged for `resolve` — never written — as an [`EditReport`].

use crate::engine::{self, Budget};
use crate::error::AstGrepError;
use crate::shown::escape;
use crate::{Shared, blocking, pattern, scopes, staged};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::FileChange;
use agent_tier::{BoxError, CallContext, ResourceKey, RoomId, Tier, Tool, ToolOutput};
use ast_grep_core::replacer::TemplateFix;
use serde::Deserialize;
use std::sync::Arc;

pub(crate) mod report;

use report::{EditCall, EditReport};

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    /// As for ast_grep.
    pub pattern: String,
    /// Replacement template.
    pub rewrite: String,
    /// As for ast_grep.
    #[serde(default)]
    pub path: Option<String>,
    /// As for ast_grep, but over a directory where several languages accept the pattern, required.
    #[serde(default)]
    pub language: Option<String>,
}

pub(crate) struct AstEditTool(pub(crate) Arc<Shared>);

impl Tool for AstEditTool {
    type Args = AstEditArgs;

    fn name(&self) -> &str {
        "ast_edit"
    }
    fn hints(&self) -> agent_tier::Hints {
        // It only stages a proposal; `resolve` writes.
        agent_tier::Hints {
            read_only: true,
            destructive: false,
            idempotent: false,
            open_world: false,
        }
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn description(&self) -> String {
        "Rewrite code by its syntax shape, across files (one place: edit; renaming a symbol: \
         lsp_rename). Matches as ast_grep; in `rewrite`, `$X` and `$$$X` stand for what they \
         captured, and multi-line text keeps the site's indentation. Where matches overlap, the \
         outermost is rewritten. Nothing is written: you get a diff and an edit_id for resolve \
         (accept or discard)."
            .to_string()
    }

    fn resource_key(&self) -> ResourceKey {
        staged::RESOURCE
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: AstEditArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let shared = self.0.clone();
        let room = cx.room();
        let report = blocking(&self.0.config, move |b| edit(&shared, &room, args, b)).await?;
        Ok(ToolOutput::report(&report))
    }
}

/// Compile the pattern for one language, check the rewrite binds nothing the pattern does not,
/// compute the rewrite and stage the files it changes in `room`.
fn edit(
    shared: &Shared,
    room: &RoomId,
    args: AstEditArgs,
    budget: &Budget,
) -> Result<EditReport, AstGrepError> {
    let config = &shared.config;
    let (mut scopes, _) = scopes::compiled_scopes(
        &shared.root,
        args.path.as_deref(),
        args.language.as_deref(),
        &args.pattern,
    )?;
    // A rewrite never guesses the language: several that accept the pattern are a refusal.
    if scopes.len() > 1 {
        return Err(AstGrepError::AmbiguousLanguage {
            langs: scopes
                .iter()
                .map(|(s, _)| s.lang.id())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let Some((scope, compiled)) = scopes.pop() else {
        return Err(AstGrepError::EmptyPattern);
    };
    let bound_list = || {
        if compiled.vars.is_empty() {
            "none".to_string()
        } else {
            compiled
                .vars
                .iter()
                .map(|v| format!("${v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    // A `$B` the grammar read as part of a token would never bind: the rewrite would silently
    // do nothing (or the wrong thing) there.
    let swallowed = pattern::swallowed_metavars(&args.pattern, &compiled);
    if !swallowed.is_empty() {
        let one = swallowed.len() == 1;
        return Err(AstGrepError::SwallowedMetavar {
            vars: swallowed.join(", "),
            them: if one { "it" } else { "them" },
            they: if one { "it" } else { "they" },
            bound: bound_list(),
        });
    }
    let fixer = match TemplateFix::try_new(&args.rewrite, &scope.lang) {
        Ok(f) => f,
        Err(e) => match e {},
    };
    let mut unbound: Vec<&str> = fixer
        .used_vars()
        .into_iter()
        .filter(|v| !compiled.vars.iter().any(|b| b == v))
        .collect();
    unbound.sort_unstable();
    if let Some(var) = unbound.first() {
        return Err(AstGrepError::UnboundRewriteVar {
            var: format!("${var}"),
            bound: bound_list(),
        });
    }
    let (rewrites, stats) = engine::rewrite(
        &scope,
        &compiled,
        &fixer,
        engine::RewriteBound::of(&args.rewrite),
        config,
        &shared.cache,
        budget,
    )
    .map_err(|t| AstGrepError::RewriteTooLarge {
        what: t
            .file
            .map_or_else(|| "the files".to_string(), |f| escape(&f).into_owned()),
        bytes: t.bytes,
        cap: t.cap,
    })?;
    if stats.stopped_early {
        return Err(AstGrepError::TimeLimit {
            secs: config.time_limit_secs,
            searched: stats.files_searched,
        });
    }
    let unchanged: usize = rewrites
        .iter()
        .filter(|r| r.old == r.new)
        .map(|r| r.replacements)
        .sum();
    let files: Vec<engine::FileRewrite> = rewrites.into_iter().filter(|r| r.old != r.new).collect();
    let mut call = EditCall {
        pattern: args.pattern,
        language: scope.lang.id(),
        context: compiled.context,
        unchanged,
        max_file_bytes: config.max_file_bytes,
        max_diff_lines: config.max_diff_lines,
        rewrites: Vec::new(),
    };
    if files.is_empty() {
        return Ok(EditReport::unchanged(stats, call));
    }

    let replacements: usize = files.iter().map(|f| f.replacements).sum();
    let inner: usize = files.iter().map(|f| f.inner_skipped).sum();
    let broken: Vec<String> = files
        .iter()
        .filter_map(|f| {
            f.broken
                .as_ref()
                .map(|b| escape(&format!("{} ({b})", f.rel)).into_owned())
        })
        .collect();
    let changes: Vec<FileChange> = files
        .iter()
        .map(|f| FileChange {
            path: f.path.clone(),
            expected: Some(f.old.clone().into_bytes()),
            new: Some(f.new.clone().into_bytes()),
        })
        .collect();
    let rels: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
    let id = shared.edits.stage(
        room,
        staged::Staged {
            changes,
            files: rels.clone(),
            replacements,
        },
        config.staged_bytes,
    )?;
    call.rewrites = files;
    Ok(EditReport {
        edit_id: Some(id),
        replacements,
        inner_matches_left: Some(inner),
        files: rels,
        no_longer_parse: Some(broken),
        stats,
        call,
    })
}
