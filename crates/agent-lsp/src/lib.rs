//! # agent-lsp — language servers: `lsp`, `lsp_rename`, diagnostics on write
//!
//! Owns the run's language-server supervisor: one server per (server id, root), started at call
//! time when a root marker AND a binary are both present. Registers `lsp` (read) and
//! `lsp_rename` (write); a wrapper around every tool whose output reports changed files (the
//! wrapper selects by that effect, never by a tool's name: `write`, `edit`, `apply_patch`,
//! `ast_edit`, `resolve`, `lsp_rename`, or a harness's own) that appends the diagnostics the
//! change newly introduced; a wrapper that checks files changed outside our write tools at the
//! next call; and the services other families use (`Locator`, `ChangeChecker`).
//!
//! Never: speaks any protocol but LSP, depends on another family crate, or lets a protocol
//! message leak into a tool result (results are plain text and JSON built from the few fields
//! each operation reads).
//!
//! ## Codemap
//!
//! - `protocol`: every LSP request the client sends and every notification it reads, declared
//!   once as a type implementing `agent_rpc::Request` or `agent_rpc::Notification`, with this
//!   crate's own lenient serde types (not `lsp-types`, whose strict types turn the shapes real
//!   servers send into failed requests; see `docs/decisions.md`). A reply of another shape is
//!   [`LspError::Malformed`], naming the server, the method and the field.
//! - [`config`]: the server table as data — built-in defaults, the user file
//!   (`$XDG_CONFIG_HOME/agent-tools/lsp.json`, else `~/.config/agent-tools/lsp.json`), the project
//!   file (`<root>/.agent-tools/lsp.json`, whose server entries count only for a project the
//!   user's file trusts), then [`LspConfig::overrides`].
//! - `client`: our LSP client — one agent-rpc connection per server process (its reader task and
//!   the send task that owns the writer, so only whole frames reach the pipe), the stderr tail,
//!   typed requests (`Server::call::<R>`, agent-rpc's one typed call) with timeouts, cancellation
//!   and crash handling,
//!   answers to the server's own requests, readiness
//!   (work-done progress, rust-analyzer's `experimental/serverStatus`, a settle period), document
//!   sync (full text; didSave after every change) and fresh diagnostics: pulled
//!   (`textDocument/diagnostic`) when the server offers it, statically or by registration,
//!   else the publish for the synced version; publishes made for that content while the server
//!   settles (a checker run on save) are merged in.
//! - `binaries`: binary resolution (for a trusted project `node_modules/.bin`, `.venv/bin`,
//!   `venv/bin`, then `$PATH`; otherwise `$PATH` outside the root only; a rustup proxy is
//!   resolved with `rustup which`).
//! - `supervisor`: which server serves a file (language preference, root marker), start, crash
//!   detection and restart with backoff, and the cap on running
//!   servers (`max_servers`, default 8): at the cap the least recently used idle server is shut
//!   down and starts again at its next use; `lsp status` shows the cap and the evictions.
//! - `state`: the family's run state — the supervisor, the trust question, the per-conversation
//!   (room) ledger keyed by (severity, code, message) and the witness; every operation is a free
//!   function over it.
//! - `tools`: the `lsp` and `lsp_rename` tools, their operations and the witness-checked answers.
//! - `on_write` (with `on_write_scope`): the diagnostics-on-write wrapper — the new problems of
//!   every changed file, and which other files were checked; `outside`: the same for files a
//!   client changed with its own tools, at the next call.
//! - `contain` and `trust`: how an untrusted project's server is contained (bubblewrap, else
//!   Landlock) or, where nothing can contain it, whether the person trusts the folder.
//! - `imports`: the import witness of a file move (no import of the old module path left).
//! - `rename`: `lsp_rename`'s plan — open documents re-synced from disk first, edits applied to
//!   the bytes the server was given (kept exactly outside the edited ranges), all or nothing.
//! - `checker` (with `checker_c`): `diagnostics` with `"*"` — `cargo check`,
//!   `pyright --outputjson`, `tsc --noEmit`, `go vet ./...`, `dart analyze` per detected root,
//!   and each `compile_commands.json` compiled again with `-fsyntax-only`; an exec-tier call (it
//!   runs project code), launched through the sandbox prefix.
//!
//! ## Which Python server
//!
//! When several Python servers resolve, the first of pyright, basedpyright, ty, pylsp serves
//! `.py` files; set `languages.python` in a config file to choose another order.

