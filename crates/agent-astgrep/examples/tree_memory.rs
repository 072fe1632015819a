//! Measure what a parsed file held by the parse cache costs in memory, for the cache's charge
//! per tree (`cache.rs`, `cost`): read the files of a directory, note the process's resident
//! set (RSS), parse each (the tree keeps its own copy of the source, as in the cache), keep
//! every tree, and note the RSS again. Tree-sitter's nodes are C allocations, so RSS (with the
//! allocator's overhead, which is real) is the practical measure.
//!
//! Run: `cargo run --release -p agent-astgrep --example tree_memory -- <lang> <dir> [max MiB]`,
//! e.g. on the bench's corpora under `target/bench-astgrep/`.

#![allow(clippy::unwrap_used)] // a measurement: a failed unwrap is a failed run

use agent_astgrep::Lang;
use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::StrDoc;

fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

/// Bytes the C allocator has handed out and not had back (glibc's `mallinfo2`).
fn malloc_in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    #[allow(unsafe_code)]
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(lang_id), Some(dir)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: tree_memory <lang> <dir> [max MiB]");
        std::process::exit(2);
    };
    let max: u64 = args
        .get(3)
        .map_or(u64::MAX, |m| m.parse::<u64>().unwrap() << 20);
    let lang = Lang::from_id(lang_id).unwrap();
    let mut paths: Vec<_> = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && lang.owns(e.path()))
        .map(|e| e.into_path())
        .collect();
    paths.sort();
    let mut sources = Vec::new();
    let mut bytes = 0u64;
    for p in paths {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if bytes + text.len() as u64 > max {
            break;
        }
        bytes += text.len() as u64;
        sources.push(text);
    }
    let (before, in_use_before) = (rss(), malloc_in_use());
    let trees: Vec<_> = sources
        .iter()
        .filter_map(|s| AstGrep::<StrDoc<Lang>>::try_new(s, lang).ok())
        .collect();
    let (after, in_use_after) = (rss(), malloc_in_use());
    let held = after.saturating_sub(before);
    let files = trees.len();
    println!(
        "{lang_id}: {files} files, {:.1} MiB of source; RSS {:.1} → {:.1} MiB with every tree held: \
         {:.2}× the source ({:.0} bytes per file on average); in use by malloc: {:.2}× the source",
        bytes as f64 / 1048576.0,
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        held as f64 / bytes.max(1) as f64,
        held as f64 / files.max(1) as f64,
        in_use_after.saturating_sub(in_use_before) as f64 / bytes.max(1) as f64,
    );
    drop(trees);
}
