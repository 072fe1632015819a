//! The errors of reading and applying a patch and of reading a file pattern, each naming what
//! failed (the patch's line, the hunk or chunk, the argument) and what to do next.

/// Why a patch (a unified diff or a `*** Begin Patch` envelope) could not be read. Lines are
/// the patch's, 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ParseError {
    /// A `@@` line that is not `@@ -l,s +l,s @@`.
    #[error("`patch` line {line}: malformed hunk header `{text}`; expected `@@ -l,s +l,s @@`")]
    HunkHeader { line: usize, text: String },
    /// A hunk header with no body line after it.
    #[error(
        "`patch` line {line}: hunk `{header}` has no lines (every line of a hunk starts with ' ', '-' or '+')"
    )]
    EmptyHunk { line: usize, header: String },
    /// A `---` file header without its `+++` line.
    #[error("`patch` line {line}: `---` must be followed by a `+++` line")]
    LoneOldHeader { line: usize },
    /// A hunk before the first file header.
    #[error("`patch` line {line}: hunk before any `---`/`+++` file header")]
    HunkBeforeHeader { line: usize },
    /// A hunk line that belongs to no hunk.
    #[error(
        "`patch` line {line}: `{text}` is outside every hunk (a hunk's lines follow its `@@` header without a line of other text between them); nothing was written"
    )]
    OutsideHunk { line: usize, text: String },
    /// No `--- a/path` / `+++ b/path` pair anywhere.
    #[error("`patch` contains no file header (`--- a/path` / `+++ b/path`); give a unified diff")]
    NoFileHeader,
    /// An envelope without its opening line.
    #[error("`patch` has no `*** Begin Patch` line")]
    NoBegin,
    /// A line of an envelope's update chunk that starts with none of ` `, `-`, `+`.
    #[error(
        "`patch` line {line}: `{text}` in an update of `{path}`: every chunk line starts with ' ', '-' or '+'"
    )]
    ChunkLine {
        line: usize,
        text: String,
        path: String,
    },
    /// An envelope's update with no chunk line and no move.
    #[error("`patch` line {line}: the update of `{path}` changes nothing")]
    EmptyUpdate { line: usize, path: String },
    /// An envelope line that opens no operation.
    #[error(
        "`patch` line {line}: expected `*** Add File: `, `*** Update File: `, `*** Delete File: ` or `*** End Patch`, found `{text}`"
    )]
    UnknownOperation { line: usize, text: String },
    /// An envelope without its closing line.
    #[error("`patch` has no `*** End Patch` line; nothing was written")]
    NoEnd,
    /// An envelope with nothing between its Begin and End lines.
    #[error("`patch` holds no file operation between its Begin and End lines")]
    NoOperation,
}

/// Why a hunk or an envelope's chunk does not apply to its file (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ApplyError {
    /// Its context and `-` lines match several places under a tolerance.
    #[error(
        "{what}: its context and `-` lines match {count} places {level}, so it was not applied ({}); add context lines so that it matches one place",
        .places.join("; ")
    )]
    Ambiguous {
        /// `hunk 2 (at line 14)`, `chunk 1`.
        what: String,
        /// How the lines were compared (a `Tolerance`'s description).
        level: &'static str,
        count: usize,
        /// The first places: `line 3: `text``.
        places: Vec<String>,
    },
    /// A hunk's context and `-` lines are nowhere in the file.
    #[error(
        "hunk {hunk} (at line {line}) does not apply: its context and `-` lines are not in the file (it expected, in order: {})",
        .expected.join(", ")
    )]
    HunkNotFound {
        hunk: usize,
        line: usize,
        /// Its first lines, quoted.
        expected: Vec<String>,
    },
    /// A chunk's `@@ <line>` anchor is not in the file after the previous chunk.
    #[error("chunk {chunk}: its `@@ {anchor}` line is not in the file (after line {after})")]
    AnchorNotFound {
        chunk: usize,
        anchor: String,
        after: usize,
    },
    /// A chunk's context and `-` lines are not in the file after the previous chunk.
    #[error(
        "chunk {chunk}: these context and `-` lines are not in the file{}:\n{}",
        if *.after > 0 { format!(" after line {}", .after) } else { String::new() },
        .lines.join("\n")
    )]
    ChunkNotFound {
        chunk: usize,
        /// The line the search started after (0: the top).
        after: usize,
        lines: Vec<String>,
    },
    /// A chunk without anchor whose lines occur at several places.
    #[error(
        "chunk {chunk}: its context and `-` lines occur at lines {}; add context lines or an `@@ <line>` anchor so it matches one place",
        .at.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
    )]
    ChunkRepeats { chunk: usize, at: Vec<usize> },
    /// A deletion with lines other than `-`.
    #[error("a deletion (`+++ /dev/null`) may contain only `-` lines")]
    DeletionKeepsLines,
    /// A deletion whose `-` lines are not the whole file.
    #[error(
        "the deletion's `-` lines are not the whole file ({left} line(s) of it are not in the patch)"
    )]
    DeletionIncomplete { left: usize },
}

/// Why a `glob` pattern (of `glob`, or `grep`'s `glob`) cannot be used. `arg` names the argument;
/// `pattern` is the pattern as given, clipped for the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PatternError {
    /// Nothing left of the pattern.
    #[error("`{arg}` is empty; give a pattern such as `*.py` or `src/**/*.rs`")]
    Empty { arg: String },
    /// An absolute pattern, or one with `..`.
    #[error(
        "`{arg}` = `{pattern}` leaves the folder searched; give a pattern relative to it (`path` names the folder)"
    )]
    Leaves { arg: String, pattern: String },
    /// Not a glob `globset` can compile.
    #[error("`{arg}` = `{pattern}` is not a valid glob: {kind}")]
    Invalid {
        arg: String,
        pattern: String,
        kind: globset::ErrorKind,
    },
}
