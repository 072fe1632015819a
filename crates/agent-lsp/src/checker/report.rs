//! What `diagnostics` with `"*"` returns: [`ProjectDiagnostics`], each checker's run, and the
//! text a model reads, rendered from it (errors first, at most [`PER_FILE`] per file and
//! [`IN_ALL`] in all; the structured result has every finding).

use super::CHECKERS;
use crate::render::Diag;
use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;

/// At most this many findings are listed per file, and in all; errors first.
const PER_FILE: usize = 10;
const IN_ALL: usize = 30;

/// What every project checker of every root found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProjectDiagnostics {
    /// `diagnostics`.
    pub operation: &'static str,
    /// `*`.
    pub file: &'static str,
    /// Each checker's run, per root.
    pub checkers: Vec<CheckerRun>,
    /// What the runs left out (translation units beyond the bound).
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// One checker's run in one root: its findings, or why it failed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CheckerRun {
    Ran(CheckerRan),
    Failed(CheckerFailed),
}

/// A checker that ran.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckerRan {
    /// The checker (`cargo check`, `pyright`, `tsc`, `go vet`, `dart analyze`, `C/C++
    /// -fsyntax-only`).
    pub checker: String,
    /// The root it ran in, relative to the workspace root.
    pub root: String,
    /// Every finding, errors first.
    pub diagnostics: Vec<Diag>,
    /// How long it ran.
    #[serde(skip)]
    pub elapsed: Duration,
    /// Findings in files out of the root through a symlink, not shown.
    #[serde(skip)]
    pub withheld: usize,
    /// Errors and warnings it reported (a finding reported twice counts twice).
    #[serde(skip)]
    pub reported: (usize, usize),
}

/// A checker that could not run, or failed without findings.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckerFailed {
    /// The checker.
    pub checker: String,
    /// The root it was to run in.
    pub root: String,
    /// Why it failed.
    pub error: String,
}

impl Report for ProjectDiagnostics {
    fn text(&self) -> String {
        let mut text = Vec::new();
        let mut budget = IN_ALL;
        let mut left_out = 0usize;
        for run in &self.checkers {
            match run {
                CheckerRun::Ran(r) => {
                    let (errors, warnings) = r.reported;
                    text.push(format!(
                        "{} in {} (ran in {:.1} s): {errors} error(s), {warnings} warning(s)",
                        r.checker,
                        r.root,
                        r.elapsed.as_secs_f64(),
                    ));
                    let mut per_file: HashMap<&str, usize> = HashMap::new();
                    for d in &r.diagnostics {
                        let n = per_file.entry(&d.loc.path).or_default();
                        if *n < PER_FILE && budget > 0 {
                            *n += 1;
                            budget -= 1;
                            text.push(d.render());
                        } else {
                            left_out += 1;
                        }
                    }
                    if r.withheld > 0 {
                        text.push(format!(
                            "({} finding(s) in files outside the workspace root through a symlink not shown)",
                            r.withheld
                        ));
                    }
                }
                CheckerRun::Failed(f) => {
                    text.push(format!("{} in {}: {}", f.checker, f.root, f.error))
                }
            }
        }
        text.extend(self.notes.iter().cloned());
        if left_out > 0 {
            text.push(format!(
                "({left_out} more finding(s) not shown: at most {PER_FILE} per file and {IN_ALL} in all, errors first; `structured.checkers` has every one, and `diagnostics` of one file shows its own)"
            ));
        }
        if text.is_empty() {
            text.push(format!(
                "no project checker applies: none of {} was found in the workspace",
                CHECKERS
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.markers.join("/")))
                    .chain(["C/C++ (compile_commands.json)".to_string()])
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text.join("\n")
    }
}
