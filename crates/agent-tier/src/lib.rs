//! # agent-tier — the floor of agent-tools
//!
//! This crate owns what every tool family shares and nothing that any one of them owns:
//!
//! - [`Tier`] (`read` / `write` / `exec`) and [`Surface`] (`full` / `plan` / `read-only`): the tier
//!   decides which surfaces can see a tool, not merely whether it prompts;
//! - the [`Tool`] trait, whose input schema is generated from the argument type by `schemars`;
//! - the run's [`Registry`]: the one call path (surface check, argument validation, approval,
//!   per-resource serialisation, panic capture, wrappers) taken by every call, whether it comes
//!   from the model, a kernel cell's `tool()` bridge or a worker; a tool whose generated input
//!   schema a client cannot use is refused when it is registered ([`RegisterError`]);
//! - [`ResourceKey`]: the name of what calls hold one at a time (the workspace's files, a
//!   debug session), the registry's lock table keyed by it;
//! - [`Requester`] and [`Caller`]: who made a call, carried with it and every call nested in
//!   it, so a prompt the call causes (a question, an approval) goes to that party only;
//! - [`RoomId`] and [`Rooms`]: what belongs to one conversation (its kernels, debug session,
//!   staged edits, ledgers, workers) is kept per room — the requester's — and ended together by
//!   [`Registry::end_room`] when the conversation ends;
//! - [`Approver`] and [`ApprovalPolicy`]: approvals fail closed when no approver is connected;
//! - [`Wrapper`]: code outside a tool that post-processes call results, selecting by what a call
//!   did (its typed effects, such as [`ToolOutput::changed_files`]), never by a tool's name;
//! - the services one family provides and another asks the registry for by type (never by a
//!   tool's name): [`locate::SymbolLocator`] (where a named function is defined),
//!   [`witness::IdentifierWitness`] (where a name occurs as an identifier token, so that another
//!   family's cross-file answer has a second witness), [`definitions::DefinitionFinder`] (a
//!   file's definitions by name path, from its grammar), [`outside::ChangeChecker`] (the
//!   problems a change made outside the run's write tools introduced) and
//!   [`person::PersonAsker`] (a family's own question to the caller's operator);
//! - lean input schemas ([`schema`]), and small shared mechanisms the families need
//!   identically: root confinement and all-or-nothing atomic writes ([`workspace`]), how outside
//!   text is shown escaped and path arguments clipped ([`display`]), what a line of a file's
//!   text is and where a position falls ([`lines`]: a line ends at `\n`, `\r\n` or a lone
//!   `\r`), which ignore files a search honours ([`ignore_rules`]), binary and root-marker
//!   lookup ([`process`]), and the plain data of `doctor` reports ([`doctor`]).
//!
//! It never starts a process (`agent-proc` is the only code that does), never speaks a protocol
//! (no LSP, DAP, MCP or kernel wire types), and never depends on a family crate.

pub mod definitions;
pub mod display;
pub mod doctor;
mod error;
pub mod ignore_rules;
pub mod lines;
pub mod locate;
pub mod outside;
pub mod person;
pub mod process;
mod registry;
mod resource;
pub mod rooms;
pub mod schema;
mod tier;
mod tool;
pub mod witness;
pub mod workspace;

pub use error::{CallError, RegisterError};
pub use registry::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, AskingGuard, BoxFuture,
    CallContext, Caller, Origin, PROGRESS_MAX, ProgressListener, ProgressSink, Registry, Requester,
    RunInfo, Wrapper, progress, progress_wanted,
};
pub use resource::ResourceKey;
pub use rooms::{RoomEnd, RoomId, Rooms};
pub use tier::{Surface, Tier, UnknownSurface};
pub use tool::{BoxError, DryRun, Effects, Hints, Image, Report, Tool, ToolInfo, ToolOutput};

/// Re-exported so that family crates derive schemas with the same `schemars` the registry uses.
pub use schemars;
