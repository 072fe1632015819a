//! What a call searches when the model leaves things out: a `path` that is a glob
//! (`src/**/*.py`), and a directory without `language` — every bundled language present there.

use crate::engine::{self, Scope};
use crate::error::AstGrepError;
use crate::lang::Lang;
use crate::pattern::{self, Compiled};
use std::collections::BTreeMap;
use std::path::Path;

/// The bundled languages with files under `scope.target` (those the glob admits), most files
/// first, looking at no more than `budget` entries.
fn present(scope: &Scope, budget: usize) -> Vec<Lang> {
    let mut counts: BTreeMap<&'static str, (usize, Lang)> = BTreeMap::new();
    let builder = agent_tier::ignore_rules::walker(&scope.target, true);
    for entry in builder.build().take(budget).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) || !scope.admits(entry.path()) {
            continue;
        }
        if let Some(l) = Lang::from_file(entry.path()) {
            counts.entry(l.id()).or_insert((0, l)).0 += 1;
        }
    }
    let mut langs: Vec<(usize, Lang)> = counts.into_values().collect();
    langs.sort_by_key(|(n, l)| (std::cmp::Reverse(*n), l.id()));
    langs.into_iter().map(|(_, l)| l).collect()
}

/// Scopes with their compiled patterns, and the languages present that rejected the pattern.
pub type Planned = (Vec<(Scope, Compiled)>, Vec<(Lang, String)>);

/// The scopes a call searches, each with its compiled pattern, and the languages present whose
/// grammar rejected the pattern (with why). One scope when `language` is given or can be
/// inferred (one file, a glob ending in an extension); otherwise one per language present.
pub fn compiled_scopes(
    root: &Path,
    path: Option<&str>,
    language: Option<&str>,
    pattern_text: &str,
) -> Result<Planned, AstGrepError> {
    let one = |scope: Scope| -> Result<_, AstGrepError> {
        let compiled =
            pattern::compile(scope.lang, pattern_text).map_err(
                |e| match lowercase_metavariables(pattern_text) {
                    Some(hint) => AstGrepError::Hinted {
                        inner: Box::new(e),
                        hint,
                    },
                    None => e,
                },
            )?;
        Ok((vec![(scope, compiled)], Vec::new()))
    };
    match engine::scope(root, path, language) {
        Ok(scope) => one(scope),
        Err(AstGrepError::NeedLanguage { path: given, valid }) => {
            // Any grammar builds the directory scope; each language present gets its own.
            let probe = engine::scope(root, path, Some(Lang::ALL[0].id()))?;
            let langs = present(&probe, 50_000);
            if langs.is_empty() {
                return Err(AstGrepError::NoLanguagePresent { path: given, valid });
            }
            let mut ok = Vec::new();
            let mut rejected = Vec::new();
            for lang in langs {
                let scope = Scope {
                    lang,
                    lang_from: engine::DIRECTORY_SCAN,
                    ..probe.clone()
                };
                match pattern::compile(lang, pattern_text) {
                    Ok(c) => ok.push((scope, c)),
                    Err(
                        e @ (AstGrepError::EmptyPattern
                        | AstGrepError::BarePattern { .. }
                        | AstGrepError::PatternTooDeep { .. }),
                    ) => {
                        return Err(e);
                    }
                    Err(e) => rejected.push((lang, e.to_string())),
                }
            }
            if ok.is_empty() {
                let tried: Vec<&str> = rejected.iter().map(|(l, _)| l.id()).collect();
                return Err(AstGrepError::NoLanguageAccepts {
                    pattern: pattern_text.trim().to_string(),
                    tried: tried.join(", "),
                    first: rejected.first().map(|(_, e)| e.clone()).unwrap_or_default(),
                });
            }
            Ok((ok, rejected))
        }
        Err(e) => Err(e),
    }
}

/// A note for a pattern whose metavariables are lowercase (matched literally, a common slip).
pub fn lowercase_metavariables(pattern: &str) -> Option<String> {
    let bytes = pattern.as_bytes();
    let mut found = Vec::new();
    for (i, _) in pattern.match_indices('$') {
        let rest = &pattern[i + 1..];
        let rest = rest.trim_start_matches('$');
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && (i == 0 || bytes[i - 1] != b'$')
        {
            found.push(format!("${name}"));
        }
    }
    found.dedup();
    (!found.is_empty()).then(|| {
        format!(
            "note: {} in the pattern {} not a metavariable: metavariables are `$` + UPPERCASE (`$X`, `$$$ARGS`, `$_`)",
            found.join(", "),
            if found.len() == 1 { "is" } else { "are" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_at_their_first_wild_component() {
        assert_eq!(
            crate::glob::split_glob("src/**/*.py"),
            ("src".into(), "src/**/*.py".into())
        );
        assert_eq!(crate::glob::split_glob("*.rs"), (".".into(), "*.rs".into()));
        assert_eq!(
            crate::glob::split_glob("./a/b/c?.go"),
            ("a/b".into(), "a/b/c?.go".into())
        );
        assert!(crate::glob::is_glob("**/*.ts") && !crate::glob::is_glob("src/main.rs"));
    }

    #[test]
    fn lowercase_metavariables_get_a_hint() {
        assert!(lowercase_metavariables("foo($X, $$$ARGS)").is_none());
        let note = lowercase_metavariables("foo($x, $$$args)").unwrap();
        assert!(note.contains("$x, $args"), "{note}");
    }
}
