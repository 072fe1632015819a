//! The crate's error types: a tool call's ([`AstGrepError`]) and the identifier witness's
//! ([`WitnessError`]).

use crate::lang::Lang;
use agent_tier::workspace::FsError;
use std::path::PathBuf;

/// Why an `ast_grep`, `ast_edit` or `resolve` call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AstGrepError {
    /// `language` names no bundled grammar.
    #[error("unknown `language` `{given}`; valid ids: {valid}")]
    UnknownLanguage {
        /// The id given.
        given: String,
        /// The valid language ids.
        valid: String,
    },

    /// `path` is a directory and the call needs `language`.
    #[error("`path` `{path}` is a directory, so `language` is required; valid ids: {valid}")]
    NeedLanguage {
        /// The `path` argument.
        path: String,
        /// The valid language ids.
        valid: String,
    },

    /// No file under `path` is in a bundled language.
    #[error(
        "no file of a bundled language is under `{path}`; give `path` to a file or directory with code, or `language`, one of: {valid}"
    )]
    NoLanguagePresent {
        /// The `path` argument.
        path: String,
        /// The valid language ids.
        valid: String,
    },

    /// The pattern parses in none of the languages present.
    #[error(
        "`pattern` `{pattern}` does not parse in any language present here ({tried}); the first error: {first}"
    )]
    NoLanguageAccepts {
        /// The pattern.
        pattern: String,
        /// The languages tried.
        tried: String,
        /// The first language's parse error.
        first: String,
    },

    /// A rewrite's pattern parses in more than one language present.
    #[error(
        "`pattern` parses in several languages present here ({langs}); a rewrite never guesses: pass `language`"
    )]
    AmbiguousLanguage {
        /// Those languages.
        langs: String,
    },

    /// Another error, with a hint that follows it.
    #[error("{inner}\n{hint}")]
    Hinted {
        /// The error.
        inner: Box<AstGrepError>,
        /// The hint, on the line after the error.
        hint: String,
    },

    /// `path` is not a valid glob.
    #[error("`path` `{glob}` is not a valid glob: {detail}")]
    BadGlob {
        /// The glob.
        glob: String,
        /// Why it is invalid.
        detail: String,
    },

    /// A file's extension is of no bundled language.
    #[error(
        "cannot infer the language of `{path}` from its extension; pass `language`, one of: {valid}"
    )]
    CannotInfer {
        /// The file.
        path: String,
        /// The valid language ids.
        valid: String,
    },

    /// The pattern is empty.
    #[error("`pattern` is empty; give a code snippet such as `foo($X)`")]
    EmptyPattern,

    /// The pattern is nothing but a `$$$` run.
    #[error(
        "`pattern` `{pattern}` is only a `$$$` run, which matches a list rather than one node; wrap it in code, e.g. `foo($$$ARGS)`"
    )]
    BarePattern {
        /// The pattern.
        pattern: String,
    },

    /// The pattern parses in none of a language's contexts.
    #[error(
        "unparseable pattern: `{pattern}` is not valid {language} in any context; contexts tried:\n  - {tried}\nwrite one complete {language} expression, statement, member or declaration; metavariables are `$NAME`, `$$$NAME` and `$_`"
    )]
    UnparseablePattern {
        /// The language.
        language: &'static str,
        /// The pattern.
        pattern: String,
        /// The contexts tried, one a line.
        tried: String,
    },

    /// The pattern nests deeper than the limit.
    #[error(
        "`pattern` nests {depth} levels deep as {language} syntax; the limit is {limit} levels. Match the inner code with a metavariable instead of spelling out every level (`f($X)` finds each call however deep)"
    )]
    PatternTooDeep {
        /// The language.
        language: &'static str,
        /// How deep it nests.
        depth: usize,
        /// The most levels allowed.
        limit: usize,
    },

    /// The rewrite would write more than a rewrite may (computed before it is built).
    #[error(
        "the rewrite would make {what} {bytes} bytes or more, past the {cap} bytes one ast_edit \
         may write; nothing was staged: narrow `path`, or make `rewrite` repeat its captures less"
    )]
    RewriteTooLarge {
        /// A file (`src/x.py`) or `the files`.
        what: String,
        /// How large it would be, at least.
        bytes: u64,
        /// The bound it passes.
        cap: u64,
    },

    /// The conversation's pending edits would hold more than the cap.
    #[error(
        "nothing was staged: this edit holds {adding} bytes and the conversation's pending edits already hold {held}, past the {cap}-byte cap on pending edits; resolve (accept or discard) some of {pending} first, or narrow `path`"
    )]
    StagedFull {
        /// Bytes the pending edits hold.
        held: u64,
        /// Bytes this edit would add.
        adding: u64,
        /// The cap.
        cap: u64,
        /// The pending edits' ids.
        pending: String,
    },

    /// `rewrite` uses a metavariable the pattern does not bind.
    #[error("`rewrite` uses `{var}`, which the pattern does not bind; the pattern binds: {bound}")]
    UnboundRewriteVar {
        /// The metavariable.
        var: String,
        /// The metavariables the pattern binds.
        bound: String,
    },

    /// The grammar read metavariables as part of other code, so they never bind.
    #[error(
        "`pattern` names {vars}, but the grammar read {them} as part of other code (a token, identifier or string), so {they} would never bind; the pattern binds: {bound}. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)"
    )]
    SwallowedMetavar {
        /// The metavariables.
        vars: String,
        /// `it` or `them`, for the message.
        them: &'static str,
        /// `it` or `they`, for the message.
        they: &'static str,
        /// The metavariables the pattern binds.
        bound: String,
    },

    /// A path was refused or could not be read.
    #[error(transparent)]
    Path(#[from] FsError),

    /// Walking the files under a path failed.
    #[error("could not walk `{path}`: {detail}")]
    Walk {
        /// The path.
        path: String,
        /// Why.
        detail: String,
    },

    /// `edit_id` names no staged edit.
    #[error("unknown `edit_id` `{given}`; {known}")]
    UnknownEdit {
        /// The id given.
        given: String,
        /// The staged edits' ids, as the message lists them.
        known: String,
    },

    /// `dry_run` with `discard`, which writes nothing anyway.
    #[error(
        "`dry_run` checks an `accept` (the problems it would bring); `discard` writes nothing anyway — leave out `dry_run`, or use `accept`"
    )]
    DryDiscard,

    /// The edit was already accepted or discarded.
    #[error("`edit_id` `{id}` was already {how}; stage a new change with ast_edit")]
    AlreadyResolved {
        /// The edit's id.
        id: String,
        /// `accepted` or `discarded`.
        how: &'static str,
    },

    /// Files the edit writes changed after it was staged; it stays staged.
    #[error(
        "rejected `{id}`: {files} changed since the edit was staged; nothing was written. The edit stays staged: discard it and call ast_edit again to stage a fresh change"
    )]
    Stale {
        /// The edit's id.
        id: String,
        /// The files that changed.
        files: String,
    },

    /// Writing an accepted edit failed; it stays staged.
    #[error(
        "could not apply `{id}`: {detail}. The edit stays staged: fix the cause and accept again, or discard it"
    )]
    WriteFailed {
        /// The edit's id.
        id: String,
        /// Why.
        detail: String,
    },

    /// `ast_edit` ran past its time limit and staged nothing.
    #[error(
        "ast_edit stopped at the time limit of {secs} s after {searched} files; nothing was staged. Narrow `path` and try again"
    )]
    TimeLimit {
        /// The limit, in seconds.
        secs: u64,
        /// How many files it searched.
        searched: usize,
    },

    /// A bug: what went wrong.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Why the identifier witness cannot search near a file.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    /// No bundled grammar reads the file.
    #[error("no grammar for `{}`; the witness knows {}", .path.display(), Lang::ids())]
    NoGrammar {
        /// The file.
        path: PathBuf,
    },
    /// No language server answers for the file's language: it has no identifiers to witness.
    #[error("{language} files have no identifiers to witness")]
    NoIdentifiers {
        /// The language's id.
        language: &'static str,
    },
}
