//! `grep` and `glob` (issue 25): text search and listing on ripgrep's crates, confined to the
//! root like every file tool, with the hostile cases beside the friendly ones — an ignored
//! folder, a hidden one, a symlink leaving the root, a FIFO, a binary file, a CR-only file, a
//! huge line.

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface, ToolOutput};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, SystemTime};

fn registry(root: &Path) -> Registry {
    let r = Registry::new(RunInfo {
        root: root.to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    r
}

async fn call(r: &Registry, tool: &str, args: Value) -> ToolOutput {
    // A FIFO that was opened would block the call for ever: a bounded wait fails the test.
    tokio::time::timeout(Duration::from_secs(60), r.call(tool, args, Surface::Full))
        .await
        .expect("the call returned")
}

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// A tree with a TODO in every kind of place, and the places grep must not go.
fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A git checkout: its .gitignore counts (outside a repository it would not, as for git and
    // ripgrep: tests/search.rs's `a_gitignore_outside_a_repository_...`).
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(root, ".gitignore", "build/\n*.log\n");
    write(
        root,
        "src/app.py",
        "import os\n# TODO: read the config\nx = 1  # todo later\nprint(\"TODO in a string\")\n",
    );
    write(
        root,
        "src/lib.rs",
        "// TODO(rust): remove\nfn f() {}\n/* a TODO in a block */\n",
    );
    write(root, "build/gen.py", "# TODO generated, ignored\n");
    write(root, "debug.log", "TODO ignored by pattern\n");
    write(root, ".hidden/notes.py", "# TODO hidden\n");
    write(root, "blob.bin", b"TODO\0\x01\x02");
    write(root, "esc.txt", "TODO \x1b[2J cleared\n");
    write(outside.path(), "secret.py", "# TODO outside the root\n");
    std::os::unix::fs::symlink(outside.path().join("secret.py"), root.join("leak.py")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("leakdir")).unwrap();
    mkfifo(&root.join("pipe.py"));
    (dir, outside)
}

#[tokio::test]
async fn grep_finds_a_todo_in_comments_and_skips_ignored_hidden_binary_links_and_fifos() {
    let (dir, _outside) = tree();
    let r = registry(dir.path());
    let out = call(&r, "grep", json!({"pattern": "TODO"})).await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("grep_todo_tree", out.text);
    for absent in [
        "build/",
        "debug.log",
        ".hidden",
        "blob.bin",
        "leak",
        "secret",
        "pipe.py",
    ] {
        assert!(
            !out.text.contains(&format!("{absent}:")),
            "{absent}: {}",
            out.text
        );
    }
    let s = out.structured.unwrap();
    assert_eq!(s["matches"], json!(5), "{s}");
    assert_eq!(s["binary"], json!(1), "{s}");

    // Case-insensitive, one glob, a line of context.
    let out = call(
        &r,
        "grep",
        json!({"pattern": "todo", "ignore_case": true, "glob": "*.py", "context": 1}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("grep_todo_py_context", out.text);

    // A hidden folder is searched when the glob names it; an ignored file when `path` does.
    let out = call(
        &r,
        "grep",
        json!({"pattern": "TODO", "glob": ".hidden/*.py"}),
    )
    .await;
    assert!(
        out.text.starts_with(".hidden/notes.py:1: # TODO hidden\n"),
        "{}",
        out.text
    );
    let out = call(
        &r,
        "grep",
        json!({"pattern": "TODO", "path": "build/gen.py"}),
    )
    .await;
    assert!(out.text.starts_with("build/gen.py:1: "), "{}", out.text);

    // Literal text with regex characters; and the cap with its counts.
    let out = call(
        &r,
        "grep",
        json!({"pattern": "TODO(rust)", "literal": true}),
    )
    .await;
    assert!(
        out.text.starts_with("src/lib.rs:1: // TODO(rust)"),
        "{}",
        out.text
    );
    let out = call(&r, "grep", json!({"pattern": "TODO", "limit": 2})).await;
    insta::assert_snapshot!("grep_capped", out.text);

    // Nothing found is an answer, not an error, and says what was not searched.
    let out = call(&r, "grep", json!({"pattern": "FIXME"})).await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("grep_no_match", out.text);
}

#[tokio::test]
async fn grep_refuses_paths_that_leave_the_root_or_are_not_files() {
    let (dir, outside) = tree();
    let r = registry(dir.path());
    let root = dir.path().canonicalize().unwrap();
    let redact = |t: &str| {
        t.replace(&root.display().to_string(), "[root]")
            .replace(&outside.path().display().to_string(), "[outside]")
    };
    let mut shown = Vec::new();
    for args in [
        json!({"pattern": "TODO", "path": "leak.py"}),
        json!({"pattern": "TODO", "path": "leakdir"}),
        json!({"pattern": "TODO", "path": "../"}),
        json!({"pattern": "TODO", "path": "pipe.py"}),
        json!({"pattern": "TODO", "glob": "../*.py"}),
        json!({"pattern": "TODO", "glob": "src/[a.py"}),
        json!({"pattern": "fn f(", "path": "src"}),
        json!({"pattern": "a\\nb"}),
    ] {
        let out = call(&r, "grep", args.clone()).await;
        assert!(out.is_error, "{args}: {}", out.text);
        shown.push(format!("{args}\n{}\n", redact(&out.text)));
    }
    insta::assert_snapshot!("grep_refusals", shown.join("\n"));
}

/// Lines are numbered as `read` numbers them: a lone `\r` ends a line (ripgrep alone would see
/// one line in a CR-only file), and every match's line N reads the same text in `read`.
#[tokio::test]
async fn grep_numbers_cr_only_and_mixed_lines_as_read_does() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cr.txt",
        "one\rTODO two\rthree\r\rTODO five\rsix",
    );
    write(
        dir.path(),
        "mixed.txt",
        "a\nTODO b\r\nc\rTODO d\r\n\rTODO f\nTODO g",
    );
    let r = registry(dir.path());
    let out = call(&r, "grep", json!({"pattern": "TODO"})).await;
    insta::assert_snapshot!("grep_line_endings", out.text);
    let mut checked = 0;
    for line in out.text.lines().filter(|l| !l.starts_with('[')) {
        let (path, rest) = line.split_once(':').unwrap();
        let (n, text) = rest.split_once(": ").unwrap();
        let read = call(
            &r,
            "read",
            json!({"path": path, "offset": n.parse::<u64>().unwrap(), "limit": 1}),
        )
        .await;
        assert!(
            read.text.starts_with(&format!("{n}| {text}\n")),
            "{line} vs read: {}",
            read.text
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
    // `^` and `$` know a lone `\r` too, and context lines are counted the same way.
    let out = call(
        &r,
        "grep",
        json!({"pattern": "^TODO \\w$", "path": "mixed.txt", "context": 1}),
    )
    .await;
    insta::assert_snapshot!("grep_line_endings_anchored_context", out.text);
}

/// A 3 MB line is shown around its match, cut; the search of a file is bounded.
#[tokio::test]
async fn grep_shows_a_huge_line_around_its_match() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("{}TODO here{}", "x".repeat(2 << 20), "y".repeat(1 << 20));
    write(dir.path(), "min.js", format!("first\n{line}\nlast TODO\n"));
    let r = registry(dir.path());
    let out = call(&r, "grep", json!({"pattern": "TODO"})).await;
    assert!(out.text.len() < 2_000, "{} bytes", out.text.len());
    insta::assert_snapshot!("grep_huge_line", out.text);
}

/// Files under `src`, each given a modification time: the newest is listed first.
#[tokio::test]
async fn glob_lists_by_pattern_newest_first_or_by_path_and_caps() {
    let (dir, _outside) = tree();
    let root = dir.path();
    let files = [
        "src/main.rs",
        "src/a/deep/mod.rs",
        "src/b.rs",
        "src/a/x.txt",
        "build/gen.rs",
        "top.rs",
    ];
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (i, f) in files.iter().enumerate() {
        write(root, f, "fn x() {}\n");
        let file = std::fs::File::options()
            .write(true)
            .open(root.join(f))
            .unwrap();
        file.set_modified(t0 + Duration::from_secs(100 * (i as u64 + 1)))
            .unwrap();
    }
    let r = registry(root);
    let out = call(&r, "glob", json!({"pattern": "src/**/*.rs"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(
        out.text,
        "src/lib.rs\nsrc/b.rs\nsrc/a/deep/mod.rs\nsrc/main.rs\n[4 file(s), newest first]"
    );
    let out = call(
        &r,
        "glob",
        json!({"pattern": "src/**/*.rs", "sort": "path"}),
    )
    .await;
    assert_eq!(
        out.text,
        "src/a/deep/mod.rs\nsrc/b.rs\nsrc/lib.rs\nsrc/main.rs\n[4 file(s), by path]"
    );
    let out = call(&r, "glob", json!({"pattern": "*.rs", "limit": 2})).await;
    insta::assert_snapshot!("glob_capped", out.text);
    // Relative to `path`, which the pattern may repeat.
    let out = call(
        &r,
        "glob",
        json!({"pattern": "a/**", "path": "src", "sort": "path"}),
    )
    .await;
    assert_eq!(
        out.text,
        "src/a/deep/mod.rs\nsrc/a/x.txt\n[2 file(s), by path]"
    );
    let out = call(
        &r,
        "glob",
        json!({"pattern": "src/*.rs", "path": "src", "sort": "path"}),
    )
    .await;
    assert_eq!(
        out.text,
        "src/b.rs\nsrc/lib.rs\nsrc/main.rs\n[3 file(s), by path]"
    );
    // Nothing matches; a pattern that leaves the folder; a path that is a file.
    let mut shown = Vec::new();
    for args in [
        json!({"pattern": "**/*.zig"}),
        json!({"pattern": "nowhere/**/*.rs"}),
        json!({"pattern": "../*"}),
        json!({"pattern": "*.rs", "path": "top.rs"}),
        json!({"pattern": "*.rs", "path": "leakdir"}),
        json!({"pattern": "*.rs", "sort": "size"}),
    ] {
        let out = call(&r, "glob", args.clone()).await;
        shown.push(format!("{args} → error: {}\n{}\n", out.is_error, out.text));
    }
    let text = shown.join("\n").replace(
        &root.canonicalize().unwrap().display().to_string(),
        "[root]",
    );
    insta::assert_snapshot!("glob_refusals", text);
}

/// A 10 GiB sparse file (text, then a hole): searched in its first 64 MiB only, and the result
/// says so; the call neither reads the hole to its end nor holds more than the cap.
#[tokio::test]
async fn grep_searches_a_huge_file_in_its_first_64_mib_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
    let path = dir.path().join("sparse.log");
    std::fs::write(&path, &text).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let r = registry(dir.path());
    let out = call(
        &r,
        "grep",
        json!({"pattern": "^line 1999$", "path": "sparse.log"}),
    )
    .await;
    assert_eq!(
        out.text,
        "sparse.log:1999: line 1999\n[1 matching line(s) in 1 file(s); 1 file(s) searched; 1 file(s) over 64 MiB searched in their first 64 MiB only]"
    );
}

/// Issue 44: at the root of Debian's unpacked `linux-source` (a `.gitignore` of `/*` and
/// `!/debian/`, no repository) grep and glob searched 0 files and answered "no match". As git
/// and ripgrep: a `.gitignore` counts only inside a repository, so the C files are searched;
/// `.ignore` counts everywhere, and a search that found nothing says how many files the ignore
/// rules left out.
#[tokio::test]
async fn a_gitignore_outside_a_repository_hides_nothing_and_what_ignore_files_hid_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "/*\n!/debian/\n");
    write(root, "drivers/net/a.c", "void f(void *x) { kfree(x); }\n");
    write(root, "debian/rules", "all:\n");
    let r = registry(root);
    let out = call(&r, "grep", json!({"pattern": "kfree"})).await;
    assert!(out.text.contains("drivers/net/a.c:1:"), "{}", out.text);
    let out = call(&r, "glob", json!({"pattern": "**/*.c"})).await;
    assert!(out.text.contains("drivers/net/a.c"), "{}", out.text);
    // An .ignore counts without a repository, and an empty answer says what it hid.
    write(root, ".ignore", "drivers/\n");
    let out = call(&r, "grep", json!({"pattern": "kfree"})).await;
    assert!(
        out.text.contains("no match")
            && out
                .text
                .contains("1 file(s) here were left out by ignore rules"),
        "{}",
        out.text
    );
    let out = call(&r, "glob", json!({"pattern": "**/*.c"})).await;
    assert!(
        out.text
            .contains("1 file(s) here were left out by ignore rules"),
        "{}",
        out.text
    );
}

/// Issue 44: the parallel count is ripgrep's count. On Django's sdist (no repository, so no
/// `.gitignore` applies for either), three patterns, over the whole tree and one folder: the
/// number of matching lines and of files with a match equal `rg -c`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_counts_equal_ripgreps_on_a_real_tree() {
    let rg = agent_testkit::require("rg");
    let django = agent_testkit::django();
    let r = registry(&django);
    for (pattern, literal, path) in [
        ("def ", true, "."),
        ("self\\.[a-z_]+\\(", false, "."),
        ("import", true, "django/db"),
    ] {
        let mut cmd = std::process::Command::new(&rg);
        cmd.arg("-c").current_dir(&django);
        if literal {
            cmd.arg("--fixed-strings");
        }
        let out = cmd.args(["--", pattern, path]).output().unwrap();
        let per_file: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.rsplit(':').next()?.parse().ok())
            .collect();
        let found = call(
            &r,
            "grep",
            json!({"pattern": pattern, "literal": literal, "path": path, "limit": 1}),
        )
        .await;
        assert!(!found.is_error, "{}", found.text);
        let s = found.structured.unwrap();
        assert_eq!(
            (s["matches"].as_u64().unwrap(), s["files"].as_u64().unwrap()),
            (per_file.iter().sum::<u64>(), per_file.len() as u64),
            "`{pattern}` in {path}"
        );
        assert!(
            per_file.len() > 10,
            "`{pattern}`: a pattern that finds little proves little"
        );
    }
}

/// Many files over many folders, named so that comparing paths as strings and walking folder by
/// folder disagree (`a.c` sorts before `a/b` as a string, after it as a walk): grep's threads
/// each walk and read the files they find, in no set order, but the files it shows come in the
/// order glob lists them by path, run after run, and with a limit the first ones of that order
/// are shown.
#[tokio::test]
async fn grep_shows_files_in_walk_order_whatever_thread_found_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut names = Vec::new();
    for top in ["a", "a.c", "a-b", "ab", "A", "a0", "z", "m.d"] {
        names.push(format!("{top}.txt"));
        for sub in ["b", "b.c", "b-d", "B", "b0"] {
            for leaf in ["x.txt", "x.c.txt", "x-y.txt", "X.txt", "x0.txt"] {
                names.push(format!("{top}/{sub}/{leaf}"));
            }
        }
    }
    for n in &names {
        write(root, n, format!("needle in {n}\n"));
    }
    let r = registry(root);
    let listed = call(
        &r,
        "glob",
        json!({"pattern": "**/*.txt", "sort": "path", "limit": 1000}),
    )
    .await;
    assert!(!listed.is_error, "{}", listed.text);
    let by_path: Vec<&str> = listed
        .text
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect();
    assert_eq!(by_path.len(), names.len(), "{}", listed.text);
    // A string sort would put `a.c` before `a/…`; the walk does not.
    let pos = |p: &str| by_path.iter().position(|l| *l == p).unwrap();
    assert!(pos("a/b/x.txt") < pos("a.c.txt"), "{}", listed.text);
    for _ in 0..5 {
        let out = call(&r, "grep", json!({"pattern": "needle", "limit": 1000})).await;
        assert!(!out.is_error, "{}", out.text);
        let shown: Vec<&str> = out
            .text
            .lines()
            .filter_map(|l| l.split_once(":1: ").map(|(p, _)| p))
            .collect();
        assert_eq!(shown, by_path);
    }
    let out = call(&r, "grep", json!({"pattern": "needle", "limit": 3})).await;
    let shown: Vec<&str> = out
        .text
        .lines()
        .filter_map(|l| l.split_once(":1: ").map(|(p, _)| p))
        .collect();
    assert_eq!(shown, by_path[..3], "{}", out.text);
    let n = names.len();
    assert_eq!(
        out.text.lines().last().unwrap(),
        format!(
            "[3 of {n} matching lines shown, in {n} file(s); {n} file(s) searched; narrow `path` or `glob`, or raise `limit`]"
        )
    );
}
