//! The registry's errors: why a call was refused or failed ([`CallError`]) and why a tool, a
//! wrapper or a provider was refused while the run was composed ([`RegisterError`]).

use crate::{Surface, Tier};

/// Why the registry refused or failed a call. Every variant becomes an error result for the
/// caller; none of them is a panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name is registered in this run.
    #[error("unknown tool `{name}`; tools on the {surface} surface: {available}")]
    UnknownTool {
        /// The name the caller gave.
        name: String,
        /// The caller's surface.
        surface: Surface,
        /// The tools the surface offers, as a list for the message.
        available: String,
    },
    /// The tool exists but its tier is hidden on the caller's surface.
    #[error(
        "tool `{name}` is {tier}-tier and is not available on the {surface} surface (it sees read-tier tools only)"
    )]
    Hidden {
        /// The tool's name.
        name: String,
        /// The tool's tier.
        tier: Tier,
        /// The caller's surface.
        surface: Surface,
    },
    /// This call does more than its tool's tier (see `Tool::effects`), and that is hidden on
    /// the caller's surface.
    #[error(
        "this `{name}` call is {tier}-tier: {reason}; it is not available on the {surface} surface (it allows read-tier calls only)"
    )]
    HiddenCall {
        /// The tool's name.
        name: String,
        /// The tier of this call.
        tier: Tier,
        /// The caller's surface.
        surface: Surface,
        /// Why the call is of that tier.
        reason: String,
    },
    /// The arguments did not match the tool's schema.
    #[error("invalid arguments for `{tool}`: {detail}; valid arguments: {valid}")]
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// What was wrong with them.
        detail: String,
        /// What the tool takes.
        valid: String,
    },
    /// The policy requires approval and no approver is connected.
    #[error(
        "tool `{name}` is {tier}-tier and needs approval, but no approver is connected; the call was not made"
    )]
    NoApprover {
        /// The tool's name.
        name: String,
        /// The tier of the call.
        tier: Tier,
    },
    /// The approver said no.
    #[error("the operator declined `{name}`{reason}; the call was not made")]
    Declined {
        /// The tool's name.
        name: String,
        /// The approver's reason as the message shows it, ` (reason)`; empty if none was given.
        reason: String,
    },
    /// The tool panicked; the host keeps serving.
    #[error("tool `{name}` panicked: {message}; the host keeps serving other calls")]
    Panicked {
        /// The tool's name.
        name: String,
        /// The panic's message.
        message: String,
    },
    /// A nested call needs a resource that a call enclosing it holds: it would wait for itself.
    #[error(
        "`{name}` cannot run inside this call: it needs the `{resource}` resource, which the call that made this nested call already holds, so it would wait for itself forever; do that work directly in the calling call instead"
    )]
    Reentrant {
        /// The nested call's tool.
        name: String,
        /// The resource the enclosing call holds.
        resource: String,
    },
    /// The call was cancelled by the caller.
    #[error("call to `{name}` was cancelled")]
    Cancelled {
        /// The tool's name.
        name: String,
    },
}

/// Why the registry refused a tool (or a wrapper, or a provider) while the run was composed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The registry has served a call or a listing: what a surface sees never changes under a
    /// running model.
    #[error(
        "Registry::{what}({name}) after the registry was sealed by its first call or listing: register every tool and wrapper while composing the run"
    )]
    Sealed {
        /// What was asked (`register`, `add_wrapper`, …).
        what: &'static str,
        /// What was to be added (a tool's name, `a wrapper`, …).
        name: String,
    },
    /// The input schema generated from the tool's argument type is not one a client can use.
    #[error("the registry refuses tool `{tool}`: its input schema {problem}")]
    InvalidSchema {
        /// The tool's name.
        tool: String,
        /// What is wrong with the schema.
        problem: crate::schema::SchemaError,
    },
}
