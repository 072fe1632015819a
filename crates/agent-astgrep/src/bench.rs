//! For `examples/bench` (issue 26): the limit a search runs against — the files a search must
//! parse, parsed with tree-sitter alone.

use crate::error::AstGrepError;
use crate::lang::Lang;
use crate::pattern;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The patterns the benches search each corpus for (issue 26's), by language:
/// `examples/bench` and `cargo xtask bench calls` both take them from here.
pub mod patterns {
    /// Django.
    pub const PYTHON: &[&str] = &[
        "print($X)",
        "isinstance($X, $T)",
        "$A == $A",
        "raise $E($$$ARGS)",
        "$M.objects.filter($$$A)",
        "def __init__(self, $$$A):\n    $$$B",
    ];
    /// The typescript package's `lib`.
    pub const JAVASCRIPT: &[&str] = &[
        "console.log($$$A)",
        "typeof $X === $Y",
        "$A.push($B)",
        "new Map()",
        "if ($C) { return $R; }",
    ];
    /// The cargo registry's crates.
    pub const RUST: &[&str] = &[
        "$E.unwrap()",
        "Some($X)",
        "let $A = $B;",
        "impl $T for $U { $$$ }",
        "matches!($$$A)",
    ];
}

/// For `examples/bench` (issue 26): the limit a search runs against. Finds the files of
/// `language` under `root` (the walk `ast_grep` makes) whose bytes hold the pattern's words
/// (a whole keyword as one) and verbatim tokens — the files a search without the run's index
/// parses — and
/// parses them with tree-sitter on `threads` threads, no matching. Returns (files parsed, their
/// bytes, wall time of the parses alone).
#[doc(hidden)]
pub fn bare_parse(
    root: &std::path::Path,
    language: &str,
    pattern: &str,
    threads: usize,
) -> Result<(usize, u64, Duration), AstGrepError> {
    let lang = Lang::from_id(language).ok_or_else(|| AstGrepError::UnknownLanguage {
        given: language.to_string(),
        valid: Lang::ids(),
    })?;
    let compiled = pattern::compile(lang, pattern)?;
    let (words, verbatim) = compiled.needles();
    let mut texts = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .require_git(false)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) || !lang.owns(entry.path()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if words
            .iter()
            .chain(&verbatim)
            .all(|n| n.occurs_in(text.as_bytes()))
        {
            texts.push(text);
        }
    }
    let bytes = texts.iter().map(|t| t.len() as u64).sum();
    Ok((texts.len(), bytes, parse_all(lang, &texts, threads)))
}

/// For `examples/bench` (issue 26): the floor under any search that parses whole files — the
/// files of `files` (relative to `root`: the files a search found a match in, each of which any
/// sound search must parse to say where its matches are) parsed with tree-sitter alone on
/// `threads` threads, no matching. Returns (their bytes, wall time of the parses alone).
#[doc(hidden)]
pub fn bare_parse_files(
    root: &std::path::Path,
    language: &str,
    files: &[String],
    threads: usize,
) -> Result<(u64, Duration), AstGrepError> {
    let lang = Lang::from_id(language).ok_or_else(|| AstGrepError::UnknownLanguage {
        given: language.to_string(),
        valid: Lang::ids(),
    })?;
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
        .collect();
    let bytes = texts.iter().map(|t| t.len() as u64).sum();
    Ok((bytes, parse_all(lang, &texts, threads)))
}

/// Parses every text on `threads` threads (each takes the next text), dropping each tree;
/// returns the wall time.
fn parse_all(lang: Lang, texts: &[String], threads: usize) -> Duration {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                let mut parser = tree_sitter::Parser::new();
                if parser.set_language(&lang.ts_language()).is_err() {
                    return;
                }
                while let Some(text) = texts.get(next.fetch_add(1, Ordering::Relaxed)) {
                    drop(parser.parse(text, None));
                }
            });
        }
    });
    start.elapsed()
}
