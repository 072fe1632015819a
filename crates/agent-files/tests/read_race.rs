//! Issue 41: a folder of the root exchanged with a symlink to an outside folder while `read`,
//! `grep` and `glob` run. `confine` checked the path, then the file was reopened by its absolute
//! path, following the link in the middle: 5 % of reads and 4 % of greps returned the outside
//! file. Every read now opens below the root's descriptor through no symlink, and a listed name
//! must be reached the same way. Each tool is called 10,000 times against the swap; each run
//! first proves the race is real (naive reads by path see the outside file).

#![allow(clippy::unwrap_used)]

use agent_testkit::swap::Swapper;
use agent_tier::{Registry, RunInfo, Surface};
use serde_json::{Value, json};

const ATTEMPTS: usize = 10_000;
const SECRET: &str = "OUTSIDE-SECRET";

/// Fields drop in order: the swapper stops before the folders go.
struct Scene {
    swapper: Swapper,
    registry: Registry,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn scene() -> Scene {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    std::fs::write(root.path().join("d/f.txt"), "inside line\n").unwrap();
    std::fs::write(outside.path().join("f.txt"), format!("{SECRET} line\n")).unwrap();
    std::fs::write(outside.path().join("outside-only-name.txt"), "x\n").unwrap();
    let registry = Registry::new(RunInfo {
        root: root.path().to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&registry);
    let swapper = Swapper::start(root.path(), "d", outside.path());
    assert!(
        swapper.race_is_real("f.txt", SECRET),
        "the swap never exposed the outside file: no race to test"
    );
    Scene {
        swapper,
        registry,
        _dirs: (root, outside),
    }
}

/// Call `tool` with `args` ATTEMPTS times; every answer must be free of `forbidden`, and some
/// must show `wanted` (the inside file: the calls did their work). Returns how many answers were
/// refusals (the race seen and refused).
async fn hammer(scene: &Scene, tool: &str, args: Value, forbidden: &[&str], wanted: &str) -> usize {
    let (mut refused, mut found) = (0, 0);
    for i in 0..ATTEMPTS {
        let out = scene.registry.call(tool, args.clone(), Surface::Full).await;
        for f in forbidden {
            assert!(
                !out.text.contains(f),
                "{tool}, attempt {i} of {ATTEMPTS} ({} swaps): an outside byte: {}",
                scene.swapper.swaps(),
                out.text
            );
        }
        refused += usize::from(out.is_error);
        found += usize::from(out.text.contains(wanted));
    }
    assert!(found > 0, "{tool}: no answer showed {wanted:?}");
    refused
}

#[tokio::test(flavor = "multi_thread")]
async fn read_never_returns_a_file_outside_the_root_through_a_swapped_folder() {
    let scene = scene();
    let refused = hammer(
        &scene,
        "read",
        json!({"path": "d/f.txt"}),
        &[SECRET],
        "inside line",
    )
    .await;
    eprintln!(
        "read: {refused} of {ATTEMPTS} refused, {} swaps",
        scene.swapper.swaps()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_never_searches_a_file_outside_the_root_through_a_swapped_folder() {
    let scene = scene();
    let args = json!({"pattern": "line"});
    hammer(&scene, "grep", args, &[SECRET], "inside line").await;
    // And grep naming the file itself.
    let args = json!({"pattern": "line", "path": "d/f.txt"});
    hammer(&scene, "grep", args, &[SECRET], "inside line").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn glob_never_lists_a_name_outside_the_root_through_a_swapped_folder() {
    let scene = scene();
    hammer(
        &scene,
        "glob",
        json!({"pattern": "**/*.txt"}),
        &["outside-only-name"],
        "f.txt",
    )
    .await;
}
