//! The crate's error types: a call's ([`LspError`]) and a project checker's ([`CheckerError`]),
//! each message saying what to do next.

/// Everything that can go wrong in this family; each message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    /// An argument is invalid: the message says which and what would be valid.
    #[error("{0}")]
    Arg(String),
    /// The project is not trusted, nothing can contain its servers, and the person said no.
    #[error("{0}")]
    Untrusted(String),
    /// A path was refused, or a file could not be read or written.
    #[error("{0}")]
    Fs(#[from] agent_tier::workspace::FsError),
    /// No usable language server serves the file.
    #[error("no language server for `{file}`: {detail}")]
    NoServer {
        /// The file.
        file: String,
        /// Why none does.
        detail: String,
    },
    /// A language server could not be started.
    #[error("could not start {server} for {root}: {detail}; stderr tail: {stderr}")]
    Start {
        /// The server's id.
        server: String,
        /// The root it was started for.
        root: String,
        /// Why it failed.
        detail: String,
        /// The tail of the server's stderr.
        stderr: String,
    },
    /// A language server exited while handling a request.
    #[error(
        "{server} exited while handling `{method}` ({status}); the next call restarts it; stderr tail: {stderr}"
    )]
    Crashed {
        /// The server's id.
        server: String,
        /// The LSP method.
        method: String,
        /// How it exited.
        status: String,
        /// The tail of the server's stderr.
        stderr: String,
    },
    /// A language server did not answer a request in time.
    #[error(
        "{server} did not answer `{method}` within {secs} s; try again, or `reload` the server if it keeps happening"
    )]
    Timeout {
        /// The server's id.
        server: String,
        /// The LSP method.
        method: String,
        /// The timeout, in seconds.
        secs: u64,
    },
    /// A language server answered a request with an error.
    #[error("{server} answered `{method}` with error {code}: {message}")]
    Rpc {
        /// The server's id.
        server: String,
        /// The LSP method.
        method: String,
        /// The error's code.
        code: i64,
        /// The error's message.
        message: String,
    },
    /// A language server sent a message of another shape than its method declares (or one
    /// of ours could not be written).
    #[error(
        "{server} sent a malformed {what} for `{method}`: {detail}; try again, or `reload` the server if it keeps happening"
    )]
    Malformed {
        /// The server's id.
        server: String,
        /// The LSP method.
        method: String,
        /// Which message: `reply`, `notification` or `params`.
        what: &'static str,
        /// What was wrong: the field and what it should have been.
        detail: String,
    },
    /// A file could not be read.
    #[error("could not read `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// Why a project checker (`diagnostics` with `"*"`) has no findings for a root; each message
/// says what failed and, where there is one, what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckerError {
    /// None of its programs resolves.
    #[error("{checker} not found ({programs}; looked in the project and $PATH)")]
    NotFound {
        /// The checker.
        checker: &'static str,
        /// Its programs, comma-separated.
        programs: String,
    },
    /// Its program could not be started.
    #[error("could not start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for it failed.
    #[error("{checker} failed: {source}")]
    Wait {
        /// The checker.
        checker: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// It ran past the timeout and was killed.
    #[error("{checker} did not finish within {secs} s; run it yourself to see why")]
    TimedOut {
        /// The checker.
        checker: &'static str,
        /// The timeout, in seconds.
        secs: u64,
    },
    /// It failed and printed nothing that reads as a finding.
    #[error(
        "{checker} failed ({status}) without findings it could parse; its stderr ends: {stderr}"
    )]
    Unparsed {
        /// The checker.
        checker: &'static str,
        /// How it exited.
        status: String,
        /// Its last lines of stderr.
        stderr: String,
    },
    /// The compilation database could not be read.
    #[error("cannot read {path}: {source}")]
    Database {
        /// The database.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The compilation database is not one.
    #[error("{path} is not a compilation database: {source}")]
    NotDatabase {
        /// The database.
        path: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A translation unit's compiler could not be started.
    #[error("could not start `{program}`: {source}")]
    UnitSpawn {
        /// The compiler.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// A translation unit's compiler ran past the timeout.
    #[error("`{program}` did not finish within {secs} s")]
    UnitTimedOut {
        /// The compiler.
        program: String,
        /// The timeout, in seconds.
        secs: u64,
    },
    /// Waiting for a translation unit's compiler failed.
    #[error("`{program}` failed: {source}")]
    UnitWait {
        /// The compiler.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}
