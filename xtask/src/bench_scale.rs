//! `cargo xtask bench scale` (issue 44): cost as the tree grows. One real C tree (Debian's Linux
//! 6.1 source, `linux-source-6.1`, unpacked outside the checkout on first use) at three
//! sizes — `drivers/net`, `drivers`, the whole tree — searched process per call, as a harness
//! without a long-lived host runs the tools: `grep` against ripgrep (`rg -c`, the same
//! pattern; the counts must be identical; median of 7, the two run in turn, after a warm-up)
//! and `ast_grep` against the ast-grep CLI (median of 3, the two in turn; one run each on the
//! whole tree, where the CLI takes a minute), with each process's peak RSS; and the identifier
//! witness (`examples/witness_scale.rs`, one process per size: the first query walks and
//! indexes the tree, then warm and repeated queries) against ripgrep's whole-word count of the
//! same name, with its peak RSS. Prints the ratio at every size; docs/benchmarks.md records a
//! run.

use crate::bench_calls::{median, timed};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The three sizes of the tree, smallest first.
const SIZES: &[&str] = &["drivers/net", "drivers", "."];

/// grep's patterns: (name, pattern, literal).
const GREPS: &[(&str, &str, bool)] = &[
    ("literal `kfree(`", "kfree(", true),
    (
        "regex `memcpy\\([^,]+, [^,]+, sizeof`",
        "memcpy\\([^,]+, [^,]+, sizeof",
        false,
    ),
];

/// The witness's names: the first is timed cold (the index build), then the others warm. A
/// name's first query parses every file that may hold it, so a name in thousands of files
/// (`kfree`: 5,918 sites in `drivers/net`, 16.9 s for its first query there) would make the
/// whole tree's run take many minutes; these two hold hundreds.
const NAMES: &[&str] = &["netif_rx", "dev_kfree_skb_any"];

/// The file the witness is asked near (its language family picks what is indexed).
const NEAR: &str = "drivers/net/loopback.c";

/// ast_grep's patterns, the issue's.
const PATTERNS: &[&str] = &[
    "kfree($X)",
    "if ($A == NULL) return $B;",
    "memcpy($A, $B, sizeof($C))",
];

/// The unpacked tree: `/var/tmp/agent-tools-corpora/linux-source-6.1` (`AGENT_TOOLS_CORPORA`
/// names another folder), from `/usr/src`'s tarball when the package is installed, else from the
/// package fetched with `apt-get download`. Outside this checkout on purpose: inside a git
/// repository the tree's own `.gitignore` (`/*`, then `!/debian/`) counts, as git counts it,
/// and both tools search nothing at its root; the bench measures the tree as a user unpacks it.
fn kernel_tree() -> Result<PathBuf> {
    let corpora = std::env::var_os("AGENT_TOOLS_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/agent-tools-corpora"));
    let tree = corpora.join("linux-source-6.1");
    if tree.join("MAINTAINERS").is_file() {
        let inside = Command::new("git")
            .args(["rev-parse", "--is-inside-work-tree"])
            .current_dir(&tree)
            .output()?;
        if inside.status.success() {
            bail!(
                "{} is inside a git repository, whose ignore rules hide the tree's files: set AGENT_TOOLS_CORPORA to a folder outside any",
                tree.display()
            );
        }
        return Ok(tree);
    }
    std::fs::create_dir_all(&corpora)?;
    let installed = PathBuf::from("/usr/src/linux-source-6.1.tar.xz");
    let tarball = if installed.is_file() {
        installed
    } else {
        let tmp = corpora.join(".linux-source-download");
        std::fs::create_dir_all(&tmp)?;
        println!("fetching linux-source-6.1 (apt-get download, about 140 MB)");
        crate::run(
            Command::new("apt-get")
                .args(["download", "linux-source-6.1"])
                .current_dir(&tmp),
        )?;
        let deb = std::fs::read_dir(&tmp)?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "deb"))
            .context("apt-get download left no .deb")?;
        crate::run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tmp))?;
        tmp.join("usr/src/linux-source-6.1.tar.xz")
    };
    println!("unpacking {}", tarball.display());
    crate::run(
        Command::new("tar")
            .arg("-xf")
            .arg(&tarball)
            .arg("-C")
            .arg(&corpora),
    )?;
    let _ = std::fs::remove_dir_all(corpora.join(".linux-source-download"));
    Ok(tree)
}

