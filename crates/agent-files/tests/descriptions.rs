//! What the file tools' descriptions promise is what they do: a model plans its call from them.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

fn registry(root: &std::path::Path) -> Registry {
    let r = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    r
}

fn description(r: &Registry, tool: &str) -> String {
    r.list(Surface::Full)
        .into_iter()
        .find(|t| t.name == tool)
        .unwrap()
        .description
}

/// apply_patch recounts a hunk whose header counts disagree with its body (issue 22); its
/// description still said "hunk counts must match" (issue 23).
#[tokio::test]
async fn apply_patch_says_a_miscounted_hunk_is_recounted_and_does_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "a\nb\nc\nd\n").unwrap();
    let r = registry(dir.path());
    let text = description(&r, "apply_patch");
    assert!(!text.contains("must match;"), "{text}");
    assert!(text.contains("miscounted hunks are recounted"), "{text}");
    let patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-a\n-b\n-c\n+A\n+B\n+C\n";
    let out = r
        .call("apply_patch", json!({"patch": patch}), Surface::Full)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("recounted"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        "A\nB\nC\nd\n"
    );
}
