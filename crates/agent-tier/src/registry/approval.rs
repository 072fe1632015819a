//! Approval before a call runs: which tiers need it ([`ApprovalPolicy`]), what the operator is
//! asked ([`ApprovalRequest`]) and answers ([`ApprovalDecision`]), and who asks them
//! ([`Approver`], supplied by the harness or the `ask` family).

use super::{BoxFuture, Origin, Requester};
use crate::{Surface, Tier};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A request for the operator's approval of one call.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool: String,
    /// The tier of this call, as its effects declare it (it may be above the tool's).
    pub tier: Tier,
    /// The call's arguments, as given.
    pub arguments: Value,
    /// The caller's surface.
    pub surface: Surface,
    /// Where the call came from.
    pub origin: Origin,
    /// Who made the call (for a nested call, the call it is nested in): the one the prompt must
    /// be put to. `None`: the caller named nobody.
    pub requester: Option<Arc<dyn Requester>>,
}

/// The operator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// The call may proceed.
    Approve,
    /// The call is refused.
    Decline {
        /// Why, if the operator said.
        reason: Option<String>,
    },
}

/// Asks a person whether a call may proceed. Supplied by the harness (or the `ask` family).
pub trait Approver: Send + Sync + 'static {
    /// Ask; resolve once someone answers. A port that cannot reach anybody should decline.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision>;
}

/// Which tiers need approval before a call runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalPolicy {
    tiers: BTreeSet<Tier>,
}

impl ApprovalPolicy {
    /// No tier needs approval.
    pub fn none() -> Self {
        Self::default()
    }

    /// These tiers need approval.
    pub fn tiers(tiers: impl IntoIterator<Item = Tier>) -> Self {
        ApprovalPolicy {
            tiers: tiers.into_iter().collect(),
        }
    }

    /// Whether a call of this tier needs approval.
    pub fn requires(&self, tier: Tier) -> bool {
        self.tiers.contains(&tier)
    }
}