fn structured(stdout: &[u8]) -> Result<Value> {
    let v: Value = serde_json::from_slice(stdout).context("`call --json` printed no JSON")?;
    Ok(v["structuredContent"].clone())
}

/// Median wall time, largest peak RSS (MiB) and the last run's stdout of `cmd`: `runs` runs
/// after a warm-up, or one run without when `runs` is 1 (the tree's pages are warm from the
/// searches before).
fn measure(cmd: &[&str], cwd: &Path, runs: usize) -> Result<(Duration, f64, Vec<u8>)> {
    if runs > 1 {
        timed(cmd, cwd)?;
    }
    let (mut walls, mut rss, mut out) = (Vec::new(), 0u64, Vec::new());
    for _ in 0..runs {
        let t = timed(cmd, cwd)?;
        walls.push(t.wall);
        rss = rss.max(t.rss_kib);
        out = t.stdout;
    }
    Ok((median(walls), rss as f64 / 1024.0, out))
}

/// How many times each grep command runs, ours and the peer's in turn.
const GREP_RUNS: usize = 7;

/// How many times each ast_grep search runs below the whole tree (there once: the CLI takes
/// about a minute), ours and the CLI's in turn.
const ASTGREP_RUNS: usize = 3;

/// How many runs [`measure_pair`] makes of each command.
enum Runs {
    /// After a warm-up of both.
    Warmed(usize),
    /// Without one (the tree's pages are warm from the searches before).
    Cold(usize),
}

/// The median wall time, the largest peak RSS (MiB) and the last run's stdout of a command.
type Measured = (Duration, f64, Vec<u8>);

