//! The breakpoints the model asked for, kept across sessions, and how they are sent: a file's
//! lines, function breakpoints by the adapter's `setFunctionBreakpoints`, and — for an adapter
//! without them — function breakpoints *placed* on the first line of the function's body, at
//! the one definition the run's language servers report (the [`SymbolLocator`]). A name with no
//! definition, or with several, is not placed: the result says why and lists the candidates.

use crate::args::BreakpointOptions;
use crate::protocol::{
    Breakpoint, FunctionBreakpoint, SetBreakpointsArguments, SetFunctionBreakpointsArguments,
    Source, SourceBreakpoint,
};
use agent_tier::locate::{SymbolLocator, SymbolPlace};
use agent_tier::workspace::display_path;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One file's breakpoints, as the model set them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileBreakpoints {
    pub lines: Vec<u32>,
    pub options: BreakpointOptions,
    /// Each line's text (trimmed) when it was set, in the order of `lines`: what the
    /// breakpoint follows when lines are added or removed above it ([`FileBreakpoints::reanchor`]).
    pub anchors: Vec<Option<String>>,
}

/// Most bytes of a file read to anchor its breakpoints.
const ANCHOR_READ: u64 = 16 * 1024 * 1024;

/// The trimmed text of each of `lines` (1-based) in the file at `path`.
pub(crate) fn anchors_of(root: &Path, path: &Path, lines: &[u32]) -> Vec<Option<String>> {
    let text = agent_tier::workspace::read_regular(root, path, ANCHOR_READ)
        .ok()
        .map(|r| String::from_utf8_lossy(&r.bytes).into_owned());
    let all: Vec<&str> = text
        .as_deref()
        .map(|t| t.lines().collect())
        .unwrap_or_default();
    lines
        .iter()
        .map(|l| {
            (*l as usize)
                .checked_sub(1)
                .and_then(|i| all.get(i))
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        })
        .collect()
}

impl FileBreakpoints {
    /// Follow each breakpoint's line text to where it is now in `path` (edits above it move
    /// it): a line whose text changed is moved to the one line that has the text now; with no
    /// such line, or several, it stays, and the note says why. Returns one note per breakpoint
    /// that moved or could not follow.
    pub(crate) fn reanchor(&mut self, root: &Path, path: &Path) -> Vec<String> {
        let shown = display_path(root, path);
        let text = agent_tier::workspace::read_regular(root, path, ANCHOR_READ)
            .ok()
            .map(|r| String::from_utf8_lossy(&r.bytes).into_owned())
            .unwrap_or_default();
        let all: Vec<&str> = text.lines().map(str::trim).collect();
        let mut notes = Vec::new();
        let mut pairs: Vec<(u32, Option<String>)> = Vec::new();
        for (i, line) in self.lines.iter().enumerate() {
            let anchor = self.anchors.get(i).cloned().flatten();
            let Some(want) = anchor.as_deref() else {
                pairs.push((*line, anchor));
                continue;
            };
            if (*line as usize).checked_sub(1).and_then(|i| all.get(i)) == Some(&want) {
                pairs.push((*line, anchor));
                continue;
            }
            let found: Vec<u32> = all
                .iter()
                .enumerate()
                .filter(|(_, t)| **t == want)
                .map(|(n, _)| n as u32 + 1)
                .collect();
            let quoted = agent_tier::display::clip_chars(want, 60);
            match found.as_slice() {
                [to] => {
                    notes.push(format!(
                        "{shown}:{line} re-anchored to line {to}: its line `{quoted}` moved"
                    ));
                    pairs.push((*to, anchor));
                }
                [] => {
                    notes.push(format!(
                        "{shown}:{line}: its line `{quoted}` is no longer in the file; the breakpoint stays at line {line}"
                    ));
                    pairs.push((*line, anchor));
                }
                many => {
                    let at: Vec<String> = many.iter().take(5).map(u32::to_string).collect();
                    notes.push(format!(
                        "{shown}:{line}: its line `{quoted}` is now on several lines ({}); the breakpoint stays at line {line} — set it again on the one you mean",
                        at.join(", ")
                    ));
                    pairs.push((*line, anchor));
                }
            }
        }
        pairs.sort_by_key(|(l, _)| *l);
        pairs.dedup_by_key(|(l, _)| *l);
        (self.lines, self.anchors) = pairs.into_iter().unzip();
        notes
    }
}

