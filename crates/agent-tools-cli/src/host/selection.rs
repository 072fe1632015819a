//! Which of the run's tools are served: `serve --tools` / `--without`, by tool or by family
//! (`files` is one family), so a client that has its own file tools is served only what it
//! lacks. The names are checked against what this binary attaches ([`catalog`]); the registry
//! keeps only the selected tools ([`ToolSelection::apply`]), so `tools/list`, the instructions
//! and the call path all see the same set.

use super::{HostOptions, attach_all};
use agent_tools::{Registry, RunInfo};
use std::collections::BTreeSet;

/// The families this binary attaches and the tools each registers, in attach order (`files`
/// first). Built once from a scratch registry with every optional family on, so it names
/// exactly what a run can have.
pub fn catalog() -> Vec<(String, Vec<String>)> {
    let registry = Registry::new(RunInfo {
        root: std::env::temp_dir(),
        sandbox_prefix: Vec::new(),
    });
    let opts = HostOptions {
        vibe: true,
        asking: super::Asking::Terminal,
        ..HostOptions::default()
    };
    attach_all(&registry, &opts)
}

/// The tools a run serves: every tool of the families named by `--tools` (all when empty),
/// less those named by `--without`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// The tool names kept.
    keep: BTreeSet<String>,
    /// How it was asked, for the log.
    asked: String,
}

impl ToolSelection {
    /// The selection `--tools ONLY --without WITHOUT` names, each a tool or a family of
    /// `catalog`; `None` when neither names anything (every tool served). An unknown name is an
    /// error naming the argument and every valid name.
    pub fn new(
        only: &[String],
        without: &[String],
        catalog: &[(String, Vec<String>)],
    ) -> Result<Option<ToolSelection>, String> {
        if only.is_empty() && without.is_empty() {
            return Ok(None);
        }
        let expand = |flag: &str, names: &[String]| -> Result<BTreeSet<String>, String> {
            let mut out = BTreeSet::new();
            for name in names {
                let name = name.trim();
                if let Some((_, tools)) = catalog.iter().find(|(f, _)| f == name) {
                    out.extend(tools.iter().cloned());
                } else if catalog
                    .iter()
                    .any(|(_, tools)| tools.iter().any(|t| t == name))
                {
                    out.insert(name.to_string());
                } else {
                    return Err(format!(
                        "`{flag}` names `{name}`, which is neither a tool nor a family of this \
                         binary; families: {}; tools: {}",
                        catalog
                            .iter()
                            .map(|(f, _)| f.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        catalog
                            .iter()
                            .flat_map(|(_, t)| t.iter().map(String::as_str))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Ok(out)
        };
        let mut keep = if only.is_empty() {
            catalog
                .iter()
                .flat_map(|(_, t)| t.iter().cloned())
                .collect()
        } else {
            expand("--tools", only)?
        };
        for gone in expand("--without", without)? {
            keep.remove(&gone);
        }
        let mut asked = Vec::new();
        if !only.is_empty() {
            asked.push(format!("--tools {}", only.join(",")));
        }
        if !without.is_empty() {
            asked.push(format!("--without {}", without.join(",")));
        }
        Ok(Some(ToolSelection {
            keep,
            asked: asked.join(" "),
        }))
    }

    /// Whether `tool` is served.
    pub fn keeps(&self, tool: &str) -> bool {
        self.keep.contains(tool)
    }

    /// Remove every tool not selected from `registry` (while it is being composed).
    pub fn apply(&self, registry: &Registry) {
        let removed = registry.retain(|name| self.keeps(name));
        tracing::info!(asked = %self.asked, removed = %removed.join(","), "tools left out");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn cat() -> Vec<(String, Vec<String>)> {
        vec![
            ("files".into(), vec!["read".into(), "grep".into()]),
            ("lsp".into(), vec!["lsp".into(), "lsp_rename".into()]),
        ]
    }

    #[test]
    fn families_and_tools_select_and_unknown_names_are_refused_with_the_valid_ones() {
        assert_eq!(ToolSelection::new(&[], &[], &cat()).unwrap(), None);
        let s = ToolSelection::new(&[], &["files".into()], &cat())
            .unwrap()
            .unwrap();
        assert!(!s.keeps("read") && !s.keeps("grep") && s.keeps("lsp") && s.keeps("lsp_rename"));
        // `lsp` is both a family and a tool: the family wins, so both of its tools go.
        let s = ToolSelection::new(&["files".into(), "lsp".into()], &["grep".into()], &cat())
            .unwrap()
            .unwrap();
        assert!(s.keeps("read") && !s.keeps("grep") && s.keeps("lsp_rename"));
        let e = ToolSelection::new(&[], &["fils".into()], &cat()).unwrap_err();
        assert!(
            e.contains("`--without` names `fils`") && e.contains("families: files, lsp"),
            "{e}"
        );
    }
}
