//! `launch` with `test`: one test under the debugger. A `.py` file runs as `python -m pytest
//! -s FILE::NAME` under debugpy; a Go package (or one of its files) in delve's test mode with
//! `-test.run ^NAME$`; a Rust package (or one of its files) is built by `cargo test --no-run`,
//! and the test binary holding the test runs `NAME --exact --nocapture` under lldb-dap.

mod cargo;

use super::plan::{Built, Plan};
use crate::DapError;
use crate::adapters::AdapterId;
use crate::args::Op;
use crate::limits::{BUILD_TIMEOUT, LIST_TIMEOUT};
use crate::supervisor::Supervisor;
use agent_tier::process;
use agent_tier::workspace::confine_existing;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A test to launch: its file or package, which adapter runs it, and its name.
pub(super) struct TestTarget {
    pub adapter: AdapterId,
    /// Absolute, inside the workspace.
    pub path: PathBuf,
    pub name: String,
}

fn invalid(arg: &'static str, detail: impl Into<String>) -> DapError {
    DapError::Argument {
        op: Op::Launch.name(),
        arg,
        detail: detail.into(),
    }
}

/// Which adapter runs a test in `path`: by what the file or package is.
pub(super) fn resolve(
    sup: &Supervisor,
    path: &str,
    name: &str,
    asked: Option<AdapterId>,
) -> Result<TestTarget, DapError> {
    let path = confine_existing(&sup.root, "program", path)?;
    let ext = |e: &str| path.is_file() && path.extension().is_some_and(|x| x == e);
    let go_dir = path.is_dir()
        && std::fs::read_dir(&path)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "go"))
            })
            .unwrap_or(false);
    let cargo = process::find_root_marker(&sup.root, &path, &["Cargo.toml"]).is_some();
    let adapter = if ext("py") {
        AdapterId::Debugpy
    } else if ext("go") || go_dir {
        AdapterId::Delve
    } else if (ext("rs") || path.is_dir()) && cargo {
        AdapterId::Lldb
    } else {
        return Err(invalid(
            "program",
            format!(
                "with `test`, the test's source file or package; `{}` is not a .py, .go or .rs file nor a Go or Cargo package directory (a test binary you built: launch it as `program` with the test's name in `args`)",
                sup.shown(&path)
            ),
        ));
    };
    if let Some(a) = asked
        && a != adapter
    {
        return Err(DapError::Combination {
            op: Op::Launch.name(),
            detail: format!(
                "drop `adapter`; a test in `{}` runs under {}",
                sup.shown(&path),
                adapter.name()
            ),
        });
    }
    Ok(TestTarget {
        adapter,
        path,
        name: name.to_string(),
    })
}

