//! `cargo xtask test --jobs N`: the test binaries run N at a time instead of one after another
//! (`cargo test` runs them in sequence). The binaries are built by `cargo test --no-run`, then
//! each is started as cargo starts it — in its package's folder, with the package's variables —
//! the longest first by the previous run's times, and its output is printed whole when it ends
//! (under cargo's own `Running …` line, so the counts and times read the same). The doc-tests
//! follow, through cargo.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// One test binary of the workspace.
struct Binary {
    exe: PathBuf,
    /// Its package's folder (the working directory cargo gives it).
    dir: PathBuf,
    package: String,
    /// What cargo's `Running` line names: `tests/hostile.rs`, `unittests src/lib.rs`.
    shown: String,
}

/// Where the last run's time per binary is kept, to start the longest first.
fn times_file() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("xtask-test-times.json")
}

/// Build every test binary (`cargo test --no-run` with `cargo_args`) and list them.
fn binaries(build: &mut Command) -> Result<Vec<Binary>> {
    let out = build
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .context("cannot start cargo test --no-run")?;
    if !out.status.success() {
        anyhow::bail!("building the tests failed with {}", out.status);
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-artifact" || v["profile"]["test"] != true {
            continue;
        }
        let Some(exe) = v["executable"].as_str() else {
            continue;
        };
        let manifest = PathBuf::from(v["manifest_path"].as_str().unwrap_or_default());
        let dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
        let src = Path::new(v["target"]["src_path"].as_str().unwrap_or_default());
        let rel = src.strip_prefix(&dir).unwrap_or(src).display().to_string();
        let kinds: Vec<&str> = v["target"]["kind"]
            .as_array()
            .map(|k| k.iter().filter_map(|s| s.as_str()).collect())
            .unwrap_or_default();
        let shown = if kinds.contains(&"test") {
            rel
        } else {
            format!("unittests {rel}")
        };
        found.push(Binary {
            exe: PathBuf::from(exe),
            dir,
            package: v["target"]["name"].as_str().unwrap_or_default().to_string(),
            shown,
        });
    }
    Ok(found)
}

/// Run every test binary `jobs` at a time with the environment of `base`; print each one's
/// output whole as it ends and call `line` on every line of it (in that order). Returns whether
/// every binary passed.
pub(crate) fn run(
    build: &mut Command,
    base: &Command,
    jobs: usize,
    line: &mut (dyn FnMut(&str) + Send),
) -> Result<bool> {
    let mut queue = binaries(build)?;
    let previous: HashMap<String, f64> = std::fs::read(times_file())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    // By the package's folder name, not its path: a fresh clone elsewhere on the machine (as CI
    // makes) finds the times of the last run.
    let key = |b: &Binary| {
        let folder = b.dir.file_name().unwrap_or_default().to_string_lossy();
        format!("{folder} {}", b.shown)
    };
    // Taken from the end: the longest first, and before them the ones without a time yet (a
    // new binary may be long).
    queue.sort_by(|a, b| {
        let t = |x: &Binary| previous.get(&key(x)).copied().unwrap_or(f64::MAX);
        t(a).total_cmp(&t(b))
    });
    let envs: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)> = base
        .get_envs()
        .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
        .collect();
    let queue = Mutex::new(queue);
    let printer = Mutex::new(line);
    let times = Mutex::new(HashMap::new());
    let all_ok = Mutex::new(true);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let Some(b) = queue.lock().expect("queue").pop() else {
                        break;
                    };
                    let started = Instant::now();
                    let mut cmd = Command::new(&b.exe);
                    cmd.current_dir(&b.dir)
                        .env("CARGO_MANIFEST_DIR", &b.dir)
                        .env("CARGO_PKG_NAME", &b.package)
                        .stdin(Stdio::null())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped());
                    for (k, v) in &envs {
                        match v {
                            Some(v) => cmd.env(k, v),
                            None => cmd.env_remove(k),
                        };
                    }
                    let (text, ok) = match cmd.spawn() {
                        Ok(mut child) => {
                            let mut err = child.stderr.take().expect("piped stderr");
                            let err_reader = std::thread::spawn(move || {
                                let mut s = String::new();
                                let _ = err.read_to_string(&mut s);
                                s
                            });
                            let mut out = String::new();
                            if let Some(mut o) = child.stdout.take() {
                                let _ = o.read_to_string(&mut out);
                            }
                            let status = child.wait();
                            let err = err_reader.join().unwrap_or_default();
                            let ok = status.as_ref().is_ok_and(|s| s.success());
                            let status = match status {
                                Ok(s) => s.to_string(),
                                Err(e) => e.to_string(),
                            };
                            let mut text = out;
                            text.push_str(&err);
                            if !ok {
                                text.push_str(&format!(
                                    "error: test failed: {} ({status})\n",
                                    b.exe.display()
                                ));
                            }
                            (text, ok)
                        }
                        Err(e) => (
                            format!("error: cannot start {}: {e}\n", b.exe.display()),
                            false,
                        ),
                    };
                    times
                        .lock()
                        .expect("times")
                        .insert(key(&b), started.elapsed().as_secs_f64());
                    if !ok {
                        *all_ok.lock().expect("ok") = false;
                    }
                    let mut print = printer.lock().expect("printer");
                    let header = format!("     Running {} ({})", b.shown, b.exe.display());
                    eprintln!("{header}");
                    print(&header);
                    for l in text.lines() {
                        println!("{l}");
                        print(l);
                    }
                }
            });
        }
    });
    let times = times.into_inner().expect("times");
    let _ = std::fs::write(times_file(), serde_json::to_vec(&times)?);
    Ok(all_ok.into_inner().expect("ok"))
}
