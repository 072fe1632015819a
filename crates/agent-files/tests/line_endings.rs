//! `read` numbers lines as every position-taking tool counts them (`agent_tier::lines`): a line
//! ends at `\n`, `\r\n` or a lone `\r`. Before, a lone `\r` ended no line: a file written with
//! CR endings was one line, and `offset` counted past the lines `lsp`, `debug` and `ast_grep`
//! name (issue 23).

#![allow(clippy::unwrap_used)]

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;

/// Lines 1–5: `one`, `two`, `three`, (empty), `five`.
const CR_ONLY: &str = "one\rtwo\rthree\r\rfive\r";
/// Every ending in one file. Lines 1–6: `a = 1`, `b = 2`, `c = 3`, `d = 4`, (empty), `e = 5`.
const MIXED: &str = "a = 1\nb = 2\r\nc = 3\rd = 4\r\n\re = 5\n";

/// Each call and the text it must return.
const CASES: &[(&str, Option<u64>, Option<u32>, &str)] = &[
    (
        "cr.txt",
        None,
        None,
        "1| one\n2| two\n3| three\n4| \n5| five\n[cr.txt: all 5 line(s)]",
    ),
    (
        "cr.txt",
        Some(3),
        Some(2),
        "3| three\n4| \n[lines 3–4 of cr.txt shown; more follow: continue with `offset` 5]",
    ),
    (
        "cr.txt",
        Some(5),
        None,
        "5| five\n[end of cr.txt: lines 5–5 of 5]",
    ),
    (
        "cr.txt",
        Some(6),
        None,
        "[cr.txt has 5 line(s); `offset` 6 is past its end]",
    ),
    (
        "mixed.txt",
        None,
        None,
        "1| a = 1\n2| b = 2\n3| c = 3\n4| d = 4\n5| \n6| e = 5\n[mixed.txt: all 6 line(s)]",
    ),
    (
        "mixed.txt",
        Some(3),
        Some(2),
        "3| c = 3\n4| d = 4\n[lines 3–4 of mixed.txt shown; more follow: continue with `offset` 5]",
    ),
    (
        "mixed.txt",
        Some(5),
        None,
        "5| \n6| e = 5\n[end of mixed.txt: lines 5–6 of 6]",
    ),
];

#[tokio::test]
async fn read_numbers_lines_ended_by_lf_crlf_and_lone_cr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cr.txt"), CR_ONLY).unwrap();
    std::fs::write(dir.path().join("mixed.txt"), MIXED).unwrap();
    let r = Registry::new(RunInfo {
        root: dir.path().to_path_buf(),
        ..Default::default()
    });
    agent_files::attach(&r);
    let mut failures = Vec::new();
    for (path, offset, limit, want) in CASES {
        let mut args = json!({"path": path});
        if let Some(o) = offset {
            args["offset"] = json!(o);
        }
        if let Some(l) = limit {
            args["limit"] = json!(l);
        }
        let out = r.call("read", args.clone(), Surface::Full).await;
        assert!(!out.is_error, "{args}: {}", out.text);
        if out.text != *want {
            failures.push(format!("{args}:\n  want {want:?}\n  got  {:?}", out.text));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
