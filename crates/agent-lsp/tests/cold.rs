//! Cold answers that know they are cold: `references` on a fresh pyright over a project of two
//! thousand files is either complete or says it is partial — never a short list that claims to
//! be whole.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_references_are_complete_or_flagged_partial() {
    require("pyright-langserver");
    let fx = fixture("", config("python", "pyright"));
    std::fs::write(
        fx.root.join("pyproject.toml"),
        "[project]\nname = \"big\"\n",
    )
    .unwrap();
    std::fs::write(
        fx.root.join("lib.py"),
        "def target() -> int:\n    return 1\n",
    )
    .unwrap();
    let pkg = fx.root.join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    for i in 0..2000 {
        std::fs::write(
            pkg.join(format!("m{i:04}.py")),
            format!(
                "from lib import target\n\n\ndef use{i}() -> int:\n    return target() + {i}\n"
            ),
        )
        .unwrap();
    }
    let args = json!({"operation": "references", "file": "lib.py", "line": 1, "symbol": "target"});
    let cold = fx.lsp(args.clone()).await;
    assert!(!cold.is_error, "{}", cold.text);
    let s = cold.structured.clone().unwrap();
    let (cold_total, cold_partial) = (
        s["total"].as_u64().unwrap(),
        s["partial"].as_bool().unwrap(),
    );
    // Warm: the same question once the server has settled.
    let warm = fx.lsp(args).await;
    let w = warm.structured.clone().unwrap();
    let warm_total = w["total"].as_u64().unwrap();
    assert!(warm_total > 2000, "warm answer incomplete: {}", warm.text);
    assert!(
        cold_partial || cold_total == warm_total,
        "the cold answer claimed to be complete with {cold_total} of {warm_total} references"
    );
}