/// What the adapter runs for the test; a Rust test binary is built here.
pub(super) async fn plan(
    sup: &Supervisor,
    t: &TestTarget,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Result<Plan, DapError> {
    let shown = sup.shown(&t.path);
    let dir = if t.path.is_dir() {
        t.path.clone()
    } else {
        t.path.parent().unwrap_or(&sup.root).to_path_buf()
    };
    Ok(match t.adapter {
        AdapterId::Debugpy => {
            let node = if t.name.contains(".py::") {
                t.name.clone()
            } else {
                format!("{}::{}", t.path.display(), t.name)
            };
            let mut all = vec!["-s".to_string(), node];
            all.extend_from_slice(args);
            Plan {
                program: dir,
                module: Some("pytest".into()),
                test: false,
                args: all,
                cwd: sup.root.clone(),
                target: format!("test {} in {shown} (pytest)", t.name),
                built: None,
            }
        }
        AdapterId::Delve => {
            let mut all = vec!["-test.run".to_string(), go_run_pattern(&t.name)];
            all.extend_from_slice(args);
            Plan {
                program: dir.clone(),
                module: None,
                test: true,
                args: all,
                cwd: dir.clone(),
                target: format!("test {} in {} (go test)", t.name, sup.shown(&dir)),
                built: None,
            }
        }
        _ => rust_test(sup, t, &dir, args, env).await?,
    })
}

/// `go test -run`'s pattern for exactly this test (and subtest, after `/`).
fn go_run_pattern(name: &str) -> String {
    name.split('/')
        .map(|part| {
            let mut p = String::from("^");
            for c in part.chars() {
                if "\\.+*?()|[]{}^$".contains(c) {
                    p.push('\\');
                }
                p.push(c);
            }
            p.push('$');
            p
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Build the package's test binaries, find the one holding the test, and plan its launch.
async fn rust_test(
    sup: &Supervisor,
    t: &TestTarget,
    dir: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Result<Plan, DapError> {
    let package = process::find_root_marker(&sup.root, dir, &["Cargo.toml"])
        .ok_or_else(|| invalid("program", "no Cargo.toml at or above it"))?;
    let manifest = package.join("Cargo.toml");
    let mut cargo_args: Vec<String> = vec![
        "test".into(),
        "--no-run".into(),
        "--message-format=json".into(),
        "--manifest-path".into(),
        manifest.display().to_string(),
    ];
    // An integration test's file names its target: build only that one.
    if t.path.is_file()
        && t.path.parent() == Some(package.join("tests").as_path())
        && let Some(stem) = t.path.file_stem()
    {
        cargo_args.push("--test".into());
        cargo_args.push(stem.to_string_lossy().into_owned());
    }
    let command = format!(
        "cargo {}",
        cargo_args
            .iter()
            .map(|a| if a == &manifest.display().to_string() {
                sup.shown(&manifest)
            } else {
                a.clone()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let launcher = agent_proc::Launcher::prefixed(&sup.prefix);
    let mut cmd = agent_proc::Command::new(&launcher, "cargo")
        .purpose("build a Rust test binary for debug")
        .args(&cargo_args)
        .current_dir(&package);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let build_failed = |detail: String| DapError::Build {
        command: command.clone(),
        detail,
    };
    let out = cmd
        .output(BUILD_TIMEOUT)
        .await
        .map_err(|e| build_failed(e.to_string()))?;
    let (artifacts, errors) = cargo::read(&String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        let detail = if errors.is_empty() {
            out.stderr.trim().to_string()
        } else {
            errors.trim_end().to_string()
        };
        return Err(build_failed(detail));
    }
    // Which binary holds the test: each lists its tests (`NAME: test`).
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut some_names: Vec<String> = Vec::new();
    for (i, a) in artifacts.iter().enumerate() {
        let listed = agent_proc::Command::new(&launcher, &a.executable)
            .purpose("list a Rust test binary's tests for debug")
            .args(["--list"])
            .current_dir(&package)
            .output(LIST_TIMEOUT)
            .await
            .map_err(|e| build_failed(format!("listing {}'s tests: {e}", a.target)))?;
        for line in String::from_utf8_lossy(&listed.stdout).lines() {
            let Some(full) = line.strip_suffix(": test") else {
                continue;
            };
            if full == t.name || full.ends_with(&format!("::{}", t.name)) {
                found.push((i, full.to_string()));
            }
            if some_names.len() < 10 {
                some_names.push(full.to_string());
            }
        }
    }
    if found.iter().any(|(_, full)| *full == t.name) {
        found.retain(|(_, full)| *full == t.name);
    }
    let targets = || {
        artifacts
            .iter()
            .map(|a| a.target.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (index, full) = match found.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(invalid(
                "test",
                format!(
                    "no test `{}` in what `{command}` built ({}); {}",
                    t.name,
                    targets(),
                    if some_names.is_empty() {
                        "they hold no tests".to_string()
                    } else {
                        format!("pass one of: {}", some_names.join(", "))
                    }
                ),
            ));
        }
        many => {
            let mut list = String::new();
            for (i, full) in many {
                let _ = write!(
                    list,
                    "{}{full} ({})",
                    if list.is_empty() { "" } else { ", " },
                    artifacts[*i].target
                );
            }
            return Err(invalid(
                "test",
                format!(
                    "`{}` names several tests: {list}; pass one full name",
                    t.name
                ),
            ));
        }
    };
    let artifact = &artifacts[index];
    let mut all = vec![full.clone(), "--exact".into(), "--nocapture".into()];
    all.extend_from_slice(args);
    Ok(Plan {
        program: artifact.executable.clone(),
        module: None,
        test: false,
        args: all,
        // As `cargo test` runs it.
        cwd: package.clone(),
        target: format!("test {full} in {} (cargo test)", sup.shown(&t.path)),
        built: Some(Built {
            command,
            executable: artifact.executable.clone(),
            target: artifact.target.clone(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::go_run_pattern;

    #[test]
    fn go_run_pattern_matches_exactly_the_test_and_subtest() {
        assert_eq!(go_run_pattern("TestAdd"), "^TestAdd$");
        assert_eq!(go_run_pattern("TestAdd/big_one"), "^TestAdd$/^big_one$");
        assert_eq!(go_run_pattern("TestA.b(c)"), r"^TestA\.b\(c\)$");
    }
}
