//! What each `debug` operation answers, as a value of its own type implementing
//! [`agent_tier::Report`]: the structured content a client reads is the value's JSON, the text a
//! model reads is rendered from the same value ([`agent_tier::ToolOutput::report`]). Rendering
//! only: nothing here sends a request or reads a file; `ops` builds the values.
//!
//! By area: [`rows`] (a breakpoint, a function breakpoint, a frame, a variable: the rows several
//! results share), [`stop`] (where the debuggee went: its stop snapshot, its exit, or that it
//! runs), [`session`] (a started session, its status, its end), [`breakpoints`] (what a
//! `breakpoints` call set), [`inspection`] (threads, stack, scopes, variables, evaluate,
//! output), [`adapters`] (which adapters can start here).

pub(crate) mod adapters;
pub(crate) mod breakpoints;
pub(crate) mod inspection;
pub(crate) mod rows;
pub(crate) mod session;
pub(crate) mod stop;

pub(crate) use adapters::*;
pub(crate) use breakpoints::*;
pub(crate) use inspection::*;
pub(crate) use rows::*;
pub(crate) use session::*;
pub(crate) use stop::*;

#[cfg(test)]
mod tests;
