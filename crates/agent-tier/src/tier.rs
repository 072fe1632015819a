//! What a tool may do ([`Tier`]: `read`, `write`, `exec`) and who is looking at the tool list
//! ([`Surface`]: `full`, `plan`, `read-only`), and which tiers each surface sees.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a tool may do. The tier decides which surfaces can see the tool.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "snake_case")]
pub enum Tier {
    /// No side effects.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    /// The lowercase name used in schemas and messages.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who is looking at the tool list: the full agent, plan mode, or a read-only subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "snake_case")]
pub enum Surface {
    /// Every registered tool.
    Full,
    /// Plan mode: read-tier tools only.
    Plan,
    /// Read-only subagents: read-tier tools only.
    #[strum(serialize = "read-only")]
    ReadOnly,
}

impl Surface {
    /// All surfaces, in a stable order.
    pub const ALL: [Surface; 3] = [Surface::Full, Surface::Plan, Surface::ReadOnly];

    /// The narrower of two surfaces (`read-only` < `plan` < `full`): a worker or a nested host
    /// started from a call keeps that call's gate, and can only narrow it.
    pub fn narrowest(self, other: Surface) -> Surface {
        fn rank(s: Surface) -> u8 {
            match s {
                Surface::ReadOnly => 0,
                Surface::Plan => 1,
                Surface::Full => 2,
            }
        }
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }

    /// The environment variable that carries the surface of the call that started a worker into
    /// the worker's environment; an `agent-tools` host started with it can only narrow it.
    pub const ENV: &'static str = "AGENT_TOOLS_SURFACE";

    /// Whether a tool of `tier` is visible (and callable) on this surface.
    pub fn allows(self, tier: Tier) -> bool {
        match self {
            Surface::Full => true,
            Surface::Plan | Surface::ReadOnly => tier == Tier::Read,
        }
    }

    /// The name used on the command line and in messages.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no [`Surface`]'s: what parsing a surface refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown surface `{0}`; valid surfaces: full, plan, read-only")]
pub struct UnknownSurface(pub String);

impl FromStr for Surface {
    type Err = UnknownSurface;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Surface::Full),
            "plan" => Ok(Surface::Plan),
            "read-only" | "readonly" | "read_only" => Ok(Surface::ReadOnly),
            other => Err(UnknownSurface(other.to_string())),
        }
    }
}
