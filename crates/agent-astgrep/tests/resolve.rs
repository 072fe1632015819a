//! `resolve` and the run-level behaviour around it: stale files, rollback, discard, unknown and
//! already-resolved ids, edits belonging to their run; plus the walk's skip counts, the tool
//! surfaces and the generated schemas.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use agent_astgrep::{AstGrepConfig, attach};
use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::Path;

fn registry(root: &Path, config: AstGrepConfig) -> Registry {
    let registry = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    attach(&registry, config);
    registry
}

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

async fn stage(registry: &Registry) -> String {
    let out = registry
        .call(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "dart"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    out.structured.unwrap()["edit_id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn resolve(registry: &Registry, id: &str, action: &str) -> ToolOutput {
    registry
        .call(
            "resolve",
            json!({"edit_id": id, "operation": action}),
            Surface::Full,
        )
        .await
}

const A: &str = "void f() {\n  dispose(a);\n}\n";
const B: &str = "void g() {\n  dispose(b);\n}\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lib/a.dart", A);
    write(dir.path(), "lib/b.dart", B);
    dir
}

#[tokio::test]
async fn accept_writes_every_file_and_reports_changed_files() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let id = stage(&reg).await;
    assert_eq!(id, "edit_1");
    // Staging wrote nothing.
    assert_eq!(read(dir.path(), "lib/a.dart"), A);
    let out = resolve(&reg, &id, "accept").await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @"accepted edit_1: wrote 2 replacements in 2 files: lib/a.dart, lib/b.dart");
    assert_eq!(
        out.structured.unwrap()["changed_files"],
        json!(["lib/a.dart", "lib/b.dart"])
    );
    assert_eq!(
        read(dir.path(), "lib/a.dart"),
        "void f() {\n  a.dispose();\n}\n"
    );
    assert_eq!(
        read(dir.path(), "lib/b.dart"),
        "void g() {\n  b.dispose();\n}\n"
    );

    let again = resolve(&reg, &id, "accept").await;
    assert!(again.is_error);
    insta::assert_snapshot!(again.text, @"`edit_id` `edit_1` was already accepted; stage a new change with ast_edit");
}

#[tokio::test]
async fn stale_file_rejects_the_whole_change_and_writes_nothing() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let id = stage(&reg).await;
    let changed = "void g() {\n  dispose(b);\n  // edited by someone else\n}\n";
    write(dir.path(), "lib/b.dart", changed);
    let out = resolve(&reg, &id, "accept").await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"rejected `edit_1`: `lib/b.dart` changed since the edit was staged; nothing was written. The edit stays staged: discard it and call ast_edit again to stage a fresh change");
    assert_eq!(read(dir.path(), "lib/a.dart"), A);
    assert_eq!(read(dir.path(), "lib/b.dart"), changed);
    // Still staged: it can be discarded.
    let out = resolve(&reg, &id, "discard").await;
    assert!(!out.is_error, "{}", out.text);
}

#[tokio::test]
async fn failed_write_rolls_back_the_files_already_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let id = stage(&reg).await;
    // b is written after a (files are staged in path order); make it read-only.
    let b = dir.path().join("lib/b.dart");
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = resolve(&reg, &id, "accept").await;
    assert!(out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @"could not apply `edit_1`: could not write `lib/b.dart`: file is read-only; every file was restored to its previous content. The edit stays staged: fix the cause and accept again, or discard it");
    assert_eq!(read(dir.path(), "lib/a.dart"), A);
    assert_eq!(read(dir.path(), "lib/b.dart"), B);

    // Fix the cause and accept again: now it goes through.
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = resolve(&reg, &id, "accept").await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        read(dir.path(), "lib/b.dart"),
        "void g() {\n  b.dispose();\n}\n"
    );
    assert_eq!(
        std::fs::metadata(&b).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[tokio::test]
async fn discard_writes_nothing_and_resolves_the_id() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let id = stage(&reg).await;
    let out = resolve(&reg, &id, "discard").await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @"discarded edit_1: nothing was written (2 files were staged)");
    assert_eq!(read(dir.path(), "lib/a.dart"), A);
    assert_eq!(read(dir.path(), "lib/b.dart"), B);
    let again = resolve(&reg, &id, "accept").await;
    assert!(again.is_error);
    insta::assert_snapshot!(again.text, @"`edit_id` `edit_1` was already discarded; stage a new change with ast_edit");
}

