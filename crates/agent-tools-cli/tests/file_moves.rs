//! Issue 42: `lsp_rename` with `new_path` moves a file and fixes what imports it, through
//! `agent-tools call` against typescript-language-server and rust-analyzer
//! (`workspace/willRenameFiles`). The move and the import edits are written all or nothing,
//! then the import witness reads the workspace for an import still naming the old path: a move
//! rust-analyzer leaves imports behind for is rolled back with them listed. A server that cannot
//! plan a move (pyright) is refused up front; nothing moves.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use common::call_json as call;
use serde_json::json;
use std::path::Path;

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-tools")).unwrap();
    std::fs::write(cfg.path().join("agent-tools/lsp.json"), "{}").unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (dir, cfg)
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

const LIB_TS: &str = "export function build(x: number): number {\n  return x;\n}\n";

#[test]
fn typescript_moves_fix_the_imports() {
    agent_testkit::require("typescript-language-server");
    let (dir, cfg) = project(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("src/lib.ts", LIB_TS),
        (
            "src/a.ts",
            "import { build } from \"./lib\";\n\nexport const a = build(1);\n",
        ),
        (
            "src/deep/b.ts",
            "import { build } from \"../lib\";\n\nexport const b = build(2);\n",
        ),
    ]);
    let r = dir.path();
    // A dry run plans it and writes nothing.
    let args = json!({"path": "src/lib.ts", "new_path": "src/util/lib.ts", "dry_run": true});
    let (err, text, _) = call(r, cfg.path(), "lsp_rename", args);
    assert!(!err, "{text}");
    assert!(
        text.contains("dry run: nothing was written") && text.contains("It would move"),
        "{text}"
    );
    assert!(
        r.join("src/lib.ts").exists() && !r.join("src/util").exists(),
        "{text}"
    );
    // The move.
    let args = json!({"path": "src/lib.ts", "new_path": "src/util/lib.ts"});
    let (err, text, s) = call(r, cfg.path(), "lsp_rename", args);
    assert!(!err, "{text}");
    assert!(
        text.contains("checked: no import names `src/lib.ts`"),
        "{text}"
    );
    assert_eq!(s["moved"]["to"], "src/util/lib.ts", "{s}");
    assert!(!r.join("src/lib.ts").exists());
    assert_eq!(read(r, "src/util/lib.ts"), LIB_TS);
    assert!(
        read(r, "src/a.ts").contains("from \"./util/lib\""),
        "{}",
        read(r, "src/a.ts")
    );
    assert!(
        read(r, "src/deep/b.ts").contains("from \"../util/lib\""),
        "{}",
        read(r, "src/deep/b.ts")
    );
    // Onto an existing file, out of the root, a folder: refused, naming the argument.
    for (args, says) in [
        (
            json!({"path": "src/a.ts", "new_path": "src/deep/b.ts"}),
            "already exists",
        ),
        (
            json!({"path": "src/a.ts", "new_path": "../out.ts"}),
            "new_path",
        ),
        (
            json!({"path": "src/deep", "new_path": "src/deeper"}),
            "is a folder",
        ),
        (
            json!({"path": "src/a.ts", "new_path": "src/x.ts", "symbol": "a"}),
            "takes no `symbol`",
        ),
    ] {
        let (err, text, _) = call(r, cfg.path(), "lsp_rename", args.clone());
        assert!(err && text.contains(says), "{args}: {text}");
    }
    assert!(r.join("src/a.ts").exists() && !r.join("src/x.ts").exists());
}

const LIB_RS: &str = "pub mod util;\n\npub fn f() -> i32 {\n    util::g() + crate::util::g()\n}\n";

#[test]
fn rust_analyzer_renames_a_module_and_a_move_it_cannot_plan_is_rolled_back() {
    agent_testkit::require("rust-analyzer");
    let (dir, cfg) = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        ("src/lib.rs", LIB_RS),
        ("src/util.rs", "pub fn g() -> i32 {\n    1\n}\n"),
        ("src/inner.rs", "\n"),
    ]);
    let r = dir.path();
    let args = json!({"path": "src/util.rs", "new_path": "src/helpers.rs"});
    let (err, text, _) = call(r, cfg.path(), "lsp_rename", args);
    assert!(!err, "{text}");
    assert!(
        text.contains("checked: no import names `src/util.rs`"),
        "{text}"
    );
    let lib = read(r, "src/lib.rs");
    assert!(
        lib.contains("pub mod helpers;") && lib.contains("helpers::g() + crate::helpers::g()"),
        "{lib}"
    );
    // Into another module's folder: rust-analyzer's edits leave `mod helpers;` where it was;
    // the witness finds it and the move is undone.
    let before = read(r, "src/lib.rs");
    let args = json!({"path": "src/helpers.rs", "new_path": "src/inner/helpers.rs"});
    let (err, text, _) = call(r, cfg.path(), "lsp_rename", args);
    assert!(err, "{text}");
    assert!(
        text.contains("moved back, every file is as it was")
            && text.contains("src/lib.rs:1: pub mod helpers;"),
        "{text}"
    );
    assert_eq!(read(r, "src/lib.rs"), before);
    assert!(r.join("src/helpers.rs").exists() && !r.join("src/inner").exists());
}

#[test]
fn a_server_without_file_moves_is_refused_and_nothing_moves() {
    agent_testkit::require("pyright-langserver");
    let (dir, cfg) = project(&[
        ("pyproject.toml", "[project]\nname = \"t\"\n"),
        ("lib.py", "def f() -> int:\n    return 1\n"),
        ("main.py", "from lib import f\n\nprint(f())\n"),
    ]);
    let r = dir.path();
    let args = json!({"path": "lib.py", "new_path": "pkg/lib.py"});
    let (err, text, _) = call(r, cfg.path(), "lsp_rename", args);
    assert!(err, "{text}");
    assert!(
        text.contains("pyright cannot say which imports a move of `lib.py` needs")
            && text.contains("nothing was moved"),
        "{text}"
    );
    assert!(r.join("lib.py").exists() && !r.join("pkg").exists());
}
