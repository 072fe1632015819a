//! The positional operations of `lsp`, one module each, and what their answers are (`answer`).
//! Where a call points is `tools::target`; how the server is asked is `tools::asking`.

pub(in crate::tools) mod answer;
mod code_actions;
mod hierarchy;
mod hover;
mod nav;

pub(in crate::tools) use answer::{Answer, Body};
pub(in crate::tools) use code_actions::code_actions;
pub(in crate::tools) use hierarchy::hierarchy;
pub(in crate::tools) use hover::hover;
pub(in crate::tools) use nav::navigate;
