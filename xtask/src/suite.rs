//! `cargo xtask test`: the whole suite against the installed programs, its counts summed.

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Stdio;

use crate::{cargo, dist};

/// What `cargo xtask test` was asked: the long statistical runs or the default sample, and the
/// arguments passed on to `cargo test`.
pub(crate) struct Run {
    long: bool,
    /// How many test binaries run at once (`--jobs N`; `--jobs 1` runs them one after another,
    /// as `cargo test` does).
    jobs: usize,
    cargo_args: Vec<String>,
}

impl Run {
    pub(crate) fn parse(args: &[String]) -> Result<Run> {
        let mut run = Run {
            long: false,
            jobs: DEFAULT_JOBS,
            cargo_args: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--long" => run.long = true,
                "--jobs" => {
                    let n = it.next().map(|n| n.parse::<usize>());
                    run.jobs = match n {
                        Some(Ok(n)) if n >= 1 => n,
                        _ => bail!("`--jobs` takes how many test binaries run at once: 1 or more"),
                    };
                }
                _ => run.cargo_args.push(a.clone()),
            }
        }
        Ok(run)
    }
}

/// Two test binaries at a time by default: one after another, the suite took 14.7 of a 19.6-minute
/// CI run on this 2-core machine (881 s of binaries); two at a time, 9.5 of 13.4 minutes, every
/// test passing (the binaries' own times grow under the shared cores, 1,120 s in all, so not
/// half): one binary at a time left a core idle for much of the run.
const DEFAULT_JOBS: usize = 2;

/// The statistical runs' counts (the cold Django `references` and `lsp_rename` runs of
/// witness_django.rs): the full numbers under `--long`, a smaller sample by default.
/// Every run asserts the same things; the default only runs fewer of them.
const COLD_RUNS_LONG: &str = "20,10";
const COLD_RUNS_DEFAULT: &str = "5,3";

/// Install what the tests use (`setup`), run the whole suite, echo its output, and close with the
/// slowest test binaries and one plain `tests: N passed, N failed` line summed over every test
/// binary (cargo's own last line is the doc-tests' count).
///
/// `setup` (mostly waiting on the registries) runs while the tests compile (mostly the CPU); the
/// dist build, which needs setup's maturin, follows both.
pub(crate) fn test(root: &Path, run: Run) -> Result<()> {
    let dist = dist::default_out(root);
    let cold = match (run.long, std::env::var("AGENT_TOOLS_COLD_RUNS")) {
        (false, Ok(set)) => set,
        (true, _) => COLD_RUNS_LONG.to_string(),
        (false, Err(_)) => COLD_RUNS_DEFAULT.to_string(),
    };
    println!(
        "statistical runs (cold Django references,renames): {cold}{}",
        if run.long {
            " (--long)"
        } else {
            " (the full runs: --long)"
        }
    );
    let with_env = || {
        let mut c = cargo(root);
        c.env("AGENT_TOOLS_DIST", &dist)
            .env("AGENT_TOOLS_COLD_RUNS", &cold);
        c
    };
    std::thread::scope(|s| {
        let installed = s.spawn(|| crate::setup::setup(root));
        let mut build = with_env();
        build
            .args(["test", "--workspace", "--all-features", "--no-run"])
            .args(&run.cargo_args);
        let built = crate::run(&mut build).context("building the tests");
        let installed = installed
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("setup panicked")));
        installed.and(built)
    })?;
    // The wheel and npm tarballs the dist tests install (dev profile: docs/decisions.md).
    dist::build(root, dist::Profile::Dev, &dist)?;
    let (mut passed, mut failed) = (0u64, 0u64);
    let mut timings = Timings::default();
    let mut seen = |line: &str| {
        timings.line(root, line);
        let (p, f) = counts(line);
        passed += p;
        failed += f;
    };
    let ok = if run.jobs > 1 {
        println!("test binaries: {} at a time", run.jobs);
        let mut build = with_env();
        build
            .args(["test", "--workspace", "--all-features"])
            .args(&run.cargo_args);
        let binaries_ok = crate::parallel::run(&mut build, &with_env(), run.jobs, &mut seen)?;
        let mut docs = with_env();
        docs.args(["test", "--workspace", "--all-features", "--doc"])
            .args(&run.cargo_args);
        stream(&mut docs, &mut seen)? && binaries_ok
    } else {
        let mut all = with_env();
        all.args(["test", "--workspace", "--all-features", "--no-fail-fast"])
            .args(&run.cargo_args);
        stream(&mut all, &mut seen)?
    };
    print!("{}", timings.slowest(10));
    println!("tests: {passed} passed, {failed} failed");
    if !ok {
        bail!("cargo test failed");
    }
    if passed == 0 {
        bail!("cargo test ran no test");
    }
    Ok(())
}

/// Run `cmd` (a `cargo test`), echo its output and hand every line to `seen`, in the order
/// they were written; whether it succeeded.
///
/// stdout and stderr are one pipe: cargo names the test binary it starts on stderr, and the
/// binary's result line (with its time) comes on stdout. Read from two pipes by two threads,
/// the next binary's `Running` line often overtook the last one's result, and the times were
/// put under the wrong names (seen: client_configs.rs's 66 s shown as control.rs's).
fn stream(cmd: &mut std::process::Command, seen: &mut dyn FnMut(&str)) -> Result<bool> {
    use std::io::{BufRead, BufReader};
    let (reader, writer) = std::io::pipe().context("cannot make a pipe for cargo test")?;
    let spawned = cmd
        .stdout(writer.try_clone().context("cannot share the pipe")?)
        .stderr(writer)
        .spawn();
    // The command holds the pipe's write ends until they are replaced: end-of-file needs them
    // closed here.
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = spawned.context("cannot start cargo test")?;
    for line in BufReader::new(reader).lines().map_while(Result::ok) {
        println!("{line}");
        seen(&line);
    }
    Ok(child.wait()?.success())
}

