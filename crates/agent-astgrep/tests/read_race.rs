//! Issue 41: a folder of the root exchanged with a symlink to an outside folder while
//! `ast_grep` runs. The engine read each walked file by its absolute path, following the link in
//! the middle: 14 % of calls matched the outside file. Files are now read below the root's
//! descriptor through no symlink. 10,000 calls against the swap; the run first proves the race
//! is real (naive reads by path see the outside file).

#![allow(clippy::unwrap_used)]

use agent_astgrep::{AstGrepConfig, attach};
use agent_testkit::swap::Swapper;
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

const SECRET: &str = "OUTSIDE_SECRET";

#[tokio::test(flavor = "multi_thread")]
async fn ast_grep_never_matches_a_file_outside_the_root_through_a_swapped_folder() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    std::fs::write(root.path().join("d/f.py"), "inside = 1\n").unwrap();
    std::fs::write(outside.path().join("f.py"), format!("{SECRET} = 2\n")).unwrap();
    let registry = Registry::new(RunInfo {
        root: root.path().to_path_buf(),
        ..Default::default()
    });
    attach(&registry, AstGrepConfig::default());
    let swapper = Swapper::start(root.path(), "d", outside.path());
    assert!(
        swapper.race_is_real("f.py", SECRET),
        "the swap never exposed the outside file: no race to test"
    );
    let mut inside = 0;
    for i in 0..10_000 {
        let out = registry
            .call(
                "ast_grep",
                json!({"pattern": "$A = $B", "language": "python"}),
                Surface::Full,
            )
            .await;
        assert!(
            !out.text.contains(SECRET),
            "attempt {i} ({} swaps): an outside byte: {}",
            swapper.swaps(),
            out.text
        );
        inside += usize::from(out.text.contains("inside = 1"));
    }
    drop(swapper);
    // The calls searched: the inside file was found (whenever the walk met the folder).
    assert!(inside > 0, "no call found the inside file");
}
