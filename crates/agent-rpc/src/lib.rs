//! # agent-rpc — the wire layer
//!
//! The one wire layer of agent-tools: how the families talk to the programs they drive over a
//! byte stream framed with `Content-Length` headers (language servers, debug adapters).
//!
//! It owns:
//! - [`codec`]: reading and writing frames, with a cap on every frame's size and on header lines;
//!   a bad header, an oversized frame, a truncated frame or a body that is not JSON is an error,
//!   never an allocation attempt or a silent `null`;
//! - [`Connection`]: a send task that owns the writer (only whole frames ever reach the stream,
//!   whatever happens to the caller), a reader task, the pending requests (removed by a drop
//!   guard that sends the protocol's cancel message, if it has one), and the end of the stream
//!   (or a read error) failing every pending request;
//! - the two dialects over it: [`JsonRpc`] (LSP) and [`Dap`], each saying what a response's
//!   payload or refusal is ([`Protocol::outcome`]);
//! - typed edges ([`Request`], [`Notification`], [`Connection::call_within`], [`PendingCall`]):
//!   a family declares each method it sends or reads with its own lenient serde types, and a
//!   message of another shape is a [`Malformed`] error naming the method and the field, never a
//!   silent default. The one typed call of the workspace, with its timeout and cancellation: the
//!   LSP client and the DAP transport map its [`CallError`] to their own error in one place.
//!
//! It never spawns a process, knows no tool, and interprets no method beyond telling requests,
//! responses and notifications apart: answering a peer's requests and acting on its
//! notifications is the [`Handler`] its family supplies.

pub mod codec;
mod connection;
mod dap;
mod jsonrpc;
pub mod request;

pub use codec::{FrameError, FrameReader, Limits, encode};
pub use connection::{
    CallError, Connection, ConnectionError, Handler, Incoming, PendingCall, PendingReply, Protocol,
    ReplyError,
};
pub use dap::Dap;
pub use jsonrpc::JsonRpc;
pub use request::{Malformed, Notification, Request};
