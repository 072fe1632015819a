//! `status`, `reload`, detection (missing binary, missing marker, several roots), config files,
//! and `diagnostics` with `"*"` (the project checkers).
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

const ALL: &[&str] = &[
    "rust-analyzer",
    "pyright",
    "basedpyright",
    "ty",
    "pylsp",
    "typescript-language-server",
    "clangd",
    "gopls",
    "dart",
];

/// Leave only `keep` in the table, so the snapshot does not depend on what else is installed.
fn only(cfg: &mut agent_lsp::LspConfig, keep: &str) {
    cfg.overrides.disable = ALL
        .iter()
        .filter(|i| **i != keep)
        .map(|s| s.to_string())
        .collect();
}

fn snap(name: &str, text: &str) {
    insta::with_settings!({filters => vec![(r"binary /[^\s)]+", "binary <path>")]}, {
        insta::assert_snapshot!(name, text);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_binary() {
    let mut cfg = config("python", "pyright");
    only(&mut cfg, "pyright");
    patch(
        &mut cfg,
        "pyright",
        agent_lsp::ServerPatch {
            commands: Some(vec![vec![
                "no-such-language-server-xyz".into(),
                "--stdio".into(),
            ]]),
            ..Default::default()
        },
    );
    let fx = fixture("python", cfg);
    let out = fx
        .lsp(json!({"operation": "definition", "file": "main.py", "line": 4, "symbol": "make_greeter"}))
        .await;
    assert!(out.is_error);
    snap("missing_binary_call", &fx.red(&out.text));
    let out = fx.lsp(json!({"operation": "status"})).await;
    assert!(!out.is_error);
    snap("missing_binary_status", &fx.red(&out.text));
    let out = fx
        .lsp(json!({"operation": "status", "file": "main.py"}))
        .await;
    snap("missing_binary_status_file", &fx.red(&out.text));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_marker() {
    require("ty");
    let mut cfg = config("python", "ty");
    only(&mut cfg, "ty");
    let fx = fixture("", cfg);
    std::fs::write(fx.root.join("lone.py"), "x = 1\nprint(x)\n").unwrap();
    let out = fx
        .lsp(json!({"operation": "hover", "file": "lone.py", "line": 2, "symbol": "x"}))
        .await;
    assert!(out.is_error);
    snap("missing_marker_call", &fx.red(&out.text));
    let out = fx.lsp(json!({"operation": "status"})).await;
    snap("missing_marker_status", &fx.red(&out.text));
    // Nothing was started.
    assert_eq!(out.structured.unwrap()["servers"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors() {
    let fx = fixture("python", config("python", "ty"));
    let cases = vec![
        err(
            json!({"operation": "hover", "line": 4, "symbol": "x"}),
            &["`path` is required for `hover` with `line`"],
        ),
        err(
            json!({"operation": "hover", "file": "main.py"}),
            &["`symbol` is required for `hover`: a name (`Class.method` works)"],
        ),
        err(
            json!({"operation": "hover", "file": "main.py", "symbol": "x", "occurrence": 2}),
            &["`occurrence` picks among the matches on `line`"],
        ),
        err(
            json!({"operation": "hover", "symbol": "x + 1"}),
            &["`x + 1` is not a name"],
        ),
        err(
            json!({"operation": "hover", "file": "main.py", "line": 99, "symbol": "x"}),
            &["`line` = 99 is not a line of `main.py` (it has 9 lines"],
        ),
        err(
            json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter", "occurrence": 2}),
            &["`occurrence` = 2 is out of range: `make_greeter` occurs 1 time(s) on line 4"],
        ),
        err(
            json!({"operation": "hover", "file": "../etc/passwd", "line": 1, "symbol": "x"}),
            &["outside the workspace root"],
        ),
        err(
            json!({"operation": "definition", "file": "notes.txt", "line": 1, "symbol": "x"}),
            &["does not exist"],
        ),
        err(
            json!({"operation": "symbols"}),
            &["`symbols` needs `query`"],
        ),
        err(
            json!({"operation": "diagnostics"}),
            &["`path` is required for `diagnostics`"],
        ),
        err(
            json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "x", "column": 3}),
            &["unknown field `column`"],
        ),
    ];
    check_all(&fx, &cases).await;
    std::fs::write(fx.root.join("notes.txt"), "x\n").unwrap();
    check(
        &fx,
        &err(
            json!({"operation": "definition", "file": "notes.txt", "line": 1, "symbol": "x"}),
            &["no language server for `notes.txt`: no server is configured for this file type"],
        ),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monorepo_roots_get_a_server_each_and_reload() {
    require("ty");
    let mut cfg = config("python", "ty");
    only(&mut cfg, "ty");
    let fx = fixture("", cfg);
    for sub in ["a", "b"] {
        let d = fx.root.join("packages").join(sub);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("pyproject.toml"),
            "[project]\nname = \"p\"\nversion = \"0\"\n",
        )
        .unwrap();
        std::fs::write(d.join("m.py"), "def f() -> int:\n    return 1\n\n\nf()\n").unwrap();
        check(
            &fx,
            &ok(
                json!({"operation": "definition", "file": format!("packages/{sub}/m.py"), "line": 5, "symbol": "f"}),
                &[&*format!("packages/{sub}/m.py:1:5: def f() -> int:").leak()],
            ),
        )
        .await;
    }
    let out = fx.lsp(json!({"operation": "status"})).await;
    let text = fx.red(&out.text);
    assert!(text.contains("- ty for packages/a (pid "), "{text}");
    assert!(text.contains("- ty for packages/b (pid "), "{text}");
    assert!(
        text.contains("- ty (python): usable for packages/a, packages/b; binary "),
        "{text}"
    );
    let out = fx
        .lsp(json!({"operation": "reload", "file": "packages/a/m.py"}))
        .await;
    let text = fx.red(&out.text);
    assert!(
        text.contains("stopped ty for packages/a\nstarted ty for packages/a (pid "),
        "{text}"
    );
    let out = fx.lsp(json!({"operation": "reload"})).await;
    assert!(
        out.text
            .contains("stopped ty for packages/a\nstopped ty for packages/b"),
        "{}",
        out.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_files_user_then_project() {
    let fx_dir = tempfile::tempdir().unwrap();
    let user = fx_dir.path().join("lsp.json");
    std::fs::write(
        &user,
        r#"{"servers": {"pyright": {"commands": [["user-pyright"]]}}, "languages": {"python": ["pyright"]}}"#,
    )
    .unwrap();
    let cfg = agent_lsp::LspConfig {
        user_config: Some(user),
        // The project's own file names commands: it is read only for a trusted project.
        trust_project: true,
        ..Default::default()
    };
    let fx = fixture("python", cfg.clone());
    let out = fx
        .lsp(json!({"operation": "status", "file": "main.py"}))
        .await;
    assert!(
        out.text
            .contains("- pyright: not usable; binary not found (user-pyright;"),
        "{}",
        out.text
    );
    // The project file wins over the user file.
    std::fs::create_dir_all(fx.root.join(".agent-tools")).unwrap();
    std::fs::write(
        fx.root.join(".agent-tools/lsp.json"),
        r#"{"servers": {"pyright": {"commands": [["project-pyright"]]}, "zls": {"language": "zig", "commands": [["zls"]], "extensions": {"zig": "zig"}, "root_markers": ["build.zig"]}}, "bogus": 1}"#,
    )
    .unwrap();
    let fx2 = fixture("python", cfg.clone());
    std::fs::create_dir_all(fx2.root.join(".agent-tools")).unwrap();
    std::fs::write(
        fx2.root.join(".agent-tools/lsp.json"),
        r#"{"servers": {"pyright": {"commands": [["project-pyright"]]}, "zls": {"language": "zig", "commands": [["zls"]], "extensions": {"zig": "zig"}, "root_markers": ["build.zig"]}}}"#,
    )
    .unwrap();
    let fx3 = {
        // attach reads the files: re-attach on the same root.
        let reg = agent_tier::Registry::new(agent_tier::RunInfo {
            root: fx2.root.clone(),
            ..Default::default()
        });
        agent_lsp::attach(&reg, cfg.clone());
        reg
    };
    let out = fx3
        .call(
            "lsp",
            json!({"operation": "status", "file": "main.py"}),
            agent_tier::Surface::Full,
        )
        .await;
    assert!(
        out.text
            .contains("- pyright: not usable; binary not found (project-pyright;"),
        "{}",
        out.text
    );
    let out = fx3
        .call(
            "lsp",
            json!({"operation": "status"}),
            agent_tier::Surface::Full,
        )
        .await;
    assert!(out.text.contains("- zls (zig): not usable"), "{}", out.text);
    // A broken file is reported, not fatal.
    let reg = agent_tier::Registry::new(agent_tier::RunInfo {
        root: fx.root.clone(),
        ..Default::default()
    });
    agent_lsp::attach(&reg, cfg);
    let out = reg
        .call(
            "lsp",
            json!({"operation": "status"}),
            agent_tier::Surface::Full,
        )
        .await;
    assert!(
        out.text.contains("config warning: ") && out.text.contains("unknown field `bogus`"),
        "{}",
        out.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_checkers_per_root() {
    for p in ["cargo", "pyright", "tsc", "go"] {
        require(p);
    }
    let fx = fixture("", config("python", "pyright"));
    for (dir, sub) in [
        ("python", "py"),
        ("rust", "rs"),
        ("ts", "web"),
        ("go", "svc"),
    ] {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(fixtures().join(dir))
            .arg(fx.root.join(sub))
            .status()
            .unwrap();
        assert!(status.success());
    }
    std::fs::write(fx.root.join("py/bad.py"), "value: int = \"text\"\n").unwrap();
    std::fs::write(
        fx.root.join("rs/src/extra.rs"),
        "pub fn f() -> i32 {\n    \"text\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        fx.root.join("web/src/extra.ts"),
        "export const n: number = \"text\";\n",
    )
    .unwrap();
    std::fs::write(
        fx.root.join("svc/extra.go"),
        "package main\n\nimport \"fmt\"\n\nfunc bad() {\n\tfmt.Printf(\"%d\\n\", \"text\")\n}\n",
    )
    .unwrap();
    let out = fx
        .lsp(json!({"operation": "diagnostics", "file": "*"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    for want in [
        "cargo check in rs (ran in ",
        "): 1 error(s), 0 warning(s)\nrs/src/extra.rs",
        "rs/src/extra.rs:2:5: error[E0308]: mismatched types\n    \"text\"",
        "pyright in py (ran in ",
        "py/bad.py:1:14: error[reportAssignmentType]:",
        "tsc in web (ran in ",
        "web/src/extra.ts:1:14: error[TS2322]: Type 'string' is not assignable to type 'number'.",
        "go vet in svc (ran in ",
        "): 1 error(s), 0 warning(s)\nsvc/extra.go",
        "svc/extra.go:6:2: error: fmt.Printf format %d has arg \"text\" of wrong type string",
    ] {
        assert!(text.contains(want), "expected `{want}` in:\n{text}");
    }
}

#[test]
fn tool_surface_and_schemas() {
    let reg = agent_tier::Registry::new(agent_tier::RunInfo {
        root: std::env::temp_dir(),
        ..Default::default()
    });
    agent_lsp::attach(&reg, config("python", "pyright"));
    let read_only: Vec<String> = reg
        .list(agent_tier::Surface::ReadOnly)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(read_only, ["lsp"]);
    for t in reg.list(agent_tier::Surface::Full) {
        insta::assert_json_snapshot!(format!("schema_{}", t.name), t);
    }
}

#[test]
fn doctor_reports_both_halves() {
    let fx_dir = tempfile::tempdir().unwrap();
    let root = fx_dir.path();
    std::fs::create_dir_all(root.join("svc")).unwrap();
    std::fs::write(root.join("svc/go.mod"), "module x\n").unwrap();
    let entries = agent_lsp::doctor(root);
    let gopls = entries.iter().find(|e| e.id == "gopls").unwrap();
    assert!(gopls.marker.as_ref().unwrap().ends_with("svc/go.mod"));
    let dart = entries.iter().find(|e| e.id == "dart").unwrap();
    assert!(dart.marker.is_none() && !dart.usable());
    assert!(
        dart.summary().contains("no root marker (pubspec.yaml)"),
        "{}",
        dart.summary()
    );
}
