//! `diagnostics` with `"*"`: the project checker of every detected root, in the same format.

use crate::binaries::resolve_command;
use crate::error::CheckerError;
use crate::render::{Diag, Finding, Loc};
use crate::supervisor::Supervisor;
use agent_proc::{Launcher, RunError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

mod report;
pub use report::{CheckerFailed, CheckerRan, CheckerRun, ProjectDiagnostics};

struct Checker {
    name: &'static str,
    markers: &'static [&'static str],
    /// Server ids whose binaries can run it (pyright's CLI beside its language server).
    programs: &'static [&'static str],
    args: &'static [&'static str],
    parse: fn(&Path, &str, &str) -> Vec<Finding>,
    /// A failed exit with no finding parsed is not output we could not read: the checker's
    /// exit status counts problems this report leaves out (pyright's counts every severity).
    failed_exit_may_be_clean: bool,
}

const CHECKERS: &[Checker] = &[
    Checker {
        name: "cargo check",
        markers: &["Cargo.toml"],
        programs: &["cargo"],
        args: &["check", "--message-format=json", "--quiet"],
        parse: parse_cargo,
        failed_exit_may_be_clean: false,
    },
    Checker {
        name: "pyright",
        markers: &[
            "pyproject.toml",
            "pyrightconfig.json",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ],
        programs: &["pyright", "basedpyright"],
        args: &["--outputjson"],
        parse: parse_pyright,
        failed_exit_may_be_clean: true,
    },
    Checker {
        name: "tsc",
        markers: &["tsconfig.json"],
        programs: &["tsc"],
        args: &["--noEmit", "--pretty", "false"],
        parse: parse_tsc,
        failed_exit_may_be_clean: false,
    },
    Checker {
        name: "go vet",
        markers: &["go.mod"],
        programs: &["go"],
        args: &["vet", "./..."],
        parse: parse_go,
        failed_exit_may_be_clean: false,
    },
    Checker {
        name: "dart analyze",
        markers: &["pubspec.yaml"],
        programs: &["dart"],
        args: &["analyze", "--format=machine"],
        parse: parse_dart,
        failed_exit_may_be_clean: false,
    },
];

/// One line of `cargo check --message-format=json`: a compiler message is the line that
/// matters (other reasons, and lines that are not JSON, are skipped).
#[derive(Deserialize)]
struct CargoLine {
    reason: String,
    manifest_path: Option<String>,
    message: Option<CompilerMessage>,
}

#[derive(Deserialize)]
struct CompilerMessage {
    level: String,
    message: String,
    code: Option<CompilerCode>,
    spans: Vec<CompilerSpan>,
}

#[derive(Deserialize)]
struct CompilerCode {
    code: String,
}

#[derive(Deserialize)]
struct CompilerSpan {
    file_name: String,
    line_start: u32,
    column_start: u32,
    is_primary: bool,
}

fn parse_cargo(root: &Path, stdout: &str, _stderr: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(CargoLine {
            reason,
            manifest_path,
            message: Some(m),
        }) = serde_json::from_str::<CargoLine>(line)
        else {
            continue;
        };
        if reason != "compiler-message" || (m.level != "error" && m.level != "warning") {
            continue;
        }
        let Some(span) = m.spans.iter().find(|s| s.is_primary) else {
            continue;
        };
        // Paths are relative to the cargo workspace root, which is `root` or an ancestor.
        let file = span.file_name.as_str();
        let manifest_dir = manifest_path
            .as_deref()
            .and_then(|p| Path::new(p).parent())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.to_path_buf());
        let mut path = root.join(file);
        for cand in manifest_dir.ancestors() {
            if cand.join(file).exists() {
                path = cand.join(file);
                break;
            }
        }
        out.push((
            path,
            span.line_start,
            span.column_start,
            m.level,
            m.code.map(|c| c.code).unwrap_or_default(),
            m.message,
        ));
    }
    out
}

/// `pyright --outputjson`'s report.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PyrightReport {
    general_diagnostics: Vec<PyrightDiagnostic>,
}

#[derive(Deserialize)]
struct PyrightDiagnostic {
    file: String,
    severity: String,
    message: String,
    range: Option<crate::protocol::Range>,
    rule: Option<String>,
}

fn parse_pyright(root: &Path, stdout: &str, _stderr: &str) -> Vec<Finding> {
    let Ok(report) = serde_json::from_str::<PyrightReport>(stdout) else {
        return Vec::new();
    };
    report
        .general_diagnostics
        .into_iter()
        .filter(|d| d.severity == "error" || d.severity == "warning")
        .map(|d| {
            // A diagnostic about the whole file has no range: its first line.
            let start = d.range.map(|r| r.start);
            (
                root.join(&d.file),
                start.map_or(1, |s| s.line + 1),
                start.map_or(1, |s| s.character + 1),
                d.severity,
                d.rule.unwrap_or_default(),
                d.message,
            )
        })
        .collect()
}

