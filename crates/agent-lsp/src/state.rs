//! The family's state for one run: the supervisor (servers are shared by everyone on the root),
//! the run's trust question, per room the diagnostics ledger (what each conversation has been
//! shown), and the identifier witness wired when the registry is sealed.
//!
//! Owns: that state and the few things every operation asks of it (the root, a confined read of
//! the `path` argument, the ledger). Never: an operation — those are free functions over the
//! state, each in the module named for it (`tools::ops`, `tools::asking`, `on_write`, ...).

use crate::error::LspError;
use crate::render::Diag;
use crate::supervisor::Supervisor;
use agent_tier::witness::IdentifierWitness;
use agent_tier::workspace::confine_existing;
use agent_tier::{RoomId, Rooms};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What one conversation has been shown: diagnostics by (severity, code, message).
type Ledger = HashSet<(String, String, String)>;

/// The family's state for one run: the supervisor (servers are shared by everyone on the root)
/// and, per room, the diagnostics ledger (what each conversation has been shown).
pub struct State {
    pub sup: Supervisor,
    /// The run's one question whether to trust the project ([`crate::trust`]).
    pub(crate) trust: crate::trust::TrustQuestion,
    ledger: Arc<Rooms<Mutex<Ledger>>>,
    /// The run's identifier witness, wired once when the registry is sealed (`attach`).
    witness: std::sync::OnceLock<Option<Arc<dyn agent_tier::witness::IdentifierWitness>>>,
}

impl State {
    pub fn new(registry: &agent_tier::Registry, sup: Supervisor) -> Self {
        State {
            sup,
            trust: Default::default(),
            ledger: Rooms::attach(registry),
            witness: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn ws(&self) -> &Path {
        &self.sup.root
    }

    /// The `path` argument, confined to the root: its path, how results show it, its text.
    pub(crate) fn read_file(&self, file: &str) -> Result<(PathBuf, String, String), LspError> {
        let path = confine_existing(self.ws(), "path", file)?;
        let display = agent_tier::workspace::display_path(self.ws(), &path);
        let text = crate::text::read_text(self.ws(), &path).map_err(|e| LspError::Read {
            path: display.clone(),
            source: e,
        })?;
        Ok((path, display, text))
    }

    /// Record diagnostics as reported to `room`; returns those not reported to it before.
    pub(crate) fn unseen(&self, room: &RoomId, mut diags: Vec<Diag>) -> Vec<Diag> {
        self.unseen_all(room, &mut [&mut diags], true);
        diags
    }

    /// Keep in each list the diagnostics not reported to `room` before (nor earlier in the
    /// lists); `record`: they now are (a dry run records nothing, so the write after it reports
    /// the same).
    pub(crate) fn unseen_all(&self, room: &RoomId, lists: &mut [&mut Vec<Diag>], record: bool) {
        let ledger = self.ledger.get_or_init(room, Mutex::default);
        let mut ledger = ledger.lock();
        let mut scratch = (!record).then(|| ledger.clone());
        let seen = match scratch.as_mut() {
            Some(s) => s,
            None => &mut *ledger,
        };
        for list in lists.iter_mut() {
            list.retain(|d| seen.insert(d.key()));
        }
    }

    /// Keep the run's witness for this family's answers (once, when the registry is sealed).
    pub(crate) fn set_witness(&self, w: Option<Arc<dyn IdentifierWitness>>) {
        let _ = self.witness.set(w);
    }

    pub(crate) fn witness(&self) -> Option<Arc<dyn IdentifierWitness>> {
        self.witness.get().cloned().flatten()
    }
}
