//! Issue 14: every result says how the pattern was understood and what was searched, ruled out
//! and skipped; `ast_edit` refuses metavariables that cannot bind; large files; the parse cache.

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

fn write(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn redact(text: &str, root: &Path) -> String {
    let canon = root.canonicalize().unwrap();
    text.replace(&canon.display().to_string(), "[ROOT]")
        .replace(&root.display().to_string(), "[ROOT]")
}

async fn call(reg: &Registry, tool: &str, args: Value) -> ToolOutput {
    reg.call(tool, args, Surface::Full).await
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/app.py",
        b"def main():\n    print(helper(1))\n",
    );
    write(dir.path(), "src/other.py", b"x = 1\n");
    write(dir.path(), "src/blob.py", b"helper\0\x01\x02");
    write(dir.path(), "src/latin.py", b"helper(\xff, 1)\n");
    dir
}

#[tokio::test]
async fn a_result_with_no_matches_explains_itself() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(&reg, "ast_grep", json!({"pattern": "helper($A, $B)"})).await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(redact(&out.text, dir.path()), @r"
    no matches for `helper($A, $B)` (python by directory scan, parsed as statement → call)

    searched 4 python files (2 ruled out without parsing: they lack a word or an operator of the pattern); skipped 1 binary, 1 not UTF-8 (src/blob.py, src/latin.py)
    ");
    let s = out.structured.unwrap();
    insta::assert_json_snapshot!(json!({"understood": s["understood"], "stats": s["stats"]}), @r#"
    {
      "stats": {
        "files_prefiltered": 2,
        "files_searched": 4,
        "skipped_binary": 1,
        "skipped_files": [
          {
            "path": "src/blob.py",
            "why": "binary"
          },
          {
            "path": "src/latin.py",
            "why": "not UTF-8"
          }
        ],
        "skipped_large": 0,
        "skipped_not_utf8": 1,
        "skipped_unparseable": 0,
        "skipped_unreadable": 0,
        "stopped_early": false
      },
      "understood": [
        {
          "context": "statement",
          "language": "python",
          "language_from": "directory scan",
          "node_kind": "call"
        }
      ]
    }
    "#);
}

#[tokio::test]
async fn a_result_with_matches_explains_itself() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "helper($A)", "path": "src/app.py"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(redact(&out.text, dir.path()), @r"
    1 match in 1 file for `helper($A)` (python by extension, parsed as statement → call)

    src/app.py:2:11
      2 |     print(helper(1))
      $A = 1

    searched 1 python file
    ");
}

#[tokio::test]
async fn ast_edit_refuses_a_rewrite_variable_the_pattern_does_not_bind() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(
        &reg,
        "ast_edit",
        json!({"pattern": "helper($A)", "rewrite": "helper($A, $B)", "path": "src/app.py"}),
    )
    .await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"`rewrite` uses `$B`, which the pattern does not bind; the pattern binds: $A");
}

#[tokio::test]
async fn ast_edit_refuses_a_metavariable_the_grammar_swallowed() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(
        &reg,
        "ast_edit",
        json!({"pattern": "helper($A$B)", "rewrite": "helper($A)", "path": "src/app.py"}),
    )
    .await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"`pattern` names $A, $B, but the grammar read them as part of other code (a token, identifier or string), so they would never bind; the pattern binds: none. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)");
    let out = call(
        &reg,
        "ast_edit",
        json!({"pattern": "print(helper($A), x$B)", "rewrite": "print($A)", "path": "src/app.py"}),
    )
    .await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text, @"`pattern` names $B, but the grammar read it as part of other code (a token, identifier or string), so it would never bind; the pattern binds: $A. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)");
    // `$_` and `$$$` bind nothing by design, and a repeated metavariable is fine.
    let out = call(
        &reg,
        "ast_edit",
        json!({"pattern": "print($_, $$$)", "rewrite": "print()", "path": "src/app.py"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
}

#[tokio::test]
async fn a_search_with_no_matches_names_the_metavariables_the_grammar_swallowed() {
    let dir = workspace();
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "helper($A$B)", "path": "src/app.py"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @r"
    no matches for `helper($A$B)` (python by extension, parsed as statement → call)

    searched 1 python file
    note: $A, $B were not parsed as metavariables: the python grammar read them as part of other code (a token, identifier or string), so the pattern cannot bind them and matches that text only literally. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)
    ");
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "print(helper($A), x$B)", "path": "src/app.py"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @r"
    no matches for `print(helper($A), x$B)` (python by extension, parsed as statement → call)

    searched 1 python file (1 ruled out without parsing: they lack a word or an operator of the pattern)
    note: $B was not parsed as a metavariable: the python grammar read it as part of other code (a token, identifier or string), so the pattern cannot bind it and matches that text only literally. Put each metavariable where a whole node goes (`foo($A, $B)`, not `foo($A$B)`)
    ");
    // Every metavariable bound, or a match: no such note.
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "helper($A, $B)", "path": "src/app.py"}),
    )
    .await;
    assert!(!out.text.contains("not parsed as"), "{}", out.text);
}

