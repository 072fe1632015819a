//! `witness_scale ROOT NEAR NAME...` — the identifier witness over one tree, as `cargo xtask
//! bench scale` measures it at each size of the Linux tree (issue 44): the first query (it walks
//! the tree and indexes every file of NEAR's language family), then each NAME once more (warm)
//! and the first NAME ten times (repeated). Prints one JSON line: files indexed, skipped, the
//! build, the warm median, the repeated median and each name's occurrence count. The process's
//! peak RSS is the caller's to read (it runs this as one process).
#![allow(clippy::unwrap_used)] // a benchmark: a failed unwrap is a failed run

use agent_tools::{Registry, RunInfo};
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Past this many occurrences a query says it was cut (a whole-tree `kfree` has ~20,000).
const MAX: usize = 1_000_000;

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(near)) = (args.next(), args.next()) else {
        eprintln!("usage: witness_scale ROOT NEAR NAME...");
        std::process::exit(2);
    };
    let names: Vec<String> = args.collect();
    assert!(!names.is_empty(), "usage: witness_scale ROOT NEAR NAME...");
    let root = PathBuf::from(root).canonicalize().unwrap();
    let near = root.join(near);
    let reg = Registry::new(RunInfo {
        root: root.clone(),
        ..Default::default()
    });
    agent_tools::astgrep::attach(&reg, Default::default());
    let w = reg.witness().expect("agent-astgrep provides the witness");
    let t = Instant::now();
    let first = w.occurrences(&near, &names[0], MAX).unwrap();
    let build = t.elapsed().as_secs_f64() * 1000.0;
    let mut counts = vec![first.occurrences.len()];
    let mut warm = Vec::new();
    for name in &names[1..] {
        let t = Instant::now();
        let s = w.occurrences(&near, name, MAX).unwrap();
        warm.push(t.elapsed());
        counts.push(s.occurrences.len());
    }
    let mut repeated = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        w.occurrences(&near, &names[0], MAX).unwrap();
        repeated.push(t.elapsed());
    }
    println!(
        "{}",
        json!({
            "files": first.files,
            "skipped": first.skipped,
            "truncated": first.truncated,
            "build_ms": build,
            "warm_ms": if warm.is_empty() { None } else { Some(median(warm)) },
            "repeated_ms": median(repeated),
            "counts": counts,
        })
    );
}