#[tokio::test]
async fn unknown_ids_name_what_is_staged() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = resolve(&reg, "edit_1", "accept").await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"unknown `edit_id` `edit_1`; no edit is staged in this conversation; call ast_edit first");
    let id = stage(&reg).await;
    let id2 = stage(&reg).await;
    assert_eq!((id.as_str(), id2.as_str()), ("edit_1", "edit_2"));
    let out = resolve(&reg, "edit_9", "accept").await;
    insta::assert_snapshot!(out.text, @"unknown `edit_id` `edit_9`; staged edits: edit_1, edit_2");
    let out = resolve(&reg, "bogus", "accept").await;
    assert!(out.is_error);
    let out = reg
        .call(
            "resolve",
            json!({"edit_id": "edit_1", "action": "apply"}),
            Surface::Full,
        )
        .await;
    assert!(out.is_error);
    assert!(out.text.contains("action"), "{}", out.text);
}

#[tokio::test]
async fn staged_edits_belong_to_their_run() {
    let dir = workspace();
    let first = registry(dir.path(), AstGrepConfig::default());
    let id = stage(&first).await;
    let second = registry(dir.path(), AstGrepConfig::default());
    let out = resolve(&second, &id, "accept").await;
    assert!(out.is_error);
    assert!(
        out.text.contains("no edit is staged in this conversation"),
        "{}",
        out.text
    );
    assert_eq!(read(dir.path(), "lib/a.dart"), A);
}

#[tokio::test]
async fn binary_and_large_files_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "print(1)\n");
    std::fs::write(dir.path().join("b.py"), b"print(2)\0\x01\x02").unwrap();
    std::fs::write(dir.path().join("c.py"), b"print(\xff\xfe)\n").unwrap();
    write(
        dir.path(),
        "d.py",
        &format!("print(3)\n{}", "x = 1\n".repeat(100)),
    );
    let reg = registry(
        dir.path(),
        AstGrepConfig {
            max_file_bytes: 100,
            ..Default::default()
        },
    );
    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "print($X)", "language": "python"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @r"
    1 match in 1 file for `print($X)` (python by argument, parsed as statement → call)

    a.py:1:1
      1 | print(1)
      $X = 1

    searched 4 python files; skipped 1 binary, 1 not UTF-8, 1 larger than 100 bytes (b.py, c.py, d.py)
    ");
    let stats = &out.structured.unwrap()["stats"];
    assert_eq!(stats["skipped_binary"], json!(1));
    assert_eq!(stats["skipped_not_utf8"], json!(1));
    assert_eq!(
        stats["skipped_files"][2],
        json!({"path": "d.py", "why": "too large"})
    );
    assert_eq!(stats["skipped_large"], json!(1));
}

#[tokio::test]
async fn structured_result_carries_every_shown_match() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "z.py", "print(1)\n");
    write(dir.path(), "a.py", "x = 1\nprint( 2 ,)\nprint(3)\n");
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "print($X)", "language": "py", "max_results": 2}),
            Surface::Full,
        )
        .await;
    let s = out.structured.unwrap();
    insta::assert_json_snapshot!(s, @r#"
    {
      "context": "statement",
      "files_matched": 2,
      "language": "python",
      "matches": [
        {
          "captures": {
            "X": "2"
          },
          "column": 1,
          "end_column": 12,
          "end_line": 2,
          "file": "a.py",
          "line": 2,
          "lines": [
            "print( 2 ,)"
          ],
          "more_lines": 0
        },
        {
          "captures": {
            "X": "3"
          },
          "column": 1,
          "end_column": 9,
          "end_line": 3,
          "file": "a.py",
          "line": 3,
          "lines": [
            "print(3)"
          ],
          "more_lines": 0
        }
      ],
      "more": 1,
      "shown": 2,
      "stats": {
        "files_prefiltered": 0,
        "files_searched": 2,
        "skipped_binary": 0,
        "skipped_files": [],
        "skipped_large": 0,
        "skipped_not_utf8": 0,
        "skipped_unparseable": 0,
        "skipped_unreadable": 0,
        "stopped_early": false
      },
      "total": 3,
      "understood": [
        {
          "context": "statement",
          "language": "python",
          "language_from": "argument",
          "node_kind": "call"
        }
      ]
    }
    "#);
}