fn parse_tsc(root: &Path, stdout: &str, _stderr: &str) -> Vec<Finding> {
    // `src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.`
    stdout
        .lines()
        .filter_map(|l| {
            let (loc, rest) = l.split_once("): ")?;
            let (file, lc) = loc.rsplit_once('(')?;
            let (line, col) = lc.split_once(',')?;
            let (sev_code, msg) = rest.split_once(": ")?;
            let (sev, code) = sev_code.split_once(' ')?;
            Some((
                root.join(file),
                line.trim().parse().ok()?,
                col.trim().parse().ok()?,
                sev.to_string(),
                code.to_string(),
                msg.to_string(),
            ))
        })
        .collect()
}

fn parse_go(root: &Path, _stdout: &str, stderr: &str) -> Vec<Finding> {
    // `./main.go:5:2: fmt.Printf format %d has arg "x" of wrong type string` (also `vet: ` prefixed)
    stderr
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("vet: ").unwrap_or(l);
            let mut it = l.splitn(4, ':');
            let file = it.next()?.trim_start_matches("./");
            let line: u32 = it.next()?.trim().parse().ok()?;
            let col: u32 = it.next()?.trim().parse().ok()?;
            let msg = it.next()?.trim();
            Some((
                root.join(file),
                line,
                col,
                "error".into(),
                String::new(),
                msg.to_string(),
            ))
        })
        .collect()
}

fn parse_dart(root: &Path, stdout: &str, stderr: &str) -> Vec<Finding> {
    // `ERROR|COMPILE_TIME_ERROR|UNDEFINED_IDENTIFIER|/abs/lib/main.dart|3|12|5|Undefined name 'x'.`
    // (the machine format goes to stderr; some versions print it on stdout)
    stderr
        .lines()
        .chain(stdout.lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(8, '|').collect();
            if f.len() < 8 {
                return None;
            }
            let severity = match f[0] {
                "ERROR" => "error",
                "WARNING" => "warning",
                "INFO" => "info",
                _ => return None,
            };
            let file = Path::new(f[3]);
            Some((
                if file.is_absolute() {
                    file.to_path_buf()
                } else {
                    root.join(file)
                },
                f[4].parse().ok()?,
                f[5].parse().ok()?,
                severity.to_string(),
                f[2].to_ascii_lowercase(),
                f[7].replace("\\|", "|"),
            ))
        })
        .collect()
}

