//! Issue 39, trust asked, not configured: on a machine where nothing can contain an untrusted
//! project's language server (bubblewrap hidden by a private mount namespace, Landlock off), the
//! first `lsp` call asks the person through MCP elicitation — with the official Python SDK as the
//! client — whether to trust the folder: "for this run" answers (and is not asked again), "always"
//! also writes the root into the user's own config file, "no" and a declined question are
//! remembered for the run (asked once, every call refused, naming the file), `serve --trust`
//! never asks, and a client that cannot elicit gets the error naming the config file's full path.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

fn venv() -> PathBuf {
    std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"))
}

/// A fresh untrusted Python project and an empty user config folder.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\ngreet(\"x\")\n",
    )
    .unwrap();
    let config = dir.path().join("config");
    (dir, root, config)
}

/// The Python SDK client answering `answer`, against `serve --root ROOT extra…`, run where
/// bubblewrap is hidden and Landlock is off: its report.
fn session(answer: &str, root: &Path, config: &Path, extra: &[&str]) -> Value {
    agent_testkit::require("pyright-langserver");
    let bwrap = agent_testkit::require("bwrap");
    let unshare = agent_testkit::require("unshare");
    let mut argv = vec![
        venv().join("bin/python").display().to_string(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/clients/python_trust.py")
            .display()
            .to_string(),
        answer.to_string(),
        root.display().to_string(),
        BIN.to_string(),
        "serve".to_string(),
        "--root".to_string(),
        root.display().to_string(),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    let script = format!(
        "mount --bind /dev/null {} || exit 97\nexec {}",
        shell_words::quote(&bwrap.display().to_string()),
        shell_words::join(&argv)
    );
    let out = Command::new(unshare)
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env("XDG_CONFIG_HOME", config)
        .env("AGENT_TOOLS_LANDLOCK", "off")
        .env_remove("AGENT_TOOLS_TRUST")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(97), "could not hide bwrap");
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn calls(report: &Value) -> Vec<(bool, String)> {
    report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["error"] == true, c["text"].as_str().unwrap().to_string()))
        .collect()
}

fn prompts(report: &Value) -> usize {
    report["prompts"].as_array().unwrap().len()
}

#[test]
fn trusted_for_the_run_answers_and_is_asked_once() {
    let (_dir, root, config) = project();
    let r = session("Trust for this run", &root, &config, &[]);
    assert_eq!(prompts(&r), 1, "{r}");
    let shown = r["prompts"][0].as_str().unwrap();
    assert!(
        shown.contains(&root.display().to_string())
            && shown.contains(&config.join("agent-tools/lsp.json").display().to_string()),
        "the question names the folder and the file `always` writes: {shown}"
    );
    for (error, text) in calls(&r) {
        assert!(!error && text.contains("(name: str) -> str"), "{text}");
    }
    assert!(
        !config.join("agent-tools/lsp.json").exists(),
        "for this run writes nothing"
    );
}

#[test]
fn trusted_always_is_written_to_the_users_own_file() {
    let (_dir, root, config) = project();
    let r = session("Trust always", &root, &config, &[]);
    assert_eq!(prompts(&r), 1, "{r}");
    assert!(
        calls(&r)
            .iter()
            .all(|(e, t)| !e && t.contains("(name: str) -> str")),
        "{r}"
    );
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(config.join("agent-tools/lsp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file["trusted_projects"][0].as_str(),
        Some(root.canonicalize().unwrap().to_str().unwrap())
    );
    // The next host trusts it without asking.
    let again = session("Do not trust", &root, &config, &[]);
    assert_eq!(prompts(&again), 0, "{again}");
    assert!(calls(&again).iter().all(|(e, _)| !e), "{again}");
}

#[test]
fn no_and_declined_are_remembered_for_the_run() {
    for answer in ["Do not trust", "decline"] {
        let (_dir, root, config) = project();
        let r = session(answer, &root, &config, &[]);
        assert_eq!(prompts(&r), 1, "{answer}: asked once: {r}");
        let file = config.join("agent-tools/lsp.json").display().to_string();
        for (error, text) in calls(&r) {
            assert!(
                error && text.contains("not trusted") && text.contains(&file),
                "{answer}: {text}"
            );
        }
    }
}

#[test]
fn serve_trust_never_asks() {
    let (_dir, root, config) = project();
    let r = session("Do not trust", &root, &config, &["--trust"]);
    assert_eq!(prompts(&r), 0, "{r}");
    assert!(
        calls(&r)
            .iter()
            .all(|(e, t)| !e && t.contains("(name: str) -> str")),
        "{r}"
    );
}

#[test]
fn without_an_operator_the_error_names_the_config_files_full_path() {
    let (_dir, root, config) = project();
    let r = session("none", &root, &config, &[]);
    assert_eq!(prompts(&r), 0, "{r}");
    let file = config.join("agent-tools/lsp.json").display().to_string();
    for (error, text) in calls(&r) {
        assert!(
            error && text.contains(&file) && text.contains("trusted_projects"),
            "{text}"
        );
    }
}
