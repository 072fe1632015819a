use crate::{Surface, Tier};

/// Why the registry refused or failed a call. Every variant becomes an error result for the
/// caller; none of them is a panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name is registered in this run.
    #[error("unknown tool `{name}`; tools on the {surface} surface: {available}")]
    UnknownTool {
        name: String,
        surface: Surface,
        available: String,
    },
    /// The tool exists but its tier is hidden on the caller's surface.
    #[error(
        "tool `{name}` is {tier}-tier and is not available on the {surface} surface (it sees read-tier tools only)"
    )]
    Hidden {
        name: String,
        tier: Tier,
        surface: Surface,
    },
    /// This call does more than its tool's tier (see `Tool::effects`), and that is hidden on
    /// the caller's surface.
    #[error(
        "this `{name}` call is {tier}-tier: {reason}; it is not available on the {surface} surface (it allows read-tier calls only)"
    )]
    HiddenCall {
        name: String,
        tier: Tier,
        surface: Surface,
        reason: String,
    },
    /// The arguments did not match the tool's schema.
    #[error("invalid arguments for `{tool}`: {detail}; valid arguments: {valid}")]
    InvalidArguments {
        tool: String,
        detail: String,
        valid: String,
    },
    /// The policy requires approval and no approver is connected.
    #[error(
        "tool `{name}` is {tier}-tier and needs approval, but no approver is connected; the call was not made"
    )]
    NoApprover { name: String, tier: Tier },
    /// The approver said no.
    #[error("the operator declined `{name}`{reason}; the call was not made")]
    Declined { name: String, reason: String },
    /// The tool panicked; the host keeps serving.
    #[error("tool `{name}` panicked: {message}; the host keeps serving other calls")]
    Panicked { name: String, message: String },
    /// A nested call needs a resource that a call enclosing it holds: it would wait for itself.
    #[error(
        "`{name}` cannot run inside this call: it needs the `{resource}` resource, which the call that made this nested call already holds, so it would wait for itself forever; do that work directly in the calling call instead"
    )]
    Reentrant { name: String, resource: String },
    /// The call was cancelled by the caller.
    #[error("call to `{name}` was cancelled")]
    Cancelled { name: String },
}
