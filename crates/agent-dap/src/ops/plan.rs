//! What a `launch` runs once its target is worked out: the [`Plan`] the adapter is told, and the
//! test binary a test launch [`Built`] first. Shared by `launch` and `launch_test`, which
//! depend on it and not on each other's types.

use std::path::PathBuf;

/// What the adapter is told to run, once the target is worked out.
pub(crate) struct Plan {
    /// What the adapter launches ([`LaunchSpec::program`](crate::adapters::LaunchSpec::program)).
    pub program: PathBuf,
    /// A Python module run instead of `program`.
    pub module: Option<String>,
    /// `program` is a Go package whose tests run.
    pub test: bool,
    pub args: Vec<String>,
    /// The working directory when the model names none.
    pub cwd: PathBuf,
    /// What is debugged, as the result names it.
    pub target: String,
    /// What the launch built first (a Rust test binary), said in the result.
    pub built: Option<Built>,
}

/// A test binary the launch built.
pub(crate) struct Built {
    /// The command, as the result shows it.
    pub command: String,
    pub executable: PathBuf,
    /// Which target of which package (`lib demo`, `test api`).
    pub target: String,
}
