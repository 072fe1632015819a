//! Changes made outside the run's write tools, reported on request: a client's own edit tool
//! tells the host right after it wrote (Claude Code's `PostToolUse` hook, through the host's
//! control socket), and the family that checks writes (the language servers) answers with the
//! problems the change introduced, by the same rules as a write of ours.
//!
//! The family provides a [`ChangeChecker`] while the run is composed; the host asks the
//! registry for it by type. A run without one simply has nothing to say.

use crate::{BoxFuture, RoomId};
use std::path::Path;

/// What a changed file held before the change, as the one who changed it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// These bytes.
    Content(Vec<u8>),
    /// Nothing: the change created the file.
    Absent,
    /// Not said: the checker's own last copy is the baseline, if it has one.
    Unknown,
}

/// Checks a file changed outside the run's write tools.
pub trait ChangeChecker: Send + Sync + 'static {
    /// The report on `file` (absolute, inside the workspace root), changed from `before`, for
    /// `room`'s ledger: the new problems, or what could not be checked; empty when there is
    /// nothing to say (no server covers the file, or the path is outside the root).
    fn check<'a>(
        &'a self,
        file: &'a Path,
        before: Before,
        room: &'a RoomId,
    ) -> BoxFuture<'a, String>;
}
