//! `edit` by `symbol`: a definition found by its name path (`Greeter.greet`, `mod::f`) through
//! the run's definition finder — the grammars of the structural-search family, so no language
//! server is needed — replaced whole, or given new text before or after it, re-indented to its
//! site. One definition or nothing: a name that names several is refused with the candidates.

use agent_tier::BoxError;
use agent_tier::definitions::{Definition, DefinitionFinder, matching};
use agent_tier::display::clip_path;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

/// Where `new_string` goes relative to the definition (absent: it replaces the definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Insert {
    Before,
    After,
}

/// Most definitions an error lists.
const SHOWN: usize = 30;

/// The file's new text with `new` put at the definition `symbol` names, and that definition.
pub(crate) fn apply(
    finder: &dyn DefinitionFinder,
    path: &Path,
    shown: &str,
    text: &str,
    symbol: &str,
    insert: Option<Insert>,
    new: &str,
) -> Result<(String, Definition), BoxError> {
    let defs = finder
        .definitions(path, text)
        .map_err(|e| format!("`symbol`: {e}; nothing was written"))?;
    let found = matching(&defs, symbol.trim());
    let def = match found.as_slice() {
        [one] => (*one).clone(),
        [] => {
            let names: Vec<String> = defs.iter().take(SHOWN).map(Definition::name_path).collect();
            return Err(format!(
                "`symbol` `{}` names no definition in {}; nothing was written. Its definitions: {}{}",
                symbol.trim(),
                clip_path(shown),
                if names.is_empty() { "none".to_string() } else { names.join(", ") },
                if defs.len() > SHOWN { ", …" } else { "" }
            )
            .into());
        }
        many => {
            let list: Vec<String> = many
                .iter()
                .take(SHOWN)
                .map(|d| {
                    format!(
                        "{}:{} {} {}",
                        clip_path(shown),
                        d.line,
                        d.kind,
                        d.name_path()
                    )
                })
                .collect();
            return Err(format!(
                "`symbol` `{}` names {} definitions in {}; nothing was written (an edit never picks one): {} — give the name path of one, e.g. `{}`",
                symbol.trim(),
                many.len(),
                clip_path(shown),
                list.join("; "),
                many[0].name_path()
            )
            .into());
        }
    };
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let line_start = text[..def.start].rfind('\n').map_or(0, |i| i + 1);
    let indent: String = text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let lines = reindent(new, &indent);
    let out = match insert {
        None => {
            // The first line goes where the definition started (after its indentation).
            let body = lines
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    if i == 0 {
                        l.trim_start().to_string()
                    } else {
                        l.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(nl);
            format!("{}{body}{}", &text[..def.start], &text[def.end..])
        }
        Some(Insert::Before) => format!(
            "{}{}{nl}{nl}{}",
            &text[..line_start],
            lines.join(nl),
            &text[line_start..]
        ),
        Some(Insert::After) => {
            let line_end = text[def.end..]
                .find('\n')
                .map_or(text.len(), |i| def.end + i);
            let line_end = if text[..line_end].ends_with('\r') {
                line_end - 1
            } else {
                line_end
            };
            format!(
                "{}{nl}{nl}{}{}",
                &text[..line_end],
                lines.join(nl),
                &text[line_end..]
            )
        }
    };
    Ok((out, def))
}

/// `new`'s lines without their common indentation, each non-empty one indented by `indent`;
/// trailing line breaks dropped.
fn reindent(new: &str, indent: &str) -> Vec<String> {
    let new = new.trim_end_matches(['\n', '\r']);
    let lines: Vec<&str> = new.lines().collect();
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("{indent}{}", &l[common.min(l.len())..])
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finder over fixed definitions.
    struct Fixed(Vec<Definition>);

    impl DefinitionFinder for Fixed {
        fn definitions(&self, _: &Path, _: &str) -> Result<Vec<Definition>, String> {
            Ok(self.0.clone())
        }
    }

    const SRC: &str = "class G:\n    def greet(self):\n        return 1\n\n    def other(self):\n        return 2\n";

    fn finder() -> Fixed {
        let def = |path: &[&str], kind: &str, start: usize, end: usize, line: u32| Definition {
            path: path.iter().map(|s| s.to_string()).collect(),
            kind: kind.into(),
            start,
            end,
            line,
        };
        let greet = SRC.find("def greet").unwrap();
        let greet_end = SRC.find("return 1").unwrap() + "return 1".len();
        let other = SRC.find("def other").unwrap();
        Fixed(vec![
            def(&["G"], "class", 0, SRC.len() - 1, 1),
            def(&["G", "greet"], "method", greet, greet_end, 2),
            def(&["G", "other"], "method", other, SRC.len() - 1, 5),
        ])
    }

    fn run(symbol: &str, insert: Option<Insert>, new: &str) -> Result<String, BoxError> {
        apply(
            &finder(),
            Path::new("a.py"),
            "a.py",
            SRC,
            symbol,
            insert,
            new,
        )
        .map(|r| r.0)
    }

    #[test]
    fn replaces_reindented_to_the_site() {
        let out = run("G.greet", None, "def greet(self):\n    return 3\n").unwrap();
        assert_eq!(
            out,
            "class G:\n    def greet(self):\n        return 3\n\n    def other(self):\n        return 2\n"
        );
    }

    #[test]
    fn inserts_before_and_after_on_their_own_lines() {
        let out = run("greet", Some(Insert::After), "def mid(self):\n    pass").unwrap();
        assert!(
            out.contains("return 1\n\n    def mid(self):\n        pass\n\n    def other"),
            "{out}"
        );
        let out = run("G.other", Some(Insert::Before), "  x = 1").unwrap();
        assert!(
            out.contains("return 1\n\n    x = 1\n\n    def other"),
            "{out}"
        );
    }

    #[test]
    fn ambiguous_and_unknown_names_are_refused_with_what_exists() {
        let f = Fixed(vec![
            Definition {
                path: vec!["A".into(), "f".into()],
                kind: "method".into(),
                start: 0,
                end: 1,
                line: 1,
            },
            Definition {
                path: vec!["B".into(), "f".into()],
                kind: "method".into(),
                start: 1,
                end: 2,
                line: 2,
            },
        ]);
        let e = apply(&f, Path::new("a.py"), "a.py", "ab", "f", None, "x")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a.py:1 method A.f") && e.contains("a.py:2 method B.f"),
            "{e}"
        );
        assert!(e.contains("nothing was written"), "{e}");
        let e = run("nope", None, "x").unwrap_err().to_string();
        assert!(
            e.contains("G.greet") && e.contains("names no definition"),
            "{e}"
        );
    }
}
