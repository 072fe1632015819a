//! The one error type of this crate.

/// Why a `debug` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DapError {
    /// An argument is missing or invalid for the operation.
    #[error("`{op}` needs `{arg}`: {detail}")]
    Argument {
        op: &'static str,
        arg: &'static str,
        detail: String,
    },
    /// Arguments given together that cannot be meant together; `detail` names the one fix.
    #[error("`{op}`: {detail}")]
    Combination { op: &'static str, detail: String },
    /// A path argument is outside the workspace or missing.
    #[error(transparent)]
    Path(#[from] agent_tier::workspace::FsError),
    /// No session is running for this conversation.
    #[error("no debug session is running{ended}; call `launch` (or `attach`) first")]
    NoSession { ended: String },
    /// A session is already live.
    #[error(
        "a debug session is already live: {live}; call `terminate` first if you want a new one (it is never replaced silently)"
    )]
    AlreadyLive { live: String },
    /// The adapter for the program cannot start here.
    #[error("the {adapter} adapter cannot start here: {why}; `adapters` lists what is usable")]
    Unusable { adapter: &'static str, why: String },
    /// Spawning or connecting to the adapter failed.
    #[error("could not start the {adapter} adapter (`{command}`): {detail}")]
    Spawn {
        adapter: &'static str,
        command: String,
        detail: String,
    },
    /// Building what a test launch runs failed.
    #[error("building the test failed (`{command}`): {detail}; fix the build and launch again")]
    Build { command: String, detail: String },
    /// The adapter answered a request with an error.
    #[error("the adapter refused `{command}`: {message}")]
    Refused { command: String, message: String },
    /// The adapter did not answer in time.
    #[error(
        "the adapter did not answer `{command}` within {secs} s; the session may be wedged: call `status`, or `terminate` and launch again"
    )]
    Timeout { command: String, secs: u64 },
    /// The adapter's connection is closed.
    #[error(
        "the debug adapter is gone (its connection closed){detail}; the session is over: call `launch` again"
    )]
    AdapterGone { detail: String },
    /// An id the caller gave is not one the session knows.
    #[error("{what}")]
    Unknown { what: String },
    /// The debuggee is not stopped, so the operation has nothing to look at.
    #[error(
        "the debuggee is {state}; `{op}` needs it stopped: call `pause`, or wait with `status`"
    )]
    NotStopped { op: &'static str, state: String },
    /// The live adapter does not advertise a feature the call needs.
    #[error("the {adapter} adapter does not support {what}; {instead}")]
    Unsupported {
        adapter: &'static str,
        what: &'static str,
        instead: &'static str,
    },
    /// Writing to or reading from the adapter failed.
    #[error("i/o with the debug adapter failed: {0}")]
    Io(#[from] std::io::Error),
}