#[test]
fn tiers_surfaces_and_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let full: Vec<(String, String, bool)> = reg
        .list(Surface::Full)
        .into_iter()
        .map(|t| (t.name, t.tier.to_string(), t.parallel_safe))
        .collect();
    assert_eq!(
        full,
        vec![
            ("ast_edit".to_string(), "write".to_string(), false),
            ("ast_grep".to_string(), "read".to_string(), true),
            ("resolve".to_string(), "write".to_string(), false),
        ]
    );
    let plan: Vec<String> = reg
        .list(Surface::Plan)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(plan, vec!["ast_grep".to_string()]);
    let schemas: Value = reg
        .list(Surface::Full)
        .into_iter()
        .map(|t| {
            (
                t.name,
                json!({"description": t.description, "input_schema": t.input_schema}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    insta::assert_json_snapshot!("tool_schemas", schemas);
}

#[tokio::test]
async fn hidden_files_are_searched_but_never_the_git_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    image: rust\n",
    );
    write(dir.path(), ".git/config.yml", "image: nope\n");
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "image: $I", "language": "yaml"}),
            Surface::Full,
        )
        .await;
    insta::assert_snapshot!(out.text, @r"
    1 match in 1 file for `image: $I` (yaml by argument, parsed as document → block_mapping_pair)

    .github/workflows/ci.yml:3:5
      3 |     image: rust
      $I = rust

    searched 1 yaml file
    ");
}

#[tokio::test]
async fn the_time_limit_stops_the_walk_and_says_so() {
    let dir = workspace();
    let reg = registry(
        dir.path(),
        AstGrepConfig {
            time_limit_secs: 0,
            ..Default::default()
        },
    );
    let out = reg
        .call(
            "ast_grep",
            json!({"pattern": "dispose($X)", "language": "dart"}),
            Surface::Full,
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.ends_with(
            "stopped early at the time limit of 0 s: the results are partial; narrow `path`"
        ),
        "{}",
        out.text
    );
    assert_eq!(
        out.structured.unwrap()["stats"]["stopped_early"],
        json!(true)
    );
    let out = reg
        .call(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "dart"}),
            Surface::Full,
        )
        .await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"ast_edit stopped at the time limit of 0 s after 0 files; nothing was staged. Narrow `path` and try again");
    let out = resolve(&reg, "edit_1", "accept").await;
    assert!(out.text.contains("no edit is staged"), "{}", out.text);
}

#[tokio::test]
async fn the_proposal_diff_is_bounded_and_searches_run_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        write(
            dir.path(),
            &format!("lib/f{i}.dart"),
            "void f() {\n  dispose(a);\n  dispose(b);\n}\n",
        );
    }
    let reg = registry(
        dir.path(),
        AstGrepConfig {
            max_diff_lines: 8,
            ..Default::default()
        },
    );
    let search = json!({"pattern": "dispose($X)", "language": "dart"});
    let (one, two) = tokio::join!(
        reg.call("ast_grep", search.clone(), Surface::Plan),
        reg.call("ast_grep", search, Surface::ReadOnly)
    );
    assert_eq!(one.text, two.text);
    assert!(one.text.starts_with("6 matches in 3 files"), "{}", one.text);
    let out = reg
        .call(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "dart"}),
            Surface::Full,
        )
        .await;
    insta::assert_snapshot!(out.text, @r#"
    (proposed) 6 replacements in 3 files … call resolve with edit_id "edit_1" (operation "accept" writes them all, "discard" drops them); nothing is written yet
    searched 3 dart files

    --- a/lib/f0.dart
    +++ b/lib/f0.dart
    @@ -1,4 +1,4 @@
     void f() {
    -  dispose(a);
    -  dispose(b);
    +  a.dispose();
    +  b.dispose();
    … diff truncated: 19 more lines (accepting applies all of it)
    "#);
}

/// `ast_edit` over a directory without `language`: the one language present whose grammar
/// accepts the pattern is used; several are a refusal naming them (a rewrite never guesses).
#[tokio::test]
async fn ast_edit_without_language_uses_the_only_candidate_or_refuses() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "print(1)\n");
    let r = registry(dir.path(), AstGrepConfig::default());
    let args = json!({"pattern": "print($X)", "rewrite": "log($X)"});
    let out = r.call("ast_edit", args.clone(), Surface::Full).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("print(1)") && out.text.contains("log(1)"),
        "{}",
        out.text
    );
    write(dir.path(), "b.js", "print(2)\n");
    let out = r.call("ast_edit", args, Surface::Full).await;
    assert!(out.is_error);
    assert!(
        out.text
            .contains("several languages present here (javascript, python)")
            && out.text.contains("pass `language`"),
        "{}",
        out.text
    );
}
