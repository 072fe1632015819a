//! How much one result carries; the tool's description quotes these.

/// Frames returned by `stack`.
pub(crate) const MAX_FRAMES: usize = 30;
/// Children returned by `variables`.
pub(crate) const MAX_CHILDREN: usize = 50;
/// Characters of one value.
pub(crate) const MAX_VALUE: usize = 400;
/// Bytes of output returned by one `output` call.
pub(crate) const MAX_OUTPUT: usize = 8 * 1024;