#[tokio::test]
async fn files_up_to_the_limit_are_searched_and_one_just_over_it_is_named() {
    assert_eq!(AstGrepConfig::default().max_file_bytes, 64 * 1024 * 1024);
    let dir = tempfile::tempdir().unwrap();
    let body = |n: usize| {
        let mut s = "helper(1)\n".to_string();
        s.push_str(&"#".repeat(n - s.len() - 1));
        s.push('\n');
        s
    };
    write(dir.path(), "at_limit.py", body(1000).as_bytes());
    write(dir.path(), "over_limit.py", body(1001).as_bytes());
    let reg = registry(
        dir.path(),
        AstGrepConfig {
            max_file_bytes: 1000,
            ..Default::default()
        },
    );
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "helper($A)", "language": "python"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!(out.text, @r"
    1 match in 1 file for `helper($A)` (python by argument, parsed as statement → call)

    at_limit.py:1:1
      1 | helper(1)
      $A = 1

    searched 2 python files; skipped 1 larger than 1000 bytes (over_limit.py)
    ");
    let stats = &out.structured.unwrap()["stats"];
    assert_eq!(stats["skipped_large"], json!(1));
    assert_eq!(
        stats["skipped_files"],
        json!([{"path": "over_limit.py", "why": "too large"}])
    );
}

#[tokio::test]
async fn a_second_search_of_the_run_is_identical_and_never_stale() {
    let dir = workspace();
    let app = dir.path().join("src/app.py");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let set_mtime = |when| {
        let f = std::fs::File::options().write(true).open(&app).unwrap();
        f.set_modified(when).unwrap();
    };
    set_mtime(old);
    // The memo never takes a file changed (by its ctime) in the last two seconds.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let reg = registry(dir.path(), AstGrepConfig::default());
    let args = json!({"pattern": "helper($A)", "language": "python"});
    let first = call(&reg, "ast_grep", args.clone()).await;
    let second = call(&reg, "ast_grep", args.clone()).await;
    // The same answer; the second says which file the run's memo answered (app.py: the others
    // are ruled out or skipped).
    let remembered = "; 1 answered as this run's earlier search of the same pattern found them \
                      (unchanged since: size, mtime and ctime)";
    assert!(second.text.contains(remembered), "{}", second.text);
    assert_eq!(first.text, second.text.replace(remembered, ""));
    let (mut a, mut b) = (first.structured.unwrap(), second.structured.unwrap());
    assert_eq!(b["stats"]["files_remembered"], json!(1));
    b["stats"]
        .as_object_mut()
        .unwrap()
        .remove("files_remembered");
    a["stats"]
        .as_object_mut()
        .unwrap()
        .remove("files_remembered");
    assert_eq!(a, b);
    // Rewritten behind the run's back with the same size and the mtime put back, as `cp -p`
    // or `rsync -t` leave a file: the answer is the new content's, not the memo's.
    std::fs::write(&app, b"def main():\n    print(helper(2))\n").unwrap();
    set_mtime(old);
    assert_eq!(std::fs::metadata(&app).unwrap().modified().unwrap(), old);
    let third = call(&reg, "ast_grep", args).await;
    assert!(third.text.contains("$A = 2"), "{}", third.text);
    assert!(!third.text.contains("$A = 1"), "{}", third.text);
    assert!(!third.text.contains("answered as"), "{}", third.text);
}

/// A keyword of a grammar whose keywords are whole words admits a file only where no word byte
/// follows it: `raised`, `raises` and `raise_all` rule a file out unparsed; a `raise` before a
/// tab or at the end of the file does not.
#[tokio::test]
async fn a_keyword_inside_a_longer_word_rules_a_file_out() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "words.py",
        b"# it raised; raises: braise_x\nraised = f(x)\nraise_all(y)\n",
    );
    write(
        dir.path(),
        "call.py",
        b"def f():\n    raise ValueError(1)\n",
    );
    write(dir.path(), "tab.py", b"def h():\n    raise\tE(2)\n");
    write(
        dir.path(),
        "end.py",
        b"def g():\n    try:\n        f(x)\n    except E:\n        raise",
    );
    let reg = registry(dir.path(), AstGrepConfig::default());
    let out = call(
        &reg,
        "ast_grep",
        json!({"pattern": "raise $E($$$ARGS)", "language": "python"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["total"], 2, "{}", out.text);
    assert_eq!(s["stats"]["files_searched"], 4, "{}", out.text);
    assert_eq!(s["stats"]["files_prefiltered"], 1, "{}", out.text);
    let files: Vec<&str> = s["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["call.py", "tab.py"]);
}
