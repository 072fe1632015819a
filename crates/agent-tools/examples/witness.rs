//! `cargo run --release -p agent-tools --features full --example witness`
//!
//! The identifier witness on Django 5.2.8 (`.tools/corpora`, fetched by `cargo xtask setup`),
//! in one run:
//!
//! - the witness's build (the first query walks and indexes every Python file) and a warm
//!   query, median of several names;
//! - a warm `lsp references` through the registry (the witness's check included) against a raw
//!   LSP client's single `textDocument/references` to a second pyright on the same tree; the
//!   goal is ≤ 1.1× + 10 ms.
#![allow(clippy::unwrap_used)] // a benchmark: a failed unwrap is a failed run

use agent_testkit::raw_lsp::{Raw, uri};
use agent_tools::{Registry, RunInfo, Surface};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const N: usize = 15;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn registry(root: &Path) -> Registry {
    let reg = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    let mut cfg = agent_tools::lsp::LspConfig {
        skip_config_files: true,
        trust_project: true,
        ..Default::default()
    };
    cfg.overrides
        .languages
        .insert("python".into(), vec!["pyright".into()]);
    agent_tools::lsp::attach(&reg, cfg);
    agent_tools::astgrep::attach(&reg, Default::default());
    reg
}

#[tokio::main]
async fn main() {
    let root = agent_testkit::django();
    let files = walkdir_count(&root);
    println!("Django 5.2.8: {files} Python files");

    // The witness alone.
    let reg = registry(&root);
    let w = reg.witness().unwrap();
    let near = root.join("django/shortcuts.py");
    let t = Instant::now();
    let first = w.occurrences(&near, "get_object_or_404", 1000).unwrap();
    let build = t.elapsed();
    let mut warm = Vec::new();
    for name in [
        "get_object_or_404",
        "QuerySet",
        "render",
        "reverse",
        "HttpResponse",
    ] {
        for _ in 0..3 {
            let t = Instant::now();
            let s = w.occurrences(&near, name, 100_000).unwrap();
            warm.push(t.elapsed());
            assert!(!s.occurrences.is_empty(), "{name}");
        }
    }
    let mut same = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        w.occurrences(&near, "get_object_or_404", 1000).unwrap();
        same.push(t.elapsed());
    }
    println!(
        "witness: build (first query, {} files indexed) {}; warm query median {} (5 names x 3, positions parsed for the first of each), repeated query {}",
        first.files,
        ms(build),
        ms(median(warm)),
        ms(median(same))
    );

    // Warm references: ours (witness included) against a raw client's single request.
    let args = json!({"operation": "references", "file": "django/shortcuts.py", "line": 69,
                      "symbol": "get_object_or_404"});
    let out = reg.call("lsp", args.clone(), Surface::Full).await;
    assert!(!out.is_error, "{}", out.text);
    let mut ours = Vec::new();
    for _ in 0..N {
        let t = Instant::now();
        let out = reg.call("lsp", args.clone(), Surface::Full).await;
        ours.push(t.elapsed());
        assert_eq!(
            out.structured.as_ref().unwrap()["total"],
            19,
            "{}",
            out.text
        );
    }
    let program = agent_testkit::require("pyright-langserver");
    let mut raw = Raw::start(&program, &["--stdio"], &root).await;
    let init = json!({"processId": null, "rootUri": uri(&root),
                      "workspaceFolders": [{"uri": uri(&root), "name": "django"}],
                      "capabilities": {}});
    raw.request("initialize", init).await;
    raw.notify("initialized", json!({})).await;
    let text = std::fs::read_to_string(&near).unwrap();
    raw.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(&near), "languageId": "python", "version": 1, "text": text}}),
    )
    .await;
    let params = json!({"textDocument": {"uri": uri(&near)}, "position": {"line": 68, "character": 4},
                        "context": {"includeDeclaration": true}});
    // Warm it up until its answer is whole.
    for _ in 0..60 {
        let r = raw.request("textDocument/references", params.clone()).await;
        if r["result"].as_array().map_or(0, Vec::len) == 19 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mut theirs = Vec::new();
    for _ in 0..N {
        let t = Instant::now();
        let r = raw.request("textDocument/references", params.clone()).await;
        theirs.push(t.elapsed());
        assert_eq!(r["result"].as_array().map_or(0, Vec::len), 19);
    }
    let (o, r) = (median(ours), median(theirs));
    println!(
        "warm references (19 sites): ours {} vs raw client {} — {:.2}x, +{} (goal: <= 1.1x + 10 ms)",
        ms(o),
        ms(r),
        o.as_secs_f64() / r.as_secs_f64(),
        ms(o.saturating_sub(r))
    );
}

fn walkdir_count(root: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                n += 1;
            }
        }
    }
    n
}
