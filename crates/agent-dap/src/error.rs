//! The one error type of this crate.

/// Why a `debug` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DapError {
    /// An argument is missing or invalid for the operation.
    #[error("`{op}` needs `{arg}`: {detail}")]
    Argument {
        /// The operation.
        op: &'static str,
        /// The argument.
        arg: &'static str,
        /// What is wrong, and what would be valid.
        detail: String,
    },
    /// Arguments given together that cannot be meant together; `detail` names the one fix.
    #[error("`{op}`: {detail}")]
    Combination {
        /// The operation.
        op: &'static str,
        /// Which arguments clash, and the fix.
        detail: String,
    },
    /// A path argument is outside the workspace or missing.
    #[error(transparent)]
    Path(#[from] agent_tier::workspace::FsError),
    /// No session is running for this conversation.
    #[error("no debug session is running{ended}; call `launch` (or `attach`) first")]
    NoSession {
        /// How the last session ended, as the message shows it in parentheses; empty if none did.
        ended: String,
    },
    /// A session is already live.
    #[error(
        "a debug session is already live: {live}; call `terminate` first if you want a new one (it is never replaced silently)"
    )]
    AlreadyLive {
        /// The live session, described.
        live: String,
    },
    /// The adapter for the program cannot start here.
    #[error("the {adapter} adapter cannot start here: {why}; `adapters` lists what is usable")]
    Unusable {
        /// The adapter.
        adapter: &'static str,
        /// Why it cannot start.
        why: String,
    },
    /// Spawning or connecting to the adapter failed.
    #[error("could not start the {adapter} adapter (`{command}`): {detail}")]
    Spawn {
        /// The adapter.
        adapter: &'static str,
        /// The command that starts it.
        command: String,
        /// What failed.
        detail: String,
    },
    /// Building what a test launch runs failed.
    #[error("building the test failed (`{command}`): {detail}; fix the build and launch again")]
    Build {
        /// The build command.
        command: String,
        /// What failed.
        detail: String,
    },
    /// The adapter answered a request with an error.
    #[error("the adapter refused `{command}`: {message}")]
    Refused {
        /// The DAP request.
        command: &'static str,
        /// The adapter's error message.
        message: String,
    },
    /// The adapter answered a request, or sent an event, in a shape this crate does not read.
    #[error(
        "the adapter's `{command}` {what} is malformed: {detail}; the session goes on, but this cannot be answered: try another operation, or `terminate` and launch again"
    )]
    Malformed {
        /// The DAP request or event.
        command: &'static str,
        /// Which message: `reply`, `notification` (an event) or `params`.
        what: &'static str,
        /// What was wrong: the field and what was expected of it.
        detail: String,
    },
    /// The adapter did not answer in time.
    #[error(
        "the adapter did not answer `{command}` within {secs} s; the session may be wedged: call `status`, or `terminate` and launch again"
    )]
    Timeout {
        /// The DAP request.
        command: String,
        /// The timeout, in seconds.
        secs: u64,
    },
    /// The adapter's connection is closed.
    #[error(
        "the debug adapter is gone (its connection closed){detail}; the session is over: call `launch` again"
    )]
    AdapterGone {
        /// The tail of the adapter's stderr, as the message shows it; empty if it wrote none.
        detail: String,
    },
    /// An id the caller gave is not one the session knows.
    #[error("{what}")]
    Unknown {
        /// The whole message: the unknown id and the ones known.
        what: String,
    },
    /// The debuggee is not stopped, so the operation has nothing to look at.
    #[error(
        "the debuggee is {state}; `{op}` needs it stopped: call `pause`, or wait with `status`"
    )]
    NotStopped {
        /// The operation.
        op: &'static str,
        /// The debuggee's state, described.
        state: String,
    },
    /// The live adapter does not advertise a feature the call needs.
    #[error("the {adapter} adapter does not support {what}; {instead}")]
    Unsupported {
        /// The adapter.
        adapter: &'static str,
        /// The feature.
        what: &'static str,
        /// What to do instead.
        instead: &'static str,
    },
    /// Writing to or reading from the adapter failed.
    #[error("i/o with the debug adapter failed: {0}")]
    Io(#[from] std::io::Error),
}

impl From<agent_rpc::Malformed> for DapError {
    fn from(m: agent_rpc::Malformed) -> Self {
        DapError::Malformed {
            command: m.method,
            what: m.what,
            detail: m.detail,
        }
    }
}
