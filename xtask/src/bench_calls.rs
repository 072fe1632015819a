//! `cargo xtask bench calls` (issue 26): `ast_grep` as a harness without a long-lived host runs
//! it, one `agent-tools call` process per search, and in one `serve` run over all three corpora,
//! against the `ast-grep` CLI on the same files with the same patterns: wall time (median of 3
//! after a warm-up, the two programs alternating), peak RSS of each process, and whether both
//! counted the same matches (ours lists at most its default `max_results`, and counts all); then the host's first and second searches and its RSS after all
//! three corpora.

use crate::stdio_host::Host;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Corpus {
    name: &'static str,
    dir: &'static str,
    lang: &'static str,
    patterns: &'static [&'static str],
}

/// The corpora and patterns of the issue. The patterns are `agent_astgrep::bench_patterns`'s
/// (what `crates/agent-astgrep/examples/bench` searches), written out here because xtask must
/// build without the grammars (it is what installs the tools first); a test holds them equal.
const CORPORA: &[Corpus] = &[
    Corpus {
        name: "django 5.2.8",
        dir: "django",
        lang: "python",
        patterns: &[
            "print($X)",
            "isinstance($X, $T)",
            "$A == $A",
            "raise $E($$$ARGS)",
            "$M.objects.filter($$$A)",
            "def __init__(self, $$$A):\n    $$$B",
        ],
    },
    Corpus {
        name: "typescript (npm package)",
        dir: "typescript",
        lang: "javascript",
        patterns: &[
            "console.log($$$A)",
            "typeof $X === $Y",
            "$A.push($B)",
            "new Map()",
            "if ($C) { return $R; }",
        ],
    },
    Corpus {
        name: "typescript without lib/typescript.js (the files the CLI searches)",
        dir: "typescript-same",
        lang: "javascript",
        patterns: &[
            "console.log($$$A)",
            "typeof $X === $Y",
            "$A.push($B)",
            "new Map()",
            "if ($C) { return $R; }",
        ],
    },
    Corpus {
        name: "cargo registry (120 crates)",
        dir: "cargo",
        lang: "rust",
        patterns: &[
            "$E.unwrap()",
            "Some($X)",
            "let $A = $B;",
            "impl $T for $U { $$$ }",
            "matches!($$$A)",
        ],
    },
];

/// The corpora to measure: all, or those `BENCH_CALLS_ONLY` names (their folder names,
/// comma-separated: `django,typescript,typescript-same,cargo`).
fn corpora() -> Vec<&'static Corpus> {
    let only = std::env::var("BENCH_CALLS_ONLY").ok();
    CORPORA
        .iter()
        .filter(|c| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|d| d == c.dir))
        })
        .collect()
}

/// One process's wall time and peak RSS (KiB, as GNU time's `%M` reports it) and its stdout.
pub(crate) struct Timed {
    pub wall: Duration,
    pub rss_kib: u64,
    pub stdout: Vec<u8>,
}