/// The function breakpoints, as the model set them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FunctionBreakpoints {
    pub names: Vec<String>,
    pub options: BreakpointOptions,
}

/// A function breakpoint placed on a line, for an adapter without function breakpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    pub name: String,
    pub path: PathBuf,
    pub line: u32,
    /// Which line of the definition it is, in words.
    pub how: &'static str,
}

/// What placing the function breakpoints gave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placement {
    pub placed: Vec<Placed>,
    /// The names not placed, each with why.
    pub unplaced: Vec<(String, String)>,
    /// Who found the definitions (the language servers' ids).
    pub by: String,
}

impl Placement {
    /// Nothing placed: the language servers did not answer in time.
    pub(crate) fn timed_out(names: &[String], within: std::time::Duration) -> Placement {
        Placement {
            placed: Vec::new(),
            unplaced: names
                .iter()
                .map(|n| {
                    (
                        n.clone(),
                        format!(
                            "no language server found `{n}` within {} s of the launch; set the function breakpoints again once the session runs, or set `file` and `lines`",
                            within.as_secs()
                        ),
                    )
                })
                .collect(),
            by: String::new(),
        }
    }
}

/// Everything a session's start-up sets: the kept breakpoints and how to place function
/// breakpoints when the adapter has none.
pub(crate) struct Wanted<'a> {
    pub files: &'a BTreeMap<PathBuf, FileBreakpoints>,
    pub functions: &'a FunctionBreakpoints,
    pub locator: Option<Arc<dyn SymbolLocator>>,
    /// A file of the debugged program's language (what the locator searches from).
    pub near: Option<&'a Path>,
    pub root: &'a Path,
}

