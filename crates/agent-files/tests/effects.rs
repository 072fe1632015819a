//! The file tools through a registry: each writing tool reports the files it changed as the
//! typed effect wrappers select on, and a failed call reports none.

#![allow(clippy::unwrap_used)]

use agent_tier::{BoxFuture, CallContext, Registry, RunInfo, Surface, ToolOutput, Wrapper};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Records the changed files of every call it wraps, under the name of the call the test is
/// making (a wrapper sees what a call did, not which tool it was).
#[derive(Default)]
struct Seen {
    current: Mutex<String>,
    seen: Mutex<Vec<(String, Vec<String>)>>,
}

impl Wrapper for Seen {
    fn wraps(&self, output: &ToolOutput) -> bool {
        !output.changed_files.is_empty()
    }
    fn after<'a>(&'a self, output: ToolOutput, _cx: &'a CallContext) -> BoxFuture<'a, ToolOutput> {
        let current = self.current.lock().unwrap().clone();
        self.seen
            .lock()
            .unwrap()
            .push((current, output.changed_files.clone()));
        Box::pin(async move { output })
    }
}

#[tokio::test]
async fn writing_tools_report_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let registry = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&registry);
    let seen = Arc::new(Seen::default());
    registry.add_wrapper(seen.clone());
    let calls = [
        ("read", json!({"path": "a.txt"})),
        ("write", json!({"path": "sub/b.txt", "content": "x\n"})),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "absent", "new_string": "2"}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n 2\n--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+c\n"}),
        ),
    ];
    for (tool, args) in calls {
        *seen.current.lock().unwrap() = tool.to_string();
        registry.call(tool, args, Surface::Full).await;
    }
    assert_eq!(
        *seen.seen.lock().unwrap(),
        vec![
            ("write".to_string(), vec!["sub/b.txt".to_string()]),
            ("edit".to_string(), vec!["a.txt".to_string()]),
            (
                "apply_patch".to_string(),
                vec!["a.txt".to_string(), "c.txt".to_string()]
            ),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "1\n2\n"
    );
}
