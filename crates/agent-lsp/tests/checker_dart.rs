//! The project checker (`diagnostics "*"`) for Dart, with a scripted `dart` that prints the real
//! `dart analyze --format=machine` lines (no Dart SDK is reachable here), and the checker's
//! budget: errors first, at most 10 per file and 30 in all, with the count left out.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dart_analyze_findings_are_reported_and_budgeted() {
    let fx = fixture("", config("dart", "dart"));
    std::fs::write(fx.root.join("pubspec.yaml"), "name: app\n").unwrap();
    std::fs::create_dir_all(fx.root.join("lib")).unwrap();
    let mut machine = String::new();
    for f in 0..4 {
        let file = fx.root.join(format!("lib/f{f}.dart"));
        std::fs::write(&file, "void main() {\n".repeat(12)).unwrap();
        for l in 1..=10 {
            machine.push_str(&format!(
                "ERROR|COMPILE_TIME_ERROR|UNDEFINED_IDENTIFIER|{}|{l}|3|1|Undefined name 'x{l}'.\n",
                file.display()
            ));
        }
        machine.push_str(&format!(
            "WARNING|STATIC_WARNING|DEAD_CODE|{}|11|1|1|Dead code \\| here.\n",
            file.display()
        ));
    }
    // The project's own `dart` (as `"*"` is an exec call, project binaries are its to use).
    let bin = fx.root.join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("dart");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat >&2 <<'EOF'\n{machine}EOF\nexit 3\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = fx
        .lsp(json!({"operation": "diagnostics", "file": "*"}))
        .await;
    let text = fx.red(&out.text);
    assert!(!out.is_error, "{text}");
    assert!(
        text.contains("dart analyze in . (ran in ") && text.contains("40 error(s), 4 warning(s)"),
        "{text}"
    );
    let shown: Vec<&str> = text.lines().filter(|l| l.starts_with("lib/f")).collect();
    assert_eq!(shown.len(), 30, "{text}");
    assert!(
        shown
            .iter()
            .all(|l| l.contains(": error[undefined_identifier]: ")),
        "{text}"
    );
    assert!(text.contains("(14 more finding(s) not shown"), "{text}");
    let all = &out.structured.unwrap()["checkers"][0]["diagnostics"];
    assert_eq!(all.as_array().unwrap().len(), 44);
    assert!(all.to_string().contains("Dead code | here."));
}