/// [`measure`] of `ours` and `peer` run in turn: a machine that slows down for a while slows
/// both (run one after the other, a slow spell during one command's runs showed as its ratio:
/// the same grep measured 1.07× and 1.27× on `drivers/` in one session; ast_grep's median read
/// 0.44× and 0.52× with ast_grep unchanged).
fn measure_pair(
    ours: &[&str],
    peer: &[&str],
    cwd: &Path,
    runs: Runs,
) -> Result<(Measured, Measured)> {
    let runs = match runs {
        Runs::Warmed(n) => {
            timed(ours, cwd)?;
            timed(peer, cwd)?;
            n
        }
        Runs::Cold(n) => n,
    };
    let mut sides: [(Vec<Duration>, u64, Vec<u8>); 2] = Default::default();
    for _ in 0..runs {
        for (side, cmd) in sides.iter_mut().zip([ours, peer]) {
            let t = timed(cmd, cwd)?;
            side.0.push(t.wall);
            side.1 = side.1.max(t.rss_kib);
            side.2 = t.stdout;
        }
    }
    let [a, b] = sides;
    Ok((
        (median(a.0), a.1 as f64 / 1024.0, a.2),
        (median(b.0), b.1 as f64 / 1024.0, b.2),
    ))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The witness example, built in release.
fn witness_binary(root: &Path) -> Result<PathBuf> {
    let mut c = crate::cargo(root);
    c.args([
        "build",
        "-q",
        "--release",
        "-p",
        "agent-tools",
        "--features",
        "astgrep",
        "--example",
        "witness_scale",
    ]);
    crate::run(&mut c)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release/examples/witness_scale"))
}

/// The witness at one size: one process (the index is built by its first query), against
/// `rg -w --count-matches` of the first name (ripgrep has no index: every query is a first).
fn witness_row(witness: &str, rg: &str, tree: &Path, size: &str) -> Result<()> {
    let dir = tree.join(size);
    let near = Path::new(NEAR)
        .strip_prefix(size.trim_start_matches("./"))
        .unwrap_or(Path::new(NEAR));
    let (near_s, dir_s) = (near.display().to_string(), dir.display().to_string());
    let mut cmd = vec![witness, dir_s.as_str(), near_s.as_str()];
    cmd.extend(NAMES);
    let ours = measure(&cmd, tree, 1)?;
    let v: Value = serde_json::from_slice(&ours.2).context("witness_scale printed no JSON")?;
    let peer = measure(
        &[rg, "-w", "--count-matches", "-t", "c", "--", NAMES[0], size],
        tree,
        3,
    )?;
    let peer_count: u64 = String::from_utf8_lossy(&peer.2)
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
        .sum();
    let build = v["build_ms"].as_f64().unwrap_or(0.0);
    println!(
        "| {size} | witness | `{}`: first query (index of {} files, {} skipped) / warm / repeated | {build:.0} / {:.1} / {:.1} ms | {:.0} ms | {:.2}× (first) | {} / {peer_count} (identifiers / rg -w) | {:.0} / {:.0} MB |",
        NAMES[0],
        v["files"],
        v["skipped"],
        v["warm_ms"].as_f64().unwrap_or(0.0),
        v["repeated_ms"].as_f64().unwrap_or(0.0),
        ms(peer.0),
        build / ms(peer.0),
        v["counts"][0],
        ours.1,
        peer.1
    );
    Ok(())
}

pub fn run(root: &Path, bin: &Path) -> Result<()> {
    let tree = kernel_tree()?;
    let witness = witness_binary(root)?.display().to_string();
    let rg = crate::setup::on_path("rg")
        .context("ripgrep (`rg`) is the peer: apt-get install ripgrep")?;
    let sg = root.join(".tools/node/node_modules/.bin/ast-grep");
    if !sg.is_file() {
        bail!("the peer `ast-grep` is not installed (cargo xtask setup)");
    }
    let (bin_s, rg_s, sg_s) = (
        bin.display().to_string(),
        rg.display().to_string(),
        sg.display().to_string(),
    );
    let root_s = tree.display().to_string();
    println!(
        "tree: {root_s} (Linux 6.1); process per call; grep: median of {GREP_RUNS}, ours and ripgrep in turn, after a warm-up; ast_grep: median of {ASTGREP_RUNS} in turn, one run each on the whole tree"
    );
    println!("| size | tool | pattern | ours | peer | ratio | counts | RSS ours / peer |");
    println!("|---|---|---|---|---|---|---|---|");
    for size in SIZES {
        for (name, pattern, literal) in GREPS {
            let args = json!({"pattern": pattern, "literal": literal, "path": size, "limit": 5});
            let args_s = args.to_string();
            let mut peer_cmd = vec![rg_s.as_str(), "-c"];
            if *literal {
                peer_cmd.push("--fixed-strings");
            }
            peer_cmd.extend(["--", pattern, size]);
            let (ours, peer) = measure_pair(
                &[&bin_s, "call", "grep", &args_s, "--json", "--root", &root_s],
                &peer_cmd,
                &tree,
                Runs::Warmed(GREP_RUNS),
            )?;
            let our_count = structured(&ours.2)?["matches"].as_u64().unwrap_or(0);
            let peer_count: u64 = String::from_utf8_lossy(&peer.2)
                .lines()
                .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
                .sum();
            println!(
                "| {size} | grep | {name} | {:.0} ms | {:.0} ms | {:.2}× | {} | {:.0} / {:.0} MB |",
                ms(ours.0),
                ms(peer.0),
                ms(ours.0) / ms(peer.0),
                if our_count == peer_count {
                    format!("{our_count} = {peer_count}")
                } else {
                    format!("**{our_count} ≠ {peer_count}**")
                },
                ours.1,
                peer.1
            );
        }
        witness_row(&witness, &rg_s, &tree, size)?;
        for pattern in PATTERNS {
            let args = json!({"pattern": pattern, "language": "c", "path": size});
            let args_s = args.to_string();
            let (ours, peer) = measure_pair(
                &[
                    &bin_s, "call", "ast_grep", &args_s, "--json", "--root", &root_s,
                ],
                &[
                    &sg_s,
                    "run",
                    "-p",
                    pattern,
                    "-l",
                    "c",
                    "--json=stream",
                    size,
                ],
                &tree,
                Runs::Cold(if *size == "." { 1 } else { ASTGREP_RUNS }),
            )?;
            let our_count = structured(&ours.2)?["total"].as_u64().unwrap_or(0);
            let peer_count = peer
                .2
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .count();
            println!(
                "| {size} | ast_grep | `{pattern}` | {:.0} ms | {:.0} ms | {:.2}× | {our_count} / {peer_count}{} | {:.0} / {:.0} MB |",
                ms(ours.0),
                ms(peer.0),
                ms(ours.0) / ms(peer.0),
                if our_count == peer_count as u64 {
                    ""
                } else {
                    " (the pattern parses differently)"
                },
                ours.1,
                peer.1
            );
        }
    }
    Ok(())
}
