//! `lsp status` lists at most 50 roots per server and says how many more there are (it cut the
//! list at 50 without a word). No server is started: the server's binary is missing on purpose,
//! and its line still names where its root marker was found.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_says_how_many_roots_it_left_out() {
    let mut cfg = config("python", "pyright");
    patch(
        &mut cfg,
        "pyright",
        agent_lsp::ServerPatch {
            commands: Some(vec![vec!["no-such-language-server-xyz".into()]]),
            ..Default::default()
        },
    );
    let fx = fixture("", cfg);
    for i in 0..75 {
        let d = fx.root.join(format!("packages/p{i:02}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    }
    let out = fx.lsp(json!({"operation": "status"})).await;
    let text = fx.red(&out.text);
    let line = text
        .lines()
        .find(|l| l.starts_with("- pyright (python): not usable;"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("root marker found in packages/p00, packages/p01,"),
        "{line}"
    );
    assert!(line.contains("packages/p49 … and 25 more roots"), "{line}");
    assert!(!line.contains("packages/p50"), "{line}");
    let detected = &out.structured.unwrap()["detected"];
    let pyright = detected
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "pyright")
        .unwrap();
    assert_eq!(pyright["roots"].as_array().unwrap().len(), 50);
    assert_eq!(pyright["roots_total"], json!(75));
}