pub(crate) fn timed(cmd: &[&str], cwd: &Path) -> Result<Timed> {
    let rss_file = std::env::temp_dir().join(format!("bench-calls-rss-{}", std::process::id()));
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .args(cmd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .context("/usr/bin/time (GNU time) runs each process")?;
    let wall = start.elapsed();
    let rss = std::fs::read_to_string(&rss_file)?;
    let rss_kib = rss
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .with_context(|| format!("GNU time wrote no peak RSS: {rss:?}"))?;
    // ast-grep exits 1 when nothing matched, as grep does; `call` exits 1 on a tool error,
    // which `--json` still prints (and `our_total` then finds no total).
    if !out.status.success() && out.status.code() != Some(1) {
        bail!("{cmd:?} failed: {}", out.status);
    }
    Ok(Timed {
        wall,
        rss_kib,
        stdout: out.stdout,
    })
}

/// The bench's root: each corpus hard-linked (copied when links fail) under one directory, so
/// one `serve` run can search all three; `cargo` holds the first 120 crates of the registry.
fn corpora_root(root: &Path) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join("agent-tools-bench-calls");
    if dir.join(".done-2").exists() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cargo"))?;
    let django = first_subdir(&root.join(".tools/corpora"))?;
    link(&django, &dir.join("django"))?;
    let typescript = root.join(".tools/node/node_modules/typescript");
    link(&typescript, &dir.join("typescript"))?;
    // The CLI does not search the 9 MB lib/typescript.js (we do, and find its matches): this copy
    // leaves it out, so its rows compare the same work.
    link(&typescript, &dir.join("typescript-same"))?;
    std::fs::remove_file(dir.join("typescript-same/lib/typescript.js"))?;
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let src = home.join("registry/src");
    let index = std::fs::read_dir(&src)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index.crates.io-"))
        })
        .with_context(|| format!("no crates.io sources under {}", src.display()))?;
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&index)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    if crates.len() < 120 {
        bail!(
            "{} holds {} crates; the bench takes 120",
            index.display(),
            crates.len()
        );
    }
    for c in &crates[..120] {
        link(
            c,
            &dir.join("cargo").join(c.file_name().context("crate dir")?),
        )?;
    }
    std::fs::write(dir.join(".done-2"), "")?;
    Ok(dir)
}

fn first_subdir(dir: &Path) -> Result<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{} (run `cargo xtask setup`)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .next()
        .with_context(|| format!("no folder in {}", dir.display()))
}

