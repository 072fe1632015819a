//! # agent-files — the file tools a harness assumes
//!
//! Owns the generic file tools the spec takes for granted: `read`, `write`, `edit` and
//! `apply_patch` (a unified diff or the `*** Begin Patch` envelope models write; exact first, then
//! tolerant of trailing whitespace and typographic punctuation only where one place matches, and
//! saying so), edit by `symbol` (`symbol_edit`), and the search tools `grep` (text,
//! on ripgrep's own crates) and `glob` (paths), registered with [`attach`].
//!
//! - Every path is confined to the run's root (`..`, absolute paths elsewhere and symlinks that
//!   lead out are refused) through `agent_tier::workspace`, which also makes every write
//!   all-or-nothing, symlink-proof and serialised per file with every other writer of the run.
//! - `read` reads regular files only, holds at most what it returns and scans at most a file's
//!   first 64 MiB; FIFOs and devices are refused. `grep` and `glob` walk as ripgrep does (ignore
//!   files honoured, symlinks never followed) and list regular files only; `grep` opens them
//!   and searches each in at most its first 64 MiB.
//! - The file work runs off the async threads (`spawn_blocking`).
//! - Each writing tool reports the files it changed as [`agent_tier::ToolOutput::changed_files`],
//!   so wrappers (diagnostics on write) cover it without knowing its name; with `dry_run` it
//!   writes nothing and returns the change as [`agent_tier::ToolOutput::proposed`].
//!
//! It never: starts a process, speaks a protocol, or writes outside the root.

mod apply;
mod envelope;
mod error;
mod glob;
mod grep;
mod hunks;
mod patch;
mod read;
mod symbol_edit;
mod tools;
mod walk;

use agent_tier::{BoxError, ToolOutput};

/// Register the file tools: `read`, `grep`, `glob` (read tier), `write`, `edit`, `apply_patch`.
pub fn attach(registry: &agent_tier::Registry) {
    registry.register(read::ReadTool);
    registry.register(grep::GrepTool);
    registry.register(glob::GlobTool);
    registry.register(tools::WriteTool);
    registry.register(tools::EditTool);
    registry.register(apply::ApplyPatchTool);
}

/// Run a call's file work on the blocking pool, off the async threads.
async fn off_thread(
    work: impl FnOnce() -> Result<ToolOutput, BoxError> + Send + 'static,
) -> Result<ToolOutput, BoxError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| BoxError::from(format!("the file work stopped: {e}")))?
}
