//! The `*** Begin Patch … *** End Patch` envelope (the patch format GPT-family models write):
//! `*** Add File: p` (every line `+`), `*** Delete File: p`, `*** Update File: p` with an optional
//! `*** Move to: q` and chunks of ` ` / `-` / `+` lines, each chunk opened by `@@` (optionally
//! followed by a line of the file to search from, such as a function's signature) and optionally
//! closed by `*** End of File`.
//!
//! Chunks apply in order, each searched from where the previous one ended. A chunk whose context
//! and `-` lines are not found is an error that quotes them; a chunk they match at more than one
//! place (with no `@@` line to tell them apart) is refused with the line numbers — a write never
//! acts on a guess. Lines are matched exactly first, then under each [`Tolerance`] in turn; a
//! chunk matched under one must match one place, anchor or not.

use crate::error::{ApplyError, ParseError};
use crate::patch::{Lines, Tolerance, Tolerated, ambiguous, places, replacement, split};

/// One chunk of an update.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The text after `@@ `: a line of the file the chunk lies after.
    pub anchor: Option<String>,
    /// (' ' | '-' | '+', text).
    pub lines: Vec<(char, String)>,
    /// `*** End of File`: the chunk ends the file.
    pub at_eof: bool,
}

/// One file operation of the envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// Whether `text` is an envelope (its first non-blank line is `*** Begin Patch`).
pub fn is_envelope(text: &str) -> bool {
    text.lines().find(|l| !l.trim().is_empty()).map(str::trim) == Some("*** Begin Patch")
}

/// The operation headers a line may open with, after any leading whitespace (models indent
/// them, and pad `*** End Patch`: codex's scenarios 017 and 020).
const HEADERS: &[&str] = &[
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
    "*** End of File",
    "*** End Patch",
];

/// `line` as a header (its leading whitespace dropped) when it is one, else as it is.
fn header(line: &str) -> &str {
    let t = line.trim_start();
    if HEADERS.iter().any(|h| t.starts_with(h)) {
        t
    } else {
        line
    }
}

/// Parse an envelope.
pub fn parse(text: &str) -> Result<Vec<Op>, ParseError> {
    let lines: Vec<&str> = text.lines().map(header).collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "*** Begin Patch")
        .ok_or(ParseError::NoBegin)?;
    let mut ops = Vec::new();
    let mut i = start + 1;
    let mut ended = false;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "*** End Patch" {
            ended = true;
            break;
        }
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            i += 1;
            let mut content = String::new();
            while let Some(l) = lines.get(i).and_then(|l| l.strip_prefix('+')) {
                content.push_str(l);
                content.push('\n');
                i += 1;
            }
            ops.push(Op::Add {
                path: path.trim().to_string(),
                content,
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            ops.push(Op::Delete {
                path: path.trim().to_string(),
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            i += 1;
            let move_to = match lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                Some(to) => {
                    i += 1;
                    Some(to.trim().to_string())
                }
                None => None,
            };
            let mut chunks: Vec<Chunk> = Vec::new();
            while i < lines.len() && !lines[i].starts_with("*** ") {
                let l = lines[i];
                if let Some(rest) = l.strip_prefix("@@") {
                    let anchor = rest.trim();
                    chunks.push(Chunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        lines: Vec::new(),
                        at_eof: false,
                    });
                    i += 1;
                    continue;
                }
                if chunks.is_empty() {
                    // The first chunk may omit its `@@` line.
                    chunks.push(Chunk {
                        anchor: None,
                        lines: Vec::new(),
                        at_eof: false,
                    });
                }
                let (kind, rest) = match l.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => (c, &l[1..]),
                    None => (' ', ""),
                    Some(_) => {
                        return Err(ParseError::ChunkLine {
                            line: i + 1,
                            text: l.to_string(),
                            path: path.trim().to_string(),
                        });
                    }
                };
                if let Some(c) = chunks.last_mut() {
                    c.lines.push((kind, rest.to_string()));
                }
                i += 1;
                if lines.get(i).is_some_and(|l| l.trim() == "*** End of File") {
                    if let Some(c) = chunks.last_mut() {
                        c.at_eof = true;
                    }
                    i += 1;
                }
            }
            if chunks.iter().all(|c| c.lines.is_empty()) && move_to.is_none() {
                return Err(ParseError::EmptyUpdate {
                    line: i.saturating_sub(1) + 1,
                    path: path.trim().to_string(),
                });
            }
            ops.push(Op::Update {
                path: path.trim().to_string(),
                move_to,
                chunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(ParseError::UnknownOperation {
                line: i + 1,
                text: line.to_string(),
            });
        }
    }
    if !ended {
        return Err(ParseError::NoEnd);
    }
    if ops.is_empty() {
        return Err(ParseError::NoOperation);
    }
    Ok(ops)
}

/// Where `want` occurs in `lines` at or after `from` (ending the file, with `at_eof`), at the
/// first tolerance that finds it anywhere.
fn find(lines: &[String], want: &[&str], from: usize, at_eof: bool) -> (Vec<usize>, Tolerance) {
    let last = lines.len().saturating_sub(want.len());
    let candidates = (from..=last).filter(|&at| !at_eof || at + want.len() == lines.len());
    for level in Tolerance::ALL {
        let found = places(lines, want, level, candidates.clone());
        if !found.is_empty() {
            return (found, level);
        }
    }
    (Vec::new(), Tolerance::Exact)
}