/// Find each name's one definition and the first line of its body.
pub(crate) async fn place(
    locator: Option<&dyn SymbolLocator>,
    near: Option<&Path>,
    root: &Path,
    names: &[String],
    adapter: &str,
) -> Placement {
    let mut out = Placement::default();
    let Some(locator) = locator else {
        for name in names {
            out.unplaced.push((
                name.clone(),
                format!(
                    "the {adapter} adapter has no function breakpoints and this run has no language server to find `{name}`; set `file` and `lines` instead"
                ),
            ));
        }
        return out;
    };
    for name in names {
        match locator.locate(name, near).await {
            Err(e) => out.unplaced.push((
                name.clone(),
                format!(
                    "the {adapter} adapter has no function breakpoints and no language server could find `{name}` ({e}); set `file` and `lines` instead"
                ),
            )),
            Ok(found) => {
                if out.by.is_empty() {
                    out.by = found.by.clone();
                }
                match found.places.as_slice() {
                    [] => out.unplaced.push((
                        name.clone(),
                        format!(
                            "{} reports no function `{name}` in the workspace{}{}; check the name, or set `file` and `lines`",
                            found.by,
                            match found.outside_root {
                                0 => String::new(),
                                n => format!(
                                    " ({n} outside the root, in a library or through a symlink, not used)"
                                ),
                            },
                            if found.partial {
                                " (it was still indexing)"
                            } else {
                                ""
                            }
                        ),
                    )),
                    [one] => out.placed.push(placed_in_body(name, one)),
                    many => out.unplaced.push((
                        name.clone(),
                        format!(
                            "`{name}` is ambiguous: {} defines {} ({}); name it with its class or module (`Class.method`), or set `file` and `lines`",
                            found.by,
                            many.len(),
                            many.iter()
                                .take(8)
                                .map(|p| format!(
                                    "{}:{}{}",
                                    display_path(root, &p.path),
                                    p.line,
                                    p.container
                                        .as_deref()
                                        .map(|c| format!(" in {c}"))
                                        .unwrap_or_default()
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                }
            }
        }
    }
    out
}

fn placed_in_body(name: &str, at: &SymbolPlace) -> Placed {
    let text = std::fs::read(&at.path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let (line, how) = body_line(&text, at.line, at.end_line);
    Placed {
        name: name.to_string(),
        path: at.path.clone(),
        line,
        how,
    }
}

/// The code of a line without a trailing `//` or `#` comment (a rough cut: a marker inside a
/// string shortens the line, which only moves the search one line on).
fn code(line: &str) -> &str {
    let cut = [line.find("//"), line.find(" #"), line.find("\t#")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(line.len());
    line[..cut].trim()
}

fn is_comment(trimmed: &str) -> bool {
    ["//", "#", "/*", "*", "--"]
        .iter()
        .any(|m| trimmed.starts_with(m))
}

/// The first line of a definition's body: after the line that opens it (ending with `{`, `:`
/// or `=>`), skipping blank lines, comments and a docstring; the opening line itself when the
/// body starts on it (`=> a + b;`, `{ return a; }`) or when nothing is found before the
/// definition ends. `line` and `end` are 1-based.
pub(crate) fn body_line(text: &str, line: u32, end: Option<u32>) -> (u32, &'static str) {
    let lines: Vec<&str> = agent_tier::lines::lines(text).collect();
    let first = usize::try_from(line).unwrap_or(1).saturating_sub(1);
    let last = end
        .and_then(|e| usize::try_from(e).ok())
        .unwrap_or(first + 40)
        .min(lines.len());
    let as_line = |i: usize| u32::try_from(i + 1).unwrap_or(line);
    let Some(open) = (first..last).find(|&i| {
        let c = code(lines[i]);
        c.ends_with('{')
            || c.ends_with(':')
            || c.ends_with("=>")
            || c.contains("=> ")
            || (c.contains('{') && c.ends_with('}'))
    }) else {
        return (line, "its definition line");
    };
    let c = code(lines[open]);
    if !(c.ends_with('{') || c.ends_with(':') || c.ends_with("=>")) {
        return (as_line(open), "the line its body is on");
    }
    let mut in_doc: Option<&str> = None;
    for (i, raw) in lines.iter().enumerate().take(last).skip(open + 1) {
        let t = raw.trim();
        if let Some(q) = in_doc {
            if t.contains(q) {
                in_doc = None;
            }
            continue;
        }
        if t.is_empty() || is_comment(t) {
            continue;
        }
        if let Some(q) = ["\"\"\"", "'''"].into_iter().find(|q| t.starts_with(q)) {
            if !(t.len() >= 6 && t[3..].contains(q)) {
                in_doc = Some(q);
            }
            continue;
        }
        if t == "}" || t.starts_with("};") {
            break;
        }
        return (as_line(i), "the first line of its body");
    }
    (line, "its definition line (its body has no line of code)")
}

/// Function breakpoints placed in `file`, in the order they are sent after the file's own.
pub(crate) fn placed_in<'a>(placed: &'a [Placed], file: &Path) -> Vec<&'a Placed> {
    placed.iter().filter(|p| p.path == file).collect()
}

/// The arguments of `setFunctionBreakpoints`.
pub(crate) fn set_function_breakpoints_args(
    f: &FunctionBreakpoints,
) -> SetFunctionBreakpointsArguments {
    let one = |name: &String| FunctionBreakpoint {
        name: name.clone(),
        condition: f.options.condition.clone(),
        hit_condition: f.options.hit_count.map(|n| n.to_string()),
    };
    SetFunctionBreakpointsArguments {
        breakpoints: f.names.iter().map(one).collect(),
    }
}

fn source_breakpoint(line: u32, options: &BreakpointOptions) -> SourceBreakpoint {
    SourceBreakpoint {
        line,
        condition: options.condition.clone(),
        hit_condition: options.hit_count.map(|n| n.to_string()),
        log_message: options.log_message.clone(),
    }
}

/// The arguments of `setBreakpoints` for one file: its own lines (with its options), then the
/// function breakpoints placed in it (with the functions' options).
pub(crate) fn set_breakpoints_args(
    file: &Path,
    own: Option<&FileBreakpoints>,
    placed: &[&Placed],
    function_options: &BreakpointOptions,
) -> SetBreakpointsArguments {
    let mut breakpoints = Vec::new();
    if let Some(own) = own {
        for l in &own.lines {
            breakpoints.push(source_breakpoint(*l, &own.options));
        }
    }
    for p in placed {
        breakpoints.push(source_breakpoint(p.line, function_options));
    }
    SetBreakpointsArguments {
        source: Source {
            path: Some(file.display().to_string()),
            name: Some(
                file.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        },
        lines: breakpoints.iter().map(|b| b.line).collect(),
        breakpoints,
        source_modified: false,
    }
}

/// The rows of placed function breakpoints, one per asked name in order, shaped like the
/// adapter's own function breakpoint results: the adapter's answer for the placed line (with
/// its file, and how it was placed), or unverified with why it was not placed.
pub(crate) fn placed_results(
    names: &[String],
    placement: &Placement,
    answers: &[(Placed, Breakpoint)],
) -> Vec<Breakpoint> {
    names
        .iter()
        .map(|name| {
            if let Some((p, bp)) = answers.iter().find(|(p, _)| &p.name == name) {
                let mut bp = bp.clone();
                if bp.source.as_ref().and_then(|s| s.path.as_ref()).is_none() {
                    bp.source = Some(Source {
                        path: Some(p.path.display().to_string()),
                        name: None,
                    });
                }
                bp.line = bp.line.or(Some(p.line));
                let how = format!("placed on {}, definition from {}", p.how, placement.by);
                bp.message = Some(match bp.message.as_deref() {
                    Some(m) if !m.is_empty() => format!("{m}; {how}"),
                    _ => how,
                });
                bp
            } else {
                let why = placement
                    .unplaced
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, w)| w.clone())
                    .unwrap_or_else(|| "not placed".to_string());
                Breakpoint {
                    verified: false,
                    message: Some(why),
                    ..Breakpoint::default()
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_line_follows_the_opening_line() {
        let dart = "int add(int a, int b) {\n  // sum\n\n  return a + b;\n}\n";
        assert_eq!(
            body_line(dart, 1, Some(5)),
            (4, "the first line of its body")
        );
        let py = "def greet(self,\n          name):\n    \"\"\"Say hello.\n\n    Twice.\"\"\"\n    return name\n";
        assert_eq!(body_line(py, 1, None), (6, "the first line of its body"));
        let one = "int twice(int n) => n * 2;\n";
        assert_eq!(body_line(one, 1, None), (1, "the line its body is on"));
        let braces = "void f() { g(); }\n";
        assert_eq!(body_line(braces, 1, None), (1, "the line its body is on"));
        let empty = "void nothing() {\n}\n";
        assert_eq!(
            body_line(empty, 1, Some(2)),
            (1, "its definition line (its body has no line of code)")
        );
        assert_eq!(body_line("x = 1\n", 1, Some(1)), (1, "its definition line"));
        let doc1 = "def f():\n    \"\"\"One line.\"\"\"\n    return 1\n";
        assert_eq!(body_line(doc1, 1, None), (3, "the first line of its body"));
        // Lines end at a lone `\r` too, as Python reads them.
        let cr = "def f():\r    \"\"\"Doc.\"\"\"\r\r    return 1\r";
        assert_eq!(body_line(cr, 1, None), (4, "the first line of its body"));
    }
}
