//! How much one result carries (the tool's description quotes these), and how long a test
//! launch's build may take.

use std::time::Duration;

/// Frames returned by `stack`.
pub(crate) const MAX_FRAMES: usize = 30;
/// Children returned by `variables`.
pub(crate) const MAX_CHILDREN: usize = 50;
/// Characters of one value.
pub(crate) const MAX_VALUE: usize = 400;
/// Bytes of output returned by one `output` call.
pub(crate) const MAX_OUTPUT: usize = 8 * 1024;
/// Frames in a stop snapshot.
pub(crate) const STOP_FRAMES: usize = 5;
/// Locals of the top frame in a stop snapshot.
pub(crate) const STOP_LOCALS: usize = 20;
/// Characters of one local's value in a stop snapshot.
pub(crate) const STOP_VALUE: usize = 200;
/// Source lines shown on each side of the stopped line.
pub(crate) const STOP_CONTEXT: usize = 2;
/// Characters of the output tail shown when the program exits.
pub(crate) const EXIT_TAIL: usize = 2000;
/// How long `cargo test --no-run` may build a Rust test binary for a test launch.
pub(crate) const BUILD_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// How long one test binary may take to list its tests.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(30);