/// The findings of one checker, and how many were left out because they are in files out of the
/// root through a symlink (their lines and messages would quote a file `read` refuses).
async fn run_one(
    sup: &Supervisor,
    c: &Checker,
    root: &Path,
    project_code: bool,
) -> Result<(Vec<Diag>, usize), CheckerError> {
    let ws = &sup.root;
    let spec = crate::config::ServerSpec {
        id: c.name.to_string(),
        language: String::new(),
        commands: c.programs.iter().map(|p| vec![p.to_string()]).collect(),
        extensions: Default::default(),
        root_markers: Vec::new(),
        init_options: Default::default(),
        settings: Default::default(),
        env: Default::default(),
        install: String::new(),
        open_settle_ms: 0,
        untrusted: Default::default(),
    };
    // The project's own checker binaries (`node_modules/.bin/tsc`) run only for a call that
    // declared it runs project code (its effects), or in a trusted project.
    let Some((bin, _)) = resolve_command(&spec, root, ws, project_code || sup.trusted()) else {
        return Err(CheckerError::NotFound {
            checker: c.name,
            programs: c.programs.join(", "),
        });
    };
    // Through the run's sandbox prefix, like every other child (kernels, servers).
    let run = agent_proc::Command::new(&Launcher::prefixed(sup.prefix()), &bin)
        .args(c.args)
        .current_dir(root)
        .stderr_tail(1 << 20)
        .output(sup.cfg.checker_timeout)
        .await;
    let out = match run {
        Ok(o) => o,
        Err(RunError::Spawn(source)) => {
            return Err(CheckerError::Spawn {
                program: bin.display().to_string(),
                source,
            });
        }
        Err(RunError::Wait(source)) => {
            return Err(CheckerError::Wait {
                checker: c.name,
                source,
            });
        }
        Err(RunError::TimedOut(..)) => {
            return Err(CheckerError::TimedOut {
                checker: c.name,
                secs: sup.cfg.checker_timeout.as_secs(),
            });
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = out.stderr.as_str();
    let findings = (c.parse)(root, &stdout, stderr);
    if findings.is_empty() && !out.status.success() && !c.failed_exit_may_be_clean {
        return Err(CheckerError::Unparsed {
            checker: c.name,
            status: out.status.to_string(),
            stderr: crate::client::tail_lines(stderr, 10),
        });
    }
    Ok(to_diags(ws, c.name, findings))
}

/// Findings as diagnostics with their lines quoted, leaving out (and counting) those in files
/// out of the root through a symlink (their lines would quote a file `read` refuses).
fn to_diags(ws: &Path, source: &str, findings: Vec<Finding>) -> (Vec<Diag>, usize) {
    let mut cache: std::collections::HashMap<PathBuf, Vec<String>> = Default::default();
    let all = findings.len();
    let findings: Vec<Finding> = findings
        .into_iter()
        .filter(|f| !crate::render::escapes(ws, &f.0))
        .collect();
    let withheld = all - findings.len();
    let diags = findings
        .into_iter()
        .map(|(path, line, col, severity, code, message)| {
            let lines = cache.entry(path.clone()).or_insert_with(|| {
                std::fs::read_to_string(&path)
                    .map(|t| {
                        crate::text::lines(&t)
                            .into_iter()
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            });
            let text = lines
                .get(line.saturating_sub(1) as usize)
                .map(|l| l.trim().to_string())
                .unwrap_or_default();
            let display = path
                .strip_prefix(ws)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| path.display().to_string());
            Diag {
                loc: Loc {
                    path: display,
                    line,
                    column: col as usize,
                    text,
                },
                severity,
                code,
                message,
                source: source.to_string(),
            }
        })
        .collect();
    (diags, withheld)
}

/// What one checker run came to: its diagnostics and how many were withheld, or why it failed.
type CheckResult = Result<(Vec<Diag>, usize), CheckerError>;

/// Run every project checker whose marker is found, per root. `project_code`: the call declared
/// that it runs the project's code ([`agent_tier::Effects`]).
pub async fn run_all(sup: &Supervisor, project_code: bool) -> ProjectDiagnostics {
    let ws = &sup.root;
    let mut notes = Vec::new();
    // Every checker for every root it applies to: the fixed ones, then each C/C++ database.
    let mut runs: Vec<(String, PathBuf, std::time::Duration, CheckResult)> = Vec::new();
    // What runs now, as the call's progress (a checker may take minutes).
    let report = |name: &str, root: &Path| {
        let d = agent_tier::workspace::display_path(ws, root);
        let shown = if d.is_empty() { "." } else { d.as_str() };
        agent_tier::progress(format!("running {name} in {shown}"));
    };
    for c in CHECKERS {
        for root in crate::roots::outermost(crate::roots::roots_in(ws, c.markers)) {
            report(c.name, &root);
            let started = std::time::Instant::now();
            let r = run_one(sup, c, &root, project_code).await;
            runs.push((c.name.to_string(), root, started.elapsed(), r));
        }
    }
    for dir in crate::checker_c::databases(ws) {
        report("C/C++ -fsyntax-only", &dir);
        let started = std::time::Instant::now();
        let r = crate::checker_c::run(sup, &dir)
            .await
            .map(|(findings, skipped)| {
                let (diags, withheld) = to_diags(ws, "compile_commands.json", findings);
                if skipped > 0 {
                    notes.push(format!(
                        "compile_commands.json in {}: {skipped} translation unit(s) beyond the first {} not checked",
                        agent_tier::workspace::display_path(ws, &dir),
                        crate::checker_c::MAX_UNITS
                    ));
                }
                (diags, withheld)
            });
        runs.push(("C/C++ -fsyntax-only".into(), dir, started.elapsed(), r));
    }
    let checkers = runs
        .into_iter()
        .map(|(checker, root, elapsed, result)| {
            let root = {
                let d = agent_tier::workspace::display_path(ws, &root);
                if d.is_empty() { ".".to_string() } else { d }
            };
            match result {
                Ok((mut diagnostics, withheld)) => {
                    let errors = diagnostics.iter().filter(|d| d.severity == "error").count();
                    let reported = (errors, diagnostics.len() - errors);
                    // Errors first, by file and line; the same finding once.
                    diagnostics
                        .sort_by_key(|d| (d.severity != "error", d.loc.path.clone(), d.loc.line));
                    diagnostics.dedup_by_key(|d| {
                        (
                            d.loc.path.clone(),
                            d.loc.line,
                            d.loc.column,
                            d.message.clone(),
                        )
                    });
                    CheckerRun::Ran(CheckerRan {
                        checker,
                        root,
                        diagnostics,
                        elapsed,
                        withheld,
                        reported,
                    })
                }
                Err(error) => CheckerRun::Failed(CheckerFailed {
                    checker,
                    root,
                    error: error.to_string(),
                }),
            }
        })
        .collect();
    ProjectDiagnostics {
        operation: "diagnostics",
        file: "*",
        checkers,
        notes,
    }
}