fn link(from: &Path, to: &Path) -> Result<()> {
    let ok = Command::new("cp").arg("-al").arg(from).arg(to).status()?;
    if ok.success() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(to);
    let ok = Command::new("cp").arg("-a").arg(from).arg(to).status()?;
    if !ok.success() {
        bail!("cp -a {} {}: {ok}", from.display(), to.display());
    }
    Ok(())
}

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn median_f(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn args(corpus: &Corpus, pattern: &str, path: Option<&str>) -> Value {
    // `max_results` at its default, as a harness calls: the count (`total`) covers every match,
    // the listing is capped; the CLI prints every match.
    let mut a = json!({"pattern": pattern, "language": corpus.lang});
    if let Some(p) = path {
        a["path"] = json!(p);
    }
    a
}

fn our_total(stdout: &[u8]) -> Result<u64> {
    let v: Value = serde_json::from_slice(stdout).context("`call --json` printed no JSON")?;
    v.pointer("/structuredContent/total")
        .and_then(Value::as_u64)
        .with_context(|| format!("no structuredContent.total in {}", v["content"]))
}

fn sg_total(stdout: &[u8]) -> u64 {
    stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count() as u64
}

pub fn run(root: &Path, bin: &Path) -> Result<()> {
    let sg = [
        root.join(".tools/node/node_modules/.bin/ast-grep"),
        PathBuf::from("/usr/bin/ast-grep"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .context("the peer `ast-grep` is not installed (cargo xtask setup)")?;
    let sg_s = sg.display().to_string();
    let bin_s = bin.display().to_string();
    let base = corpora_root(root)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads_s = threads.to_string();
    println!(
        "process per call: `agent-tools call ast_grep` vs `{} run --json=stream --threads {threads}`, median of 3 after a warm-up, alternating",
        sg.display()
    );
    let mut ratios = Vec::new();
    let mut rss_ratios = Vec::new();
    // The searches where both programs searched the same files (same matches).
    let mut same_ratios = Vec::new();
    let mut same_rss = Vec::new();
    let mut sg_medians = Vec::new();
    for corpus in corpora() {
        let dir = base.join(corpus.dir);
        println!("\n{} — {}", corpus.name, corpus.lang);
        println!(
            "  {:<34} {:>9} {:>9} {:>7}  {:>8} {:>8} {:>6}  same",
            "pattern", "ours ms", "sg ms", "ratio", "ours MB", "sg MB", "rss"
        );
        let mut medians = Vec::new();
        for pattern in corpus.patterns {
            let a = args(corpus, pattern, None).to_string();
            let ours_cmd = [
                bin_s.as_str(),
                "call",
                "ast_grep",
                a.as_str(),
                "--json",
                "--root",
                ".",
            ];
            let sg_cmd = [
                sg_s.as_str(),
                "run",
                "--pattern",
                pattern,
                "--lang",
                corpus.lang,
                "--json=stream",
                "--threads",
                threads_s.as_str(),
                ".",
            ];
            let warm_ours = timed(&ours_cmd, &dir)?;
            let warm_sg = timed(&sg_cmd, &dir)?;
            let same = our_total(&warm_ours.stdout)? == sg_total(&warm_sg.stdout);
            let (mut ow, mut sw, mut orss, mut srss) = (vec![], vec![], 0, 0);
            for _ in 0..3 {
                let o = timed(&ours_cmd, &dir)?;
                let s = timed(&sg_cmd, &dir)?;
                ow.push(o.wall);
                sw.push(s.wall);
                orss = orss.max(o.rss_kib);
                srss = srss.max(s.rss_kib);
            }
            let (o, s) = (median(ow), median(sw));
            let ratio = o.as_secs_f64() / s.as_secs_f64();
            let rss = orss as f64 / srss as f64;
            ratios.push(ratio);
            if same {
                same_ratios.push(ratio);
                same_rss.push(rss);
            }
            rss_ratios.push(rss);
            medians.push(s);
            println!(
                "  {:<34} {:>9.0} {:>9.0} {:>6.2}x  {:>8.1} {:>8.1} {:>5.2}x  {}",
                pattern.replace('\n', "⏎"),
                o.as_secs_f64() * 1e3,
                s.as_secs_f64() * 1e3,
                ratio,
                orss as f64 / 1024.0,
                srss as f64 / 1024.0,
                rss,
                if same {
                    "yes".to_string()
                } else {
                    format!(
                        "no ({} vs {})",
                        our_total(&warm_ours.stdout)?,
                        sg_total(&warm_sg.stdout)
                    )
                }
            );
        }
        sg_medians.push(medians);
    }
    let max = ratios.iter().copied().fold(0.0, f64::max);
    let rss_max = rss_ratios.iter().copied().fold(0.0, f64::max);
    println!(
        "\nprocess per call over {} searches: median {:.2}x the CLI (goal <= 0.5x), highest {:.2}x (goal <= 1.1x), geometric mean {:.2}x; peak RSS at most {:.2}x the CLI's (goal <= 1.5x)",
        ratios.len(),
        median_f(&ratios),
        max,
        geomean(&ratios),
        rss_max
    );
    println!(
        "over the {} searches of the same files (same matches): median {:.2}x, highest {:.2}x, geometric mean {:.2}x; peak RSS at most {:.2}x",
        same_ratios.len(),
        median_f(&same_ratios),
        same_ratios.iter().copied().fold(0.0, f64::max),
        geomean(&same_ratios),
        same_rss.iter().copied().fold(0.0, f64::max)
    );
    serve_run(bin, &base, &sg_medians)
}

/// One search through a running host: wall time, the reply's total, and its walk's (files
/// answered by the memo, files searched).
fn search(host: &mut Host, corpus: &Corpus, pattern: &str) -> Result<(Duration, u64, (u64, u64))> {
    let (reply, _, took) = host.request(
        "tools/call",
        json!({"name": "ast_grep", "arguments": args(corpus, pattern, Some(corpus.dir))}),
    )?;
    let total = reply
        .pointer("/result/structuredContent/total")
        .and_then(Value::as_u64)
        .with_context(|| format!("no total in the reply: {reply}"))?;
    let stat = |name: &str| {
        reply
            .pointer(&format!("/result/structuredContent/stats/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok((
        took,
        total,
        (stat("files_remembered"), stat("files_searched")),
    ))
}

fn rss_mib(pid: u32) -> f64 {
    crate::bench::rss_kib(pid).map_or(f64::NAN, |k| k as f64 / 1024.0)
}

/// One `serve` run at the defaults over the three corpora: each corpus's first search against
/// the same search in a host with the cache off (median of 3, each in a fresh host), every
/// pattern's second search against the CLI's median above, and the host's RSS at the end.
fn serve_run(bin: &Path, base: &Path, sg_medians: &[Vec<Duration>]) -> Result<()> {
    println!(
        "\none `serve` run over the three corpora (root {})",
        base.display()
    );
    let mut first = Vec::new();
    for corpus in corpora() {
        let pattern = corpus.patterns[0];
        let mut off = Vec::new();
        for _ in 0..3 {
            let mut cold = Host::start_with(bin, base, &["--astgrep-cache-mib", "0"])?;
            off.push(search(&mut cold, corpus, pattern)?.0);
            cold.close();
        }
        let off = median(off);
        let mut on = Vec::new();
        for _ in 0..3 {
            let mut host = Host::start_with(bin, base, &[])?;
            on.push(search(&mut host, corpus, pattern)?.0);
            host.close();
        }
        let on = median(on);
        let r = on.as_secs_f64() / off.as_secs_f64();
        first.push(r);
        println!(
            "  {:<28} first search `{}`: {:.0} ms at the defaults vs {:.0} ms cache off, {r:.2}x (goal <= 1.05x)",
            corpus.name,
            pattern.replace('\n', "⏎"),
            on.as_secs_f64() * 1e3,
            off.as_secs_f64() * 1e3,
        );
    }
    let mut host = Host::start_with(bin, base, &[])?;
    let pid = host.child.id();
    // Each pattern's first search in this run, after the corpus's earlier patterns: what the
    // token index and the trees do for a search the run has not made before.
    let mut warm = Vec::new();
    for (corpus, sg) in corpora().into_iter().zip(sg_medians) {
        let mut line = Vec::new();
        for (pattern, sg) in corpus.patterns.iter().zip(sg) {
            let (took, _, _) = search(&mut host, corpus, pattern)?;
            let r = took.as_secs_f64() / sg.as_secs_f64();
            warm.push(r);
            line.push(format!("{r:.2}x"));
        }
        println!(
            "  {:<28} each pattern's first search in the run vs the CLI: {}",
            corpus.name,
            line.join(" ")
        );
    }
    let mut second = Vec::new();
    for (corpus, sg) in corpora().into_iter().zip(sg_medians) {
        let mut line = Vec::new();
        let mut remembered = 0;
        let mut searched = 0;
        for (pattern, sg) in corpus.patterns.iter().zip(sg) {
            let (took, _, stats) = search(&mut host, corpus, pattern)?;
            let r = took.as_secs_f64() / sg.as_secs_f64();
            second.push(r);
            line.push(format!("{r:.2}x"));
            remembered += stats.0;
            searched += stats.1;
        }
        println!(
            "  {:<28} second search vs the CLI: {} ({remembered} of {searched} files answered by the run's memo of the first)",
            corpus.name,
            line.join(" ")
        );
    }
    println!(
        "  each pattern's first search in the run: median {:.2}x the CLI, geometric mean {:.2}x",
        median_f(&warm),
        geomean(&warm)
    );
    println!(
        "  second search: median {:.2}x the CLI (goal <= 0.2x), geometric mean {:.2}x",
        median_f(&second),
        geomean(&second)
    );
    let at_once = rss_mib(pid);
    // The allocator returns freed pages after a delay (mimalloc's purge): the RSS the host
    // keeps while it waits for the next call, two seconds later, is the one a harness lives with.
    std::thread::sleep(Duration::from_secs(2));
    println!(
        "  host RSS after searching all three corpora at the defaults: {:.0} MB at the last reply, {:.0} MB two seconds later (goal <= 300 MB)",
        at_once,
        rss_mib(pid)
    );
    host.close();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::CORPORA;

    #[test]
    fn the_patterns_are_the_in_process_benchs() {
        for corpus in CORPORA {
            let theirs = match corpus.lang {
                "python" => agent_astgrep::bench_patterns::PYTHON,
                "javascript" => agent_astgrep::bench_patterns::JAVASCRIPT,
                "rust" => agent_astgrep::bench_patterns::RUST,
                other => panic!("no bench patterns for {other}"),
            };
            assert_eq!(corpus.patterns, theirs, "{}", corpus.name);
        }
    }
}
