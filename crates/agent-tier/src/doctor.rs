//! Plain data for `agent-tools doctor` and the families' `status` / `adapters` operations.

use serde::Serialize;
use std::path::PathBuf;

/// One program a family could use for this checkout, and whether it can.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorEntry {
    /// The family (`lsp`, `dap`, `kernel`, …).
    pub family: String,
    /// The program's id (`pyright`, `debugpy`, `python`, …).
    pub id: String,
    /// The root marker found, or `None` when none of `markers` exists.
    pub marker: Option<PathBuf>,
    /// The markers looked for (empty when the program needs none).
    pub markers: Vec<String>,
    /// Where the binary resolved, or `None`.
    pub binary: Option<PathBuf>,
    /// The command that would install what is missing.
    pub install: String,
}

impl DoctorEntry {
    /// Usable only when both halves are present: a marker (when one is needed) AND a binary.
    pub fn usable(&self) -> bool {
        self.binary.is_some() && (self.markers.is_empty() || self.marker.is_some())
    }

    /// One line: `id: usable` or what is missing.
    pub fn summary(&self) -> String {
        let marker = match (&self.marker, self.markers.is_empty()) {
            (_, true) => "no marker needed".to_string(),
            (Some(m), _) => format!("marker {}", m.display()),
            (None, _) => format!("no root marker ({})", self.markers.join(", ")),
        };
        let binary = match &self.binary {
            Some(b) => format!("binary {}", b.display()),
            None => format!("binary not found (install: {})", self.install),
        };
        let verdict = if self.usable() {
            "usable"
        } else {
            "not usable"
        };
        format!("{}/{}: {verdict}; {marker}; {binary}", self.family, self.id)
    }
}
