//! What `lsp_rename` returns: [`RenameReport`], and the text a model reads, rendered from it.

use super::super::witnessed::{WitnessReport, identifier_of};
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;

/// A rename that was written: the files it changed, how it was checked, and whether both the
/// server's own references and the identifier witness confirm it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenameReport {
    /// The server that planned it.
    pub server: String,
    /// The files edited, with how many text edits each.
    pub files: Vec<FileEdits>,
    /// The files the edit renamed.
    pub renamed_files: Vec<RenamedFile>,
    /// The server's references of the new name reach every renamed occurrence and the witness
    /// agrees.
    pub verified: bool,
    /// What the check found, in words.
    pub check: String,
    /// How the identifier witness checked the plan (none: no witness for this rename).
    pub witness: Option<WitnessReport>,
    /// How a `symbol` given without `line` was resolved to its declaration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The renamed identifier.
    #[serde(skip)]
    pub symbol: String,
    /// The new name.
    #[serde(skip)]
    pub new_name: String,
}

/// A file the rename edited.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileEdits {
    /// Relative to the workspace root.
    pub path: String,
    /// Text edits in it.
    pub edits: usize,
}

/// A file the rename renamed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenamedFile {
    /// Its old path, relative to the workspace root.
    pub from: String,
    /// Its new path.
    pub to: String,
}

impl Report for RenameReport {
    fn text(&self) -> String {
        let total: usize = self.files.iter().map(|f| f.edits).sum();
        let mut out: Vec<String> = self.resolved.iter().cloned().collect();
        out.push(format!(
            "renamed `{}` to `{}` ({}): {total} edit(s) in {} file(s)",
            self.symbol,
            self.new_name,
            self.server,
            self.files.len()
        ));
        out.extend(
            self.files
                .iter()
                .map(|f| format!("- {}: {} edit(s)", f.path, f.edits)),
        );
        out.extend(
            self.renamed_files
                .iter()
                .map(|r| format!("- renamed file {} → {}", r.from, r.to)),
        );
        if let Some(w) = &self.witness {
            out.push(w.summary(identifier_of(&self.symbol).unwrap_or_default()));
        }
        out.push(self.check.clone());
        out.join("\n")
    }
}