mod address;
mod binaries;
mod checker;
mod checker_c;
mod client;
pub mod config;
pub mod contain;
mod deadline;
mod discover;
mod error;
mod imports;
mod on_write;
mod on_write_scope;
mod outside;
mod protocol;
mod rename;
mod render;
mod roots;
mod state;
mod supervisor;
mod text;
mod tools;
mod trust;

pub use config::{ConfigFile, LspConfig, ServerPatch, ServerSpec};
pub use error::LspError;
pub use text::MAX_FILE_BYTES;
pub use tools::{LspArgs, Operation, RenameArgs};

use agent_tier::Registry;
use agent_tier::doctor::DoctorEntry;
use std::path::Path;
use std::sync::Arc;

/// Attach the language-server supervisor to this run and register its tools: `lsp`,
/// `lsp_rename`, the diagnostics-on-write wrapper around every tool that reports changed files,
/// the outside-edit wrapper, and the locator and change-checker services.
///
/// Servers start lazily, at the first call on one of their files, and are killed with their
/// process groups when the registry (and so the supervisor) is dropped.
pub fn attach(registry: &Registry, config: LspConfig) {
    let run = registry.run();
    let root = run.root.canonicalize().unwrap_or_else(|_| run.root.clone());
    let resolved = config.resolve(&root);
    let sup = supervisor::Supervisor::new(resolved, root, run.sandbox_prefix.clone());
    let state = Arc::new(state::State::new(registry, sup));
    registry.register(tools::LspTool(state.clone()));
    registry.register(tools::RenameTool(state.clone()));
    registry.add_wrapper(Arc::new(on_write::WriteDiagnostics(state.clone())));
    registry.add_wrapper(Arc::new(outside::OutsideEdits::new(state.clone())));
    registry.provide_change_checker(Arc::new(outside::OutsideChecker(state.clone())));
    registry.provide_locator(Arc::new(tools::Locator(state.clone())));
    // The witness is another family's service: taken once every family has attached.
    registry.on_seal(move |r| state.set_witness(r.witness()));
}

/// How the language servers of the checkout at `root` would run, in words (for `doctor`):
/// trusted and uncontained, contained and by what (bubblewrap or Landlock, and why not the
/// other), or not at all and why.
pub fn containment_note(root: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let cfg = LspConfig::default().resolve(&root);
    if cfg.trusted {
        return "the project is trusted (your own config lists it): its language servers run uncontained"
            .to_string();
    }
    match contain::untrusted(&root, &[], cfg.untrusted_sandbox, cfg.user_file.as_deref()) {
        Ok(c) => format!(
            "the project is not trusted: its language servers run contained by {}",
            c.summary
        ),
        Err(contain::Uncontained(why)) => format!("no language server can start: {why}"),
    }
}

/// What this family could start for the checkout at `root`: one entry per configured server,
/// with the first root marker found (at `root` or below) and the resolved binary.
pub fn doctor(root: &Path) -> Vec<DoctorEntry> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let cfg = LspConfig::default().resolve(&root);
    cfg.servers
        .values()
        .map(|spec| {
            let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
            let found = roots::roots_in(&root, &markers);
            let marker = found
                .first()
                .and_then(|dir| markers.iter().map(|m| dir.join(m)).find(|p| p.exists()));
            let binary = binaries::resolve_command(
                spec,
                found.first().map(|p| p.as_path()).unwrap_or(&root),
                &root,
                cfg.trusted,
            )
            .map(|b| b.0);
            DoctorEntry {
                family: "lsp".into(),
                id: spec.id.clone(),
                marker,
                markers: spec.root_markers.clone(),
                binary,
                install: spec.install.clone(),
            }
        })
        .collect()
}
