//! A minimal harness embedding two families: one run's [`Registry`] with the file tools and
//! structural search, what the model would see on two surfaces, and three calls — a search, a
//! write the `plan` surface refuses, and the same write on `full`.
//!
//! ```sh
//! cargo run -p agent-tools --features files,astgrep --example harness [ROOT]
//! ```
//!
//! Without ROOT it works in a new folder under the temp directory holding one Python file.

use agent_tools::{Registry, RunInfo, Surface};
use serde_json::json;
use std::path::PathBuf;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = match std::env::args_os().nth(1) {
        Some(root) => PathBuf::from(root),
        None => {
            let dir =
                std::env::temp_dir().join(format!("agent-tools-harness-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a + b\n")?;
            dir
        }
    };

    // One registry per run: the root every path is confined to, and the families wanted.
    let registry = Registry::new(RunInfo {
        root: root.clone(),
        ..Default::default()
    });
    agent_tools::files::attach(&registry);
    agent_tools::astgrep::attach(&registry, Default::default());

    // The tier of a tool decides which surfaces see it: `plan` sees only the read tier.
    for surface in [Surface::Plan, Surface::Full] {
        let names: Vec<String> = registry.list(surface).into_iter().map(|t| t.name).collect();
        println!("{surface:?}: {}", names.join(", "));
    }

    let found = registry
        .call(
            "ast_grep",
            json!({"pattern": "return $A + $B", "language": "python"}),
            Surface::Full,
        )
        .await;
    println!("\nast_grep:\n{}", found.text);

    let args = json!({"path": "notes.md", "content": "checked calc.py\n"});
    let refused = registry.call("write", args.clone(), Surface::Plan).await;
    println!(
        "\nwrite on plan (error: {}):\n{}",
        refused.is_error, refused.text
    );
    let written = registry.call("write", args, Surface::Full).await;
    println!(
        "\nwrite on full (changed {:?}):\n{}",
        written.changed_files, written.text
    );
    Ok(())
}
