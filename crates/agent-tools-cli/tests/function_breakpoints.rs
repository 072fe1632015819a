//! A function breakpoint on an adapter without function breakpoints (issue 14): `debug` places
//! it on the first line of the function's body, at the one definition the language server
//! reports — across two families of the composed host (agent-dap asks agent-lsp's locator by
//! type, never by a tool's name). Ambiguous and unknown names are not placed, and say why with
//! the candidates. Against the scripted fakes of the Dart adapter and the Dart language server
//! (no Dart SDK is reachable): `crates/agent-dap/tests/fixtures/fake_dart.py` stops at the
//! program file's breakpoints in line order; `crates/agent-lsp/tests/support/fake_dart_lsp.py`
//! answers workspace symbols from the root's `.dart` files.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod common;

use common::Client;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const MAIN: &str = "import 'package:demo/util.dart';

int add(int a, int b) {
  // the sum
  return a + b;
}

void main() {
  var total = add(1, 2);
  print(total);
  total = twice(total);
  print(total);
}
";
const UTIL: &str = "int twice(int n) {\n  return n * 2;\n}\n\nint scale(int n) => n * 3;\n";
const OTHER: &str = "int scale(int n) {\n  return n * 4;\n}\n";

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .canonicalize()
        .unwrap()
}

#[test]
fn function_breakpoints_are_placed_by_the_language_servers_definition() {
    agent_testkit::require("python3");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("pubspec.yaml"), "name: demo\n").unwrap();
    std::fs::write(root.join("bin/main.dart"), MAIN).unwrap();
    std::fs::write(root.join("lib/util.dart"), UTIL).unwrap();
    std::fs::write(root.join("lib/other.dart"), OTHER).unwrap();
    // Hostile: a file in the workspace that is a symlink to one outside it.
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("evil.dart"),
        "int secret() {\n  return 42;\n}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("evil.dart"), root.join("lib/link.dart")).unwrap();
    // The Dart adapter is `dart debug_adapter` found on PATH; the language server is the fake
    // named in the user's lsp config.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        manifest("../agent-dap/tests/fixtures/fake_dart.py"),
        bin.join("dart"),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("dart"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("agent-tools")).unwrap();
    std::fs::write(
        config.join("agent-tools/lsp.json"),
        json!({"servers": {"dart": {"commands": [["python3", manifest("../agent-lsp/tests/support/fake_dart_lsp.py")]]}}})
            .to_string(),
    )
    .unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut c = Client::start_with(
        &root,
        &[],
        &[("XDG_CONFIG_HOME", &config), ("PATH", Path::new(&path))],
    );
    c.rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let call = |c: &mut Client, id: i64, args: Value| {
        let v = c.rpc(
            id,
            "tools/call",
            json!({"name": "debug", "arguments": args}),
        );
        assert_eq!(v["result"]["isError"], false, "{v}");
        v
    };

    // Set before the session: kept, placed when the adapter turns out to have none.
    let pending = call(
        &mut c,
        2,
        json!({"op": "breakpoints", "function": ["add", "main", "twice", "scale", "nosuch", "secret"]}),
    );
    assert!(text(&pending).contains("will be set when the session launches"));
    let launched = call(
        &mut c,
        3,
        json!({"op": "launch", "program": "bin/main.dart"}),
    );
    let t = text(&launched);
    assert!(
        t.contains("the dart adapter has no function breakpoints: placed by the language server's definitions"),
        "{t}"
    );
    assert!(
        t.contains("- function add: verified at bin/main.dart:5 (placed on the first line of its body, definition from dart): `return a + b;`"),
        "{t}"
    );
    assert!(
        t.contains("- function main: verified at bin/main.dart:9 (placed on the first line of its body, definition from dart): `var total = add(1, 2);`"),
        "{t}"
    );
    assert!(
        t.contains("- function twice: verified at lib/util.dart:2 (placed on the first line of its body, definition from dart): `return n * 2;`"),
        "{t}"
    );
    assert!(
        t.contains("- function scale: not verified (`scale` is ambiguous: dart defines 2 (lib/other.dart:1, lib/util.dart:5)"),
        "{t}"
    );
    assert!(
        t.contains("- function nosuch: not verified (dart reports no function `nosuch` in the workspace; check the name"),
        "{t}"
    );
    // The project is not trusted, so its server runs contained (bubblewrap): the symlink's
    // target outside the root is not even visible to it. (Where a server does see it, the
    // locator counts it as outside the root and does not use it.)
    assert!(
        t.contains(
            "- function secret: not verified (dart reports no function `secret` in the workspace"
        ),
        "{t}"
    );
    assert!(
        !t.contains("return 42"),
        "nothing outside the root is quoted: {t}"
    );
    // The adapter stopped at the placed line, inside `add`.
    assert!(t.contains("bin/main.dart:5"), "{t}");
    let rows = &launched["result"]["structuredContent"]["function_breakpoints"];
    assert_eq!(rows[0]["line"], 5, "{rows}");
    assert_eq!(rows[3]["verified"], false, "{rows}");

    // In the live session the set is replaced: `main`'s placed line 9 is taken out of its file
    // (sent again with the file's own lines), so the program runs to its end; `twice` is
    // placed in its own file.
    let live = call(
        &mut c,
        4,
        json!({"op": "breakpoints", "function": ["twice"]}),
    );
    let lt = text(&live);
    assert!(
        lt.contains("function breakpoints (the dart adapter has none: placed by the language server's definitions):\n- function twice: verified at lib/util.dart:2"),
        "{lt}"
    );
    let done = call(&mut c, 5, json!({"op": "continue"}));
    assert!(
        text(&done).contains("exited with code 3"),
        "line 9 was still set: {}",
        text(&done)
    );
    let root_shown = root.display().to_string();
    let bin_shown = bin.display().to_string();
    // Whether the contained server can see the symlink's target depends on where the test's
    // temp folder lies (a folder the sandbox binds back for the fake adapter may hold it): the
    // answer is the same either way (not used, not quoted), only the count differs.
    let redact = |s: String| {
        s.replace(&root_shown, "[root]")
            .replace(&bin_shown, "[bin]")
            .replace(
                " (1 outside the root, in a library or through a symlink, not used)",
                "",
            )
    };
    insta::assert_snapshot!(
        "function_breakpoints_placed",
        redact(format!("== launch ==\n{t}\n== live ==\n{lt}"))
    );
}