/// Apply an update's chunks to `old`; with the chunks that needed a tolerance.
pub fn apply(old: &str, chunks: &[Chunk]) -> Result<(String, Tolerated), ApplyError> {
    let Lines { lines, eol } = split(old);
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut tolerated = Tolerated::default();
    let mut cursor = 0usize;
    for (n, c) in chunks.iter().enumerate() {
        if let Some(anchor) = &c.anchor {
            let (at, _) = find(&out, &[anchor.as_str()], cursor, false);
            let Some(&at) = at.first() else {
                return Err(ApplyError::AnchorNotFound {
                    chunk: n + 1,
                    anchor: anchor.clone(),
                    after: cursor,
                });
            };
            cursor = at + 1;
        }
        let before: Vec<&str> = c
            .lines
            .iter()
            .filter(|(k, _)| *k != '+')
            .map(|(_, t)| t.as_str())
            .collect();
        let at = if before.is_empty() {
            if c.anchor.is_some() {
                cursor
            } else {
                out.len()
            }
        } else {
            let (found, level) = find(&out, &before, cursor, c.at_eof);
            if level != Tolerance::Exact && found.len() > 1 {
                return Err(ambiguous(
                    &format!("chunk {}", n + 1),
                    level,
                    &found,
                    &out,
                    |at| format!("line {}", at + 1),
                ));
            }
            tolerated.add(level);
            match found.as_slice() {
                [] => {
                    return Err(ApplyError::ChunkNotFound {
                        chunk: n + 1,
                        after: cursor,
                        lines: before.iter().map(|l| l.to_string()).collect(),
                    });
                }
                [one] => *one,
                many if c.anchor.is_none() => {
                    return Err(ApplyError::ChunkRepeats {
                        chunk: n + 1,
                        at: many.iter().map(|a| a + 1).collect(),
                    });
                }
                many => many[0],
            }
        };
        let after = replacement(&out, at, &c.lines, eol);
        let added = after.len();
        out.splice(at..at + before.len(), after);
        cursor = at + added;
    }
    let count = out.len();
    for line in out.iter_mut().take(count.saturating_sub(1)) {
        if !line.ends_with('\n') {
            line.push_str(eol);
        }
    }
    Ok((out.concat(), tolerated))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def f():\n-    return 1\n+    return 2\n*** Delete File: gone.txt\n*** End Patch\n";

    #[test]
    fn parses_every_operation() {
        assert!(is_envelope(P));
        let ops = parse(P).unwrap();
        assert_eq!(
            ops,
            vec![
                Op::Add {
                    path: "new.txt".into(),
                    content: "hello\nworld\n".into()
                },
                Op::Update {
                    path: "src/a.py".into(),
                    move_to: Some("src/b.py".into()),
                    chunks: vec![Chunk {
                        anchor: Some("def f():".into()),
                        lines: vec![('-', "    return 1".into()), ('+', "    return 2".into())],
                        at_eof: false
                    }]
                },
                Op::Delete {
                    path: "gone.txt".into()
                },
            ]
        );
    }

    #[test]
    fn anchors_pick_the_place_and_ambiguity_is_refused() {
        let old = "def f():\n    return 1\n\ndef g():\n    return 1\n";
        let chunk = |anchor: Option<&str>| Chunk {
            anchor: anchor.map(str::to_string),
            lines: vec![('-', "    return 1".into()), ('+', "    return 2".into())],
            at_eof: false,
        };
        assert_eq!(
            apply(old, &[chunk(Some("def g():"))]).unwrap().0,
            "def f():\n    return 1\n\ndef g():\n    return 2\n"
        );
        let err = apply(old, &[chunk(None)]).unwrap_err().to_string();
        assert!(err.contains("occur at lines 2, 5"), "{err}");
        let err = apply(old, &[chunk(Some("def h():"))])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`@@ def h():` line is not in the file"),
            "{err}"
        );
    }

    #[test]
    fn keeps_crlf_and_tolerates_trailing_whitespace() {
        let old = "a  \r\nb\r\n";
        let c = Chunk {
            anchor: None,
            lines: vec![(' ', "a".into()), ('-', "b".into()), ('+', "B".into())],
            at_eof: true,
        };
        let (text, tolerated) = apply(old, &[c]).unwrap();
        assert_eq!(text, "a  \r\nB\r\n");
        assert_eq!(tolerated.trailing_whitespace, 1);
    }

    #[test]
    fn unterminated_or_malformed_envelopes_are_errors() {
        let err = parse("*** Begin Patch\n*** Delete File: x\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("End Patch"), "{err}");
        let err = parse("*** Begin Patch\n*** Frobnicate: x\n*** End Patch\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected `*** Add File: `"), "{err}");
        let err =
            parse("*** Begin Patch\n*** Update File: x\n@@\nnot a chunk line\n*** End Patch\n")
                .unwrap_err()
                .to_string();
        assert!(err.contains("starts with ' ', '-' or '+'"), "{err}");
    }
}
