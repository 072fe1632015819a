//! The errors of this crate: a call's ([`VibeError`]), a backend's that cannot start a tier
//! ([`Unavailable`]), and a worker run's ([`RunError`]). Every message says what failed and
//! what to do next.

/// Why a `vibe_*` call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VibeError {
    /// No worker of that id in this conversation.
    #[error(
        "unknown worker id `{id}`; workers in this conversation: {known} (vibe_list shows them all)"
    )]
    UnknownWorker {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// The backend cannot start a worker of that tier.
    #[error("cannot spawn the worker: {0}")]
    Backend(#[from] Unavailable),
    /// An argument is unusable.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
}

/// Why a backend cannot start a worker of a tier ([`VibeBackend::check`](crate::VibeBackend::check)):
/// the message says what to configure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unavailable {
    /// No program is configured for the tier.
    #[error(
        "no worker program is configured for tier `{tier}` (tiers with a program: {configured}); use one of those, or have the host set `VibeConfig.{tier}` or the `{env}` environment variable"
    )]
    NotConfigured {
        /// The tier asked for.
        tier: &'static str,
        /// The tiers that have a program (`none`, `fast`, `fast, good`).
        configured: String,
        /// The environment variable that configures the tier.
        env: &'static str,
    },
    /// The tier's program is neither on `PATH` nor in the working folder.
    #[error(
        "the worker program for tier `{tier}`, `{program}`, is not on PATH or in {folder}; install it or configure another"
    )]
    NotFound {
        /// The tier asked for.
        tier: &'static str,
        /// The program configured for it.
        program: String,
        /// The folder workers start in.
        folder: String,
    },
    /// A harness backend's own reason.
    #[error("{0}")]
    Other(String),
}

/// How a worker run failed ([`VibeBackend::run`](crate::VibeBackend::run)); the message is the
/// worker's result, read by `vibe_wait`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// No program is configured for the worker's tier.
    #[error("no worker program is configured for tier `{tier}`")]
    NotConfigured {
        /// The worker's tier.
        tier: &'static str,
    },
    /// The program could not be started.
    #[error("cannot start the worker program `{command}`: {source}; check that it is installed")]
    Start {
        /// The command line.
        command: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The program's end could not be waited for.
    #[error("cannot wait for the worker program: {0}")]
    Wait(#[source] std::io::Error),
    /// The program ended unsuccessfully.
    #[error(
        "the worker program `{command}` {how}{}{}",
        section("stderr", .stderr),
        section("stdout", .stdout)
    )]
    Exited {
        /// The command line.
        command: String,
        /// How it ended (`exited with status 3`, `was killed by signal 9`).
        how: String,
        /// The end of what it wrote on stderr, if anything.
        stderr: Option<String>,
        /// The end of what it wrote on stdout, if anything.
        stdout: Option<String>,
    },
    /// A harness backend's own failure.
    #[error("{0}")]
    Other(String),
}

/// `\n<name> (last lines):\n<text>`, or nothing.
fn section(name: &str, text: &Option<String>) -> String {
    match text {
        Some(t) => format!("\n{name} (last lines):\n{t}"),
        None => String::new(),
    }
}

impl From<String> for RunError {
    fn from(what: String) -> Self {
        RunError::Other(what)
    }
}

impl From<&str> for RunError {
    fn from(what: &str) -> Self {
        RunError::Other(what.to_string())
    }
}

impl From<String> for Unavailable {
    fn from(why: String) -> Self {
        Unavailable::Other(why)
    }
}