/// How long each test binary ran, read off cargo's `Running …`/`Doc-tests …` lines and libtest's
/// `test result: … finished in Ns`.
#[derive(Default)]
struct Timings {
    current: Option<String>,
    done: Vec<(f64, String)>,
}

impl Timings {
    fn line(&mut self, root: &Path, line: &str) {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Running ") {
            self.current = Some(binary_name(root, rest));
        } else if let Some(krate) = line.strip_prefix("Doc-tests ") {
            self.current = Some(format!("{} (doc-tests)", krate.replace('_', "-")));
        } else if line.starts_with("test result: ")
            && let Some(secs) = line
                .rsplit_once("finished in ")
                .and_then(|(_, t)| t.trim_end_matches('s').parse::<f64>().ok())
        {
            let name = self.current.take().unwrap_or_else(|| "(unnamed)".into());
            self.done.push((secs, name));
        }
    }

    fn slowest(&self, n: usize) -> String {
        let mut done = self.done.clone();
        done.sort_by(|a, b| b.0.total_cmp(&a.0));
        let total: f64 = done.iter().map(|d| d.0).sum();
        let mut out = format!(
            "slowest test binaries ({} of {}, {:.0} s in all):\n",
            n.min(done.len()),
            done.len(),
            total
        );
        for (secs, name) in done.iter().take(n) {
            out.push_str(&format!("  {secs:>7.1} s  {name}\n"));
        }
        out
    }
}

/// `tests/hostile.rs (/target/debug/deps/hostile-0a1b…)` → `agent-astgrep/tests/hostile.rs` (the
/// crate found by the file), `unittests src/lib.rs (…/deps/agent_tier-…)` → `agent-tier (unit)`.
fn binary_name(root: &Path, running: &str) -> String {
    let (what, exe) = running.split_once(" (").unwrap_or((running, ""));
    let stem = Path::new(exe.trim_end_matches(')'))
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem
        .rsplit_once('-')
        .map_or(stem.as_str(), |(s, _)| s)
        .to_string();
    if let Some(src) = what.strip_prefix("unittests ") {
        return format!("{} ({src})", stem.replace('_', "-"));
    }
    let owners: Vec<String> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|c| c.path().join(what).is_file())
        .map(|c| c.file_name().to_string_lossy().into_owned())
        .collect();
    match owners.as_slice() {
        [one] => format!("{one}/{what}"),
        _ => what.to_string(),
    }
}

/// The passed/failed counts of one line of test output: libtest's `test result: ok. N passed;
/// M failed; …` or a custom harness's plain `N passed, M failed`.
fn counts(line: &str) -> (u64, u64) {
    let line = line.trim();
    let body = match line.strip_prefix("test result: ") {
        Some(rest) => rest.split_once(". ").map_or(rest, |(_, b)| b),
        None if line.ends_with(" failed") && line.contains(" passed, ") => line,
        None => return (0, 0),
    };
    let mut passed = 0;
    let mut failed = 0;
    for part in body.split([';', ',']) {
        let mut words = part.split_whitespace();
        if let (Some(n), Some(what)) = (words.next(), words.next())
            && let Ok(n) = n.parse::<u64>()
        {
            match what {
                "passed" => passed = n,
                "failed" => failed = n,
                _ => {}
            }
        }
    }
    (passed, failed)
}

#[cfg(test)]
mod tests {
    use super::{Timings, counts, stream};

    /// Lines written to stderr and stdout in turn are seen in the order they were written (a
    /// result line never falls behind the next binary's name).
    #[test]
    fn streams_both_outputs_in_the_order_written() {
        let script = (0..200)
            .map(|i| format!("echo out{i}; echo err{i} >&2"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut seen = Vec::new();
        let ok = stream(
            std::process::Command::new("sh").args(["-c", &script]),
            &mut |l| seen.push(l.to_string()),
        )
        .unwrap();
        assert!(ok);
        let want: Vec<String> = (0..200)
            .flat_map(|i| [format!("out{i}"), format!("err{i}")])
            .collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn reads_test_counts() {
        assert_eq!(
            counts(
                "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s"
            ),
            (12, 0)
        );
        assert_eq!(
            counts("test result: FAILED. 3 passed; 1 failed; 0 ignored"),
            (3, 1)
        );
        assert_eq!(counts("8 passed, 0 failed"), (8, 0));
        assert_eq!(counts("running 8 tests"), (0, 0));
    }

    #[test]
    fn times_each_binary() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let mut t = Timings::default();
        for line in [
            "     Running unittests src/lib.rs (/t/debug/deps/agent_tier-0123456789abcdef)",
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s",
            "     Running tests/hostile.rs (/t/debug/deps/hostile-0123456789abcdef)",
            "test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 12.25s",
            "     Running tests/witness_django.rs (/t/debug/deps/witness_django-0123456789abcdef)",
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 99.00s",
            "   Doc-tests agent_tier",
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
        ] {
            t.line(root, line);
        }
        let shown = t.slowest(2);
        assert_eq!(
            shown,
            "slowest test binaries (2 of 4, 112 s in all):\n     99.0 s  agent-tools-cli/tests/witness_django.rs\n     12.2 s  tests/hostile.rs\n"
        );
        assert!(t.slowest(9).contains("0.5 s  agent-tier (src/lib.rs)"));
        assert!(t.slowest(9).contains("agent-tier (doc-tests)"));
    }
}
