/// Everything that can go wrong in this family; each message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    #[error("{0}")]
    Arg(String),
    #[error("{0}")]
    Fs(#[from] agent_tier::workspace::FsError),
    #[error("no language server for `{file}`: {detail}")]
    NoServer { file: String, detail: String },
    #[error("could not start {server} for {root}: {detail}; stderr tail: {stderr}")]
    Start {
        server: String,
        root: String,
        detail: String,
        stderr: String,
    },
    #[error(
        "{server} exited while handling `{method}` ({status}); the next call restarts it; stderr tail: {stderr}"
    )]
    Crashed {
        server: String,
        method: String,
        status: String,
        stderr: String,
    },
    #[error(
        "{server} did not answer `{method}` within {secs} s; try again, or `reload` the server if it keeps happening"
    )]
    Timeout {
        server: String,
        method: String,
        secs: u64,
    },
    #[error("{server} answered `{method}` with error {code}: {message}")]
    Rpc {
        server: String,
        method: String,
        code: i64,
        message: String,
    },
    #[error("could not read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}
