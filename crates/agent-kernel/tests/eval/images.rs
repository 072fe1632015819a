//! Images are returned inline and written to the run's image folder, outside the workspace.

use crate::common::*;
use agent_kernel::KernelConfig;
use std::path::PathBuf;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_figure_is_attached_and_saved_outside_the_workspace() {
    let kit = Kit::new(KernelConfig::default());
    ok(&kit.py("x = 1").await, "(no output)");
    let out = kit
        .py("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 4, 1])\nplt.show()\nplt.figure(); plt.bar([1], [2]); None")
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.images.len(), 2, "{}", out.text);
    let outputs = &out.structured.as_ref().expect("structured")["outputs"];
    let paths: Vec<PathBuf> = outputs
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| o["data"]["image/png"]["path"].as_str().map(PathBuf::from))
        .collect();
    assert_eq!(paths.len(), 2, "{outputs}");
    // the second eval call of the run, images 1 and 2
    assert!(paths[0].ends_with("cell-2-1.png"), "{}", paths[0].display());
    assert!(paths[1].ends_with("cell-2-2.png"), "{}", paths[1].display());
    let root = std::fs::canonicalize(kit.dir.path()).expect("root");
    for (i, p) in paths.iter().enumerate() {
        contains(&out, &[&format!("saved as {}]", p.display())]);
        assert!(p.is_absolute() && !p.starts_with(kit.dir.path()) && !p.starts_with(&root));
        let bytes = std::fs::read(p).expect("the saved PNG");
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        assert_eq!(bytes, out.images[i].data, "the file is the attached image");
    }
    let dir = paths[0].parent().expect("folder").to_path_buf();
    // The figure's pixel size follows matplotlib's version: not part of what is checked.
    insta::with_settings!({filters => vec![(r"PNG \d+×\d+", "PNG [size]")]}, {
        insta::assert_snapshot!(
            "images_saved",
            out.text.replace(&dir.display().to_string(), "[images]")
        );
    });
    // the folder goes when the run ends
    drop(kit);
    assert!(!dir.exists(), "{} was left behind", dir.display());
}
