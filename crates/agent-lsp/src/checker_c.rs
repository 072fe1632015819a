//! The C/C++ project checker: each translation unit of a `compile_commands.json` compiled again
//! with `-fsyntax-only` (bounded), its findings in the checkers' common form.

use crate::error::CheckerError;
use crate::render::Finding;
use crate::supervisor::Supervisor;
use agent_proc::{Launcher, RunError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Most translation units checked per database.
pub const MAX_UNITS: usize = 50;

/// Where compilation databases are: every marker folder's, and `build/` of the root (which the
/// marker walk skips).
pub fn databases(ws: &Path) -> Vec<PathBuf> {
    let mut dirs = crate::roots::outermost(crate::roots::roots_in(ws, &["compile_commands.json"]));
    let build = ws.join("build");
    if build.join("compile_commands.json").is_file() && !dirs.contains(&build) {
        dirs.push(build);
    }
    dirs
}

/// Flags that make the compiler write a file: dropped, with their value where they take one.
const WRITES: &[&str] = &["-o", "-MF", "-MT", "-MQ"];
const WRITES_ALONE: &[&str] = &["-c", "-MD", "-MMD", "-M", "-MM"];

/// One entry of a compilation database: its folder, and its command as a vector
/// (`arguments`) or a shell line (`command`).
#[derive(Debug, Clone, Deserialize)]
struct Entry {
    directory: Option<String>,
    arguments: Option<Vec<String>>,
    command: Option<String>,
}

/// The argument vector of one entry, made to only check syntax and types.
fn syntax_only(entry: &Entry) -> Option<Vec<String>> {
    let args: Vec<String> = match (&entry.arguments, &entry.command) {
        (Some(a), _) => a.clone(),
        (None, Some(c)) => shell_words::split(c).ok()?,
        (None, None) => return None,
    };
    let mut out = Vec::new();
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if WRITES.contains(&a.as_str()) {
            skip_next = true;
            continue;
        }
        if WRITES_ALONE.contains(&a.as_str()) || (a.starts_with("-o") && a.len() > 2) {
            continue;
        }
        out.push(a);
    }
    out.push("-fsyntax-only".into());
    (out.len() > 1).then_some(out)
}

/// `file:line:col: error: message` (and `warning`, `fatal error`) from a compiler's stderr.
fn parse(dir: &Path, stderr: &str) -> Vec<Finding> {
    stderr
        .lines()
        .filter_map(|l| {
            let mut it = l.splitn(5, ':');
            let file = it.next()?;
            let line: u32 = it.next()?.trim().parse().ok()?;
            let col: u32 = it.next()?.trim().parse().ok()?;
            let kind = it.next()?.trim();
            let severity = match kind {
                "error" | "fatal error" => "error",
                "warning" => "warning",
                _ => return None,
            };
            let msg = it.next()?.trim();
            // `… [-Wunused-variable]`: the flag is the code.
            let (msg, code) = match msg.rsplit_once(" [") {
                Some((m, c)) if c.ends_with(']') => (m, c.trim_end_matches(']')),
                _ => (msg, ""),
            };
            Some((
                dir.join(file),
                line,
                col,
                severity.to_string(),
                code.to_string(),
                msg.to_string(),
            ))
        })
        .collect()
}

/// Check the database in `dir`: the findings and how many units were left out by the bound.
pub async fn run(sup: &Supervisor, dir: &Path) -> Result<(Vec<Finding>, usize), CheckerError> {
    let db = dir.join("compile_commands.json");
    let text = std::fs::read_to_string(&db).map_err(|source| CheckerError::Database {
        path: db.display().to_string(),
        source,
    })?;
    let entries: Vec<Entry> =
        serde_json::from_str(&text).map_err(|source| CheckerError::NotDatabase {
            path: db.display().to_string(),
            source,
        })?;
    let skipped = entries.len().saturating_sub(MAX_UNITS);
    let mut findings = Vec::new();
    for entry in entries.iter().take(MAX_UNITS) {
        let Some(args) = syntax_only(entry) else {
            continue;
        };
        // The unit's directory, confined to the workspace.
        let cwd = entry
            .directory
            .as_deref()
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.to_path_buf());
        let Ok(cwd) = agent_tier::workspace::confine_existing(
            &sup.root,
            "directory",
            &cwd.display().to_string(),
        ) else {
            continue;
        };
        let run = agent_proc::Command::new(&Launcher::prefixed(sup.prefix()), &args[0])
            .args(&args[1..])
            .current_dir(&cwd)
            .stderr_tail(1 << 20)
            .output(sup.cfg.checker_timeout)
            .await;
        match run {
            Ok(out) => findings.extend(parse(&cwd, &out.stderr)),
            Err(RunError::Spawn(source)) => {
                return Err(CheckerError::UnitSpawn {
                    program: args[0].clone(),
                    source,
                });
            }
            Err(RunError::TimedOut(..)) => {
                return Err(CheckerError::UnitTimedOut {
                    program: args[0].clone(),
                    secs: sup.cfg.checker_timeout.as_secs(),
                });
            }
            Err(RunError::Wait(source)) => {
                return Err(CheckerError::UnitWait {
                    program: args[0].clone(),
                    source,
                });
            }
        }
    }
    Ok((findings, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_lose_their_outputs() {
        let entry = |v| serde_json::from_value::<Entry>(v).unwrap();
        let e = entry(json!({"command": "cc -Iinc -c -o build/x.o -MD -MF x.d src/x.c"}));
        assert_eq!(
            syntax_only(&e).unwrap(),
            ["cc", "-Iinc", "src/x.c", "-fsyntax-only"]
        );
        let e = entry(json!({"arguments": ["g++", "-obuild/y.o", "y.cpp"]}));
        assert_eq!(syntax_only(&e).unwrap(), ["g++", "y.cpp", "-fsyntax-only"]);
    }

    #[test]
    fn compiler_lines_parse() {
        let f = parse(
            Path::new("/w"),
            "src/x.c:3:9: warning: unused variable 'y' [-Wunused-variable]\nsrc/x.c:4:5: error: expected ';' before '}' token\nnote: in file included\n",
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].4, "-Wunused-variable");
        assert_eq!((f[1].1, f[1].2, f[1].3.as_str()), (4, 5, "error"));
    }
}
