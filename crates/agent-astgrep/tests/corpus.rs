//! The data-driven corpus: every `tests/corpus/*.txt` file holds cases; each case writes its
//! files into a fresh workspace, runs `ast_grep` (and, when it has a `rewrite`, `ast_edit` then
//! `resolve accept`) through the registry, and snapshots what a model would read.
//!
//! Case format:
//!
//! ```text
//! ### case name
//! language: dart            (optional; the `language` argument)
//! path: lib                 (optional; the `path` argument)
//! pattern: dispose($X)      (`⏎` stands for a newline)
//! rewrite: $X.dispose()     (optional: also stage, accept and show the files afterwards)
//! max_results: 2            (optional)
//! --- lib/a.dart
//! file content…
//! ```

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::{Value, json};
use std::path::Path;

struct Case {
    file: String,
    name: String,
    args: Vec<(String, String)>,
    files: Vec<(String, String)>,
}

fn parse_cases(file: &str, text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in text.split("\n### ").map(|b| b.trim_start_matches("### ")) {
        if block.trim().is_empty() || block.starts_with("//") {
            continue;
        }
        let mut parts = block.split("\n--- ");
        let header = parts.next().unwrap_or_default();
        let mut lines = header.lines();
        let name = lines.next().unwrap().trim().to_string();
        let args = lines
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (k, v) = l
                    .split_once(':')
                    .unwrap_or_else(|| panic!("{file}: case `{name}`: bad header line `{l}`"));
                (k.trim().to_string(), v.trim().replace('⏎', "\n"))
            })
            .collect();
        let files = parts
            .map(|p| {
                let (path, content) = p.split_once('\n').unwrap_or((p, ""));
                (path.trim().to_string(), content.to_string())
            })
            .collect();
        cases.push(Case {
            file: file.to_string(),
            name,
            args,
            files,
        });
    }
    cases
}

fn call_args(case: &Case, with_rewrite: bool) -> Value {
    let mut args = serde_json::Map::new();
    for (k, v) in &case.args {
        match k.as_str() {
            "rewrite" if !with_rewrite => {}
            "max_results" if with_rewrite => {}
            "max_results" => {
                args.insert(k.clone(), json!(v.parse::<u64>().unwrap()));
            }
            _ => {
                args.insert(k.clone(), json!(v));
            }
        }
    }
    Value::Object(args)
}

fn redact(text: &str, root: &Path) -> String {
    let canon = root.canonicalize().unwrap();
    text.replace(&canon.display().to_string(), "[ROOT]")
        .replace(&root.display().to_string(), "[ROOT]")
}

async fn run_case(case: &Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in &case.files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
    }
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());
    let mut out = String::new();
    let args = call_args(case, false);
    let res = registry.call("ast_grep", args.clone(), Surface::Full).await;
    out.push_str(&format!("ast_grep {args}\n"));
    if res.is_error {
        out.push_str("ERROR: ");
    }
    out.push_str(&res.text);
    out.push('\n');
    if case.args.iter().any(|(k, _)| k == "rewrite") {
        let args = call_args(case, true);
        let res = registry.call("ast_edit", args.clone(), Surface::Full).await;
        out.push_str(&format!("\nast_edit {args}\n"));
        if res.is_error {
            out.push_str("ERROR: ");
        }
        out.push_str(&res.text);
        out.push('\n');
        let edit_id = res
            .structured
            .as_ref()
            .and_then(|s| s.get("edit_id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(id) = edit_id {
            let res = registry
                .call(
                    "resolve",
                    json!({"edit_id": id, "action": "accept"}),
                    Surface::Full,
                )
                .await;
            out.push_str(&format!("\nresolve {id} accept\n{}\n", res.text));
            assert!(!res.is_error, "{}", res.text);
            for (path, _) in &case.files {
                let after = std::fs::read_to_string(dir.path().join(path)).unwrap();
                out.push_str(&format!("\n=== {path} after accept\n{after}"));
            }
        }
    }
    redact(&out, dir.path())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    entries.sort();
    let mut count = 0;
    let mut languages = std::collections::BTreeSet::new();
    let only = std::env::var("CORPUS_ONLY").ok();
    for path in entries {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for case in parse_cases(&stem, &text) {
            if only
                .as_deref()
                .is_some_and(|o| !case.name.contains(o) && o != stem)
            {
                continue;
            }
            let output = run_case(&case).await;
            count += 1;
            languages.insert(case.file.clone());
            let snap = format!(
                "{}__{}",
                case.file,
                case.name
                    .to_lowercase()
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
            );
            insta::with_settings!({
                snapshot_path => "snapshots/corpus",
                prepend_module_to_snapshot => false,
                description => format!("{}: {}", case.file, case.name),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(snap, output);
            });
        }
    }
    if only.is_none() {
        assert!(
            count >= 60,
            "the corpus must hold at least 60 cases, found {count}"
        );
        assert!(
            languages.len() >= 10,
            "the corpus must cover at least 10 languages, found {languages:?}"
        );
    }
}
