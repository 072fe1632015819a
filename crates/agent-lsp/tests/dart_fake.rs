//! The dart entry of the table, against a scripted fake server speaking real LSP
//! (`tests/support/fake_dart_lsp.py`; no Dart SDK is reachable). Also: a server that dies
//! mid-request, one killed mid-request, and the restart after each.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;
use std::time::Duration;

fn fake_config() -> agent_lsp::LspConfig {
    let mut cfg = config("dart", "dart");
    let script = fixtures().join("../support/fake_dart_lsp.py");
    patch(
        &mut cfg,
        "dart",
        agent_lsp::ServerPatch {
            commands: Some(vec![vec!["python3".into(), script.display().to_string()]]),
            ..Default::default()
        },
    );
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_dart() {
    require("python3");
    let fx = fixture("dart", fake_config());
    let cases = vec![
        // Line 8 has non-BMP text before the symbol: the fake counts UTF-16 units.
        ok(
            json!({"operation": "definition", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &[
                "definition of `makeGreeter` at lib/main.dart:8:44 (dart):\nlib/main.dart:5:9: Greeter makeGreeter() => Greeter();",
            ],
        ),
        ok(
            json!({"operation": "hover", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &["```dart\nmakeGreeter\n```\nfake hover for `makeGreeter`"],
        ),
        ok(
            json!({"operation": "references", "file": "lib/main.dart", "line": 5, "symbol": "makeGreeter"}),
            &[
                "lib/main.dart:5:9: Greeter makeGreeter() => Greeter();\nlib/main.dart:8:44: final label",
            ],
        ),
        ok(
            json!({"operation": "symbols", "file": "lib/main.dart"}),
            &[
                "class Greeter — lib/main.dart:1:7",
                "function makeGreeter — lib/main.dart:5:9",
            ],
        ),
        ok(
            json!({"operation": "code_actions", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &[
                "- Fake fix for makeGreeter [quickfix] (preferred)",
                "(1 other action(s) — refactorings or source actions — not shown",
            ],
        ),
        ok(
            json!({"operation": "diagnostics", "file": "lib/main.dart"}),
            &["no errors or warnings"],
        ),
        err(
            json!({"operation": "definition", "file": "lib/main.dart", "line": 8}),
            &["`symbol` is required for `definition`"],
        ),
        err(
            json!({"operation": "definition", "file": "lib/main.dart", "line": 8, "symbol": "nope"}),
            &[
                "symbol `nope` is not on line 8 of `lib/main.dart`; that line reads: `final label = 'héllo wörld 😀'; final g = makeGreeter();`",
            ],
        ),
        ok(
            // `g.greet` is qualified: its identifier `greet` is meant (a bare `g` with
            // `occurrence` 2 used to land inside `greet`; now `g` is one whole identifier).
            json!({"operation": "definition", "file": "lib/main.dart", "line": 9, "symbol": "g.greet"}),
            &["lib/main.dart:2:10: String greet(String name)"],
        ),
        ok(
            json!({"operation": "definition", "file": "lib/main.dart", "line": 9, "symbol": "g"}),
            &[
                "lib/main.dart:8:40: final label",
                "`g` was taken as a whole identifier (also inside: `greet`)",
            ],
        ),
    ];
    check_all(&fx, &cases).await;
    check_write_ledger(
        &fx,
        "lib/extra.dart",
        "int f() => 1;\n",
        "int f() => undefinedThing;\n",
        "undefinedThing",
    )
    .await;
    check_rename(
        &fx,
        json!({"file": "lib/main.dart", "line": 8, "symbol": "makeGreeter", "new_name": "buildGreeter"}),
        &["lib/main.dart"],
    )
    .await;
    assert_eq!(fx.read("lib/main.dart").matches("buildGreeter").count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_dies_mid_request_and_restarts() {
    require("python3");
    let fx = fixture("dart", fake_config());
    // The fake exits with code 3 while handling this request.
    let out = fx
        .lsp(json!({"operation": "hover", "file": "lib/main.dart", "line": 10, "symbol": "crash"}))
        .await;
    assert!(out.is_error);
    insta::assert_snapshot!("died_mid_request", fx.red(&out.text));
    let status = fx
        .lsp(json!({"operation": "status", "file": "lib/main.dart"}))
        .await;
    let text = fx.red(&status.text);
    assert!(text.contains("- dart for . (pid "), "{text}");
    assert!(
        text.contains(": crashed (exited with status 3); the next call restarts it"),
        "{text}"
    );
    assert!(text.contains("fake dart: crashing on purpose"), "{text}");
    // The next call restarts it.
    check(
        &fx,
        &ok(
            json!({"operation": "definition", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &["lib/main.dart:5:9"],
        ),
    )
    .await;
    let status = fx.lsp(json!({"operation": "status"})).await;
    assert!(status.text.contains(": running"), "{}", status.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_request() {
    require("python3");
    let fx = fixture("dart", fake_config());
    check(
        &fx,
        &ok(
            json!({"operation": "hover", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &["fake hover"],
        ),
    )
    .await;
    let status = fx.lsp(json!({"operation": "status"})).await;
    let pid = status.structured.unwrap()["servers"][0]["pid"]
        .as_u64()
        .unwrap() as u32;
    std::fs::write(
        fx.root.join("lib/main.dart"),
        fx.read("lib/main.dart") + "\nvoid hang() {}\n",
    )
    .unwrap();
    let reg = fx.reg.clone();
    let call = tokio::spawn(async move {
        reg.call(
            "lsp",
            json!({"operation": "hover", "file": "lib/main.dart", "line": 13, "symbol": "hang"}),
            agent_tier::Surface::Full,
        )
        .await
    });
    // The fake marks that it holds the request; then kill its process group.
    let marker = fx.root.join(".hanging");
    for _ in 0..600 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(marker.exists(), "the fake never received the hover");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = call.await.unwrap();
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("dart exited while handling `textDocument/hover` (killed by signal 9 (SIGKILL: often the out-of-memory killer)); the next call restarts it"),
        "{}",
        out.text
    );
    check(
        &fx,
        &ok(
            json!({"operation": "hover", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
            &["fake hover"],
        ),
    )
    .await;
}

/// What the model reads, as snapshots (the fake answers deterministically).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_results() {
    require("python3");
    let fx = fixture("dart", fake_config());
    let calls = [
        (
            "definition",
            json!({"operation": "definition", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
        ),
        (
            "references",
            json!({"operation": "references", "file": "lib/main.dart", "line": 5, "symbol": "makeGreeter"}),
        ),
        (
            "hover",
            json!({"operation": "hover", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
        ),
        (
            "symbols",
            json!({"operation": "symbols", "file": "lib/main.dart"}),
        ),
        (
            "code_actions",
            json!({"operation": "code_actions", "file": "lib/main.dart", "line": 8, "symbol": "makeGreeter"}),
        ),
        (
            "not_on_line",
            json!({"operation": "hover", "file": "lib/main.dart", "line": 8, "symbol": "greet"}),
        ),
    ];
    for (name, args) in calls {
        let out = fx.lsp(args).await;
        insta::assert_snapshot!(format!("render_{name}"), fx.red(&out.text));
        // The structured result too: the typed reports must keep its shape.
        insta::assert_json_snapshot!(format!("structured_{name}"), out.structured);
    }
    let out = fx
        .write("lib/extra.dart", "int f() => undefinedThing;\n")
        .await;
    insta::assert_snapshot!("render_write_wrapper", fx.red(&out.text));
    insta::assert_json_snapshot!("render_write_wrapper_structured", out.structured);
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "lib/main.dart", "line": 1, "symbol": "Greeter", "new_name": "Welcomer"}),
        )
        .await;
    insta::assert_snapshot!("render_rename", fx.red(&out.text));
    insta::assert_json_snapshot!("structured_rename", out.structured);
    // Addressed by name: the resolution is said first, and in the structured result.
    let out = fx
        .lsp(json!({"operation": "definition", "symbol": "makeGreeter"}))
        .await;
    insta::assert_snapshot!("render_by_name", fx.red(&out.text));
    insta::assert_json_snapshot!("structured_by_name", out.structured);
}

/// A rename whose written result the server's own references do not confirm is undone whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_not_confirmed_by_references_is_rolled_back() {
    require("python3");
    let fx = fixture("dart", fake_config());
    let before = fx.read("lib/main.dart");
    // The fake answers references of a `lossy…` name with only the first occurrence.
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "lib/main.dart", "line": 5, "symbol": "makeGreeter", "new_name": "lossyGreeter"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("rolled back, every file is as it was")
            && out
                .text
                .contains("do not include 1 of the 2 edit(s): lib/main.dart:8"),
        "{}",
        out.text
    );
    assert_eq!(fx.read("lib/main.dart"), before, "the rename was undone");
    // The server was told: a rename right after plans from the restored content.
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "lib/main.dart", "line": 5, "symbol": "makeGreeter", "new_name": "buildGreeter"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains(
            "the server's own check: verified: dart's references of `buildGreeter` reach all 2 renamed occurrence(s)"
        ),
        "{}",
        out.text
    );
    // This family alone has no second witness (the structural-search family provides it), so
    // the rename is not called verified.
    assert_eq!(out.structured.as_ref().unwrap()["verified"], json!(false));
    assert!(
        out.text.contains("not verified by a second witness"),
        "{}",
        out.text
    );
    assert_eq!(fx.read("lib/main.dart").matches("buildGreeter").count(), 2);
}

/// Issue 23: `new_name` is one identifier, checked before anything is planned. Before,
/// `a.b`, `new-name` and a name with a line break were written into the file (`def a.b():`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_name_that_is_not_one_identifier_is_refused() {
    require("python3");
    let fx = fixture("dart", fake_config());
    let before = fx.read("lib/main.dart");
    for bad in ["a.b", "new-name", "two words", "line\nbreak", "9lives", ""] {
        let out = fx
            .call(
                "lsp_rename",
                json!({"file": "lib/main.dart", "line": 5, "symbol": "makeGreeter", "new_name": bad}),
            )
            .await;
        assert!(out.is_error, "{bad:?}: {}", out.text);
        assert!(out.text.contains("`new_name`"), "{bad:?}: {}", out.text);
        assert_eq!(fx.read("lib/main.dart"), before, "{bad:?} wrote");
    }
}

/// A new language server is one entry (issue 43's recipe in docs/ARCHITECTURE.md): a server the
/// table does not know, for a language it does not know, given by one `servers` entry (its
/// language, command, extensions and root marker) and one `languages` line, answers `lsp` like
/// a built-in one, contained, as a new user's untrusted project is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_server_is_one_entry() {
    require("python3");
    let script = fixtures().join("../support/fake_dart_lsp.py");
    let mut cfg = config("fakelang", "fake-ls");
    cfg.trust_project = false;
    patch(
        &mut cfg,
        "fake-ls",
        agent_lsp::ServerPatch {
            language: Some("fakelang".into()),
            commands: Some(vec![vec!["python3".into(), script.display().to_string()]]),
            extensions: Some([("fk".to_string(), "fakelang".to_string())].into()),
            root_markers: Some(vec!["fake.toml".into()]),
            ..Default::default()
        },
    );
    let fx = fixture("", cfg);
    std::fs::write(fx.root.join("fake.toml"), "").unwrap();
    let source = std::fs::read_to_string(fixtures().join("dart/lib/main.dart")).unwrap();
    std::fs::write(fx.root.join("main.fk"), source).unwrap();
    let out = fx
        .call(
            "lsp",
            json!({"operation": "hover", "file": "main.fk", "line": 8, "symbol": "makeGreeter"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("fake hover for `makeGreeter`"),
        "{}",
        out.text
    );
    let status = fx.call("lsp", json!({"operation": "status"})).await;
    assert!(status.text.contains("fake-ls"), "{}", status.text);
}
