//! The crate's one error type.

use agent_tier::workspace::FsError;

/// Why an `ast_grep`, `ast_edit` or `resolve` call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AstGrepError {
    #[error("unknown `language` `{given}`; valid ids: {valid}")]
    UnknownLanguage { given: String, valid: String },

    #[error("`path` `{path}` is a directory, so `language` is required; valid ids: {valid}")]
    NeedLanguage { path: String, valid: String },

    #[error(
        "no file of a bundled language is under `{path}`; give `path` to a file or directory with code, or `language`, one of: {valid}"
    )]
    NoLanguagePresent { path: String, valid: String },

    #[error(
        "`pattern` `{pattern}` does not parse in any language present here ({tried}); the first error: {first}"
    )]
    NoLanguageAccepts {
        pattern: String,
        tried: String,
        first: String,
    },

    #[error(
        "`pattern` parses in several languages present here ({langs}); a rewrite never guesses: pass `language`"
    )]
    AmbiguousLanguage { langs: String },

    #[error("{inner}\n{hint}")]
    Hinted {
        inner: Box<AstGrepError>,
        hint: String,
    },

    #[error("`path` `{glob}` is not a valid glob: {detail}")]
    BadGlob { glob: String, detail: String },

    #[error(
        "cannot infer the language of `{path}` from its extension; pass `language`, one of: {valid}"
    )]
    CannotInfer { path: String, valid: String },

    #[error("`pattern` is empty; give a code snippet such as `foo($X)`")]
    EmptyPattern,

    #[error(
        "`pattern` `{pattern}` is only a `$$$` run, which matches a list rather than one node; wrap it in code, e.g. `foo($$$ARGS)`"
    )]
    BarePattern { pattern: String },

    #[error(
        "unparseable pattern: `{pattern}` is not valid {language} in any context; contexts tried:\n  - {tried}\nwrite one complete {language} expression, statement, member or declaration; metavariables are `$NAME`, `$$$NAME` and `$_`"
    )]
    UnparseablePattern {
        language: &'static str,
        pattern: String,
        tried: String,
    },

    #[error(
        "`pattern` nests {depth} levels deep as {language} syntax; the limit is {limit} levels. Match the inner code with a metavariable instead of spelling out every level (`f($X)` finds each call however deep)"
    )]
    PatternTooDeep {
        language: &'static str,
        depth: usize,
        limit: usize,
    },

    #[error("`rewrite` uses `{var}`, which the pattern does not bind; the pattern binds: {bound}")]
    UnboundRewriteVar { var: String, bound: String },

    #[error(
        "`pattern` names {vars}, but the grammar read {them} as part of other code (a token, identifier or string), so {they} would never bind; the pattern binds: {bound}. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)"
    )]
    SwallowedMetavar {
        vars: String,
        them: &'static str,
        they: &'static str,
        bound: String,
    },

    #[error(transparent)]
    Path(#[from] FsError),

    #[error("could not walk `{path}`: {detail}")]
    Walk { path: String, detail: String },

    #[error("unknown `edit_id` `{given}`; {known}")]
    UnknownEdit { given: String, known: String },

    #[error("`edit_id` `{id}` was already {how}; stage a new change with ast_edit")]
    AlreadyResolved { id: String, how: &'static str },

    #[error(
        "rejected `{id}`: {files} changed since the edit was staged; nothing was written. The edit stays staged: discard it and call ast_edit again to stage a fresh change"
    )]
    Stale { id: String, files: String },

    #[error(
        "could not apply `{id}`: {detail}. The edit stays staged: fix the cause and accept again, or discard it"
    )]
    WriteFailed { id: String, detail: String },

    #[error(
        "ast_edit stopped at the time limit of {secs} s after {searched} files; nothing was staged. Narrow `path` and try again"
    )]
    TimeLimit { secs: u64, searched: usize },

    #[error("internal error: {0}")]
    Internal(String),
}
