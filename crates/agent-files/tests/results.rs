//! Every file tool's result as a model and a client read it: the text, the structured content
//! and whether it is an error, one call each way a result can end, in one snapshot.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::{Value, json};

#[tokio::test]
async fn every_tool_result_text_and_structured() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/a.py"),
        "def f():\n    return 1\n\n# TODO one\n",
    )
    .unwrap();
    std::fs::write(root.join("src/b.py"), "x = 1  # TODO two\ny = 2\n").unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("blob.bin"), b"\x00\x01\x02").unwrap();
    let r = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    let cases: Vec<(&str, &str, Value)> = vec![
        ("read whole", "read", json!({"path": "notes.txt"})),
        (
            "read window",
            "read",
            json!({"path": "notes.txt", "offset": 2, "limit": 1}),
        ),
        (
            "read past the end",
            "read",
            json!({"path": "notes.txt", "offset": 9}),
        ),
        ("read a binary", "read", json!({"path": "blob.bin"})),
        ("grep", "grep", json!({"pattern": "TODO"})),
        (
            "grep capped",
            "grep",
            json!({"pattern": "TODO", "limit": 1}),
        ),
        ("grep nothing", "grep", json!({"pattern": "nowhere"})),
        ("glob", "glob", json!({"pattern": "*.py", "sort": "path"})),
        (
            "glob capped",
            "glob",
            json!({"pattern": "**/*", "sort": "path", "limit": 1}),
        ),
        (
            "glob nothing",
            "glob",
            json!({"pattern": "*.rs", "path": "src"}),
        ),
        (
            "write",
            "write",
            json!({"path": "new/c.txt", "content": "hello\n"}),
        ),
        (
            "edit",
            "edit",
            json!({"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
        ),
        (
            "edit all",
            "edit",
            json!({"path": "src/a.py", "old_string": "1", "new_string": "2", "replace_all": true}),
        ),
        (
            "apply_patch unified",
            "apply_patch",
            json!({"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n alpha\n-BETA\n+beta\n"}),
        ),
        (
            "apply_patch envelope",
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: d.txt\n+d\n*** Delete File: new/c.txt\n*** End Patch\n"}),
        ),
        (
            "apply_patch refused",
            "apply_patch",
            json!({"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-nothing like it\n+x\n"}),
        ),
    ];
    let mut report = String::new();
    for (name, tool, args) in cases {
        let out = r.call(tool, args, Surface::Full).await;
        report.push_str(&format!(
            "## {name}\nis_error: {}\ntext: {}\nstructured: {}\nchanged_files: {:?}\n\n",
            out.is_error,
            out.text,
            out.structured
                .as_ref()
                .map_or("none".to_string(), |s| s.to_string()),
            out.changed_files
        ));
    }
    insta::assert_snapshot!("results", report);
}
