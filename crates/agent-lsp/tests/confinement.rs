//! Issue 11 item 3: a file reached through a symlinked directory out of the root is refused as an
//! `lsp` / `lsp_rename` argument (as `read` refuses it), and no answer quotes it: locations in it
//! show no line, a hover about a symbol declared in it is withheld, workspace symbols leave it
//! out, and a rename whose edits reach it changes nothing. Against pyright.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

const SECRET: &str = "s3cr3t-value";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlink_out_of_the_root_is_never_quoted() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.py"),
        format!("TOKEN = \"{SECRET}\"\n\"\"\"hunter2 doc\"\"\"\n\n\ndef leak_me() -> str:\n    return TOKEN\n"),
    )
    .unwrap();
    std::fs::write(outside.path().join("__init__.py"), "").unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.root.join("link")).unwrap();
    std::fs::write(
        fx.root.join("use_secret.py"),
        "from link.secret import TOKEN, leak_me\n\nprint(TOKEN, leak_me())\n",
    )
    .unwrap();

    // As an argument: the same refusal as `read`.
    for (tool, args) in [
        (
            "lsp",
            json!({"operation": "hover", "file": "link/secret.py", "line": 1, "symbol": "TOKEN"}),
        ),
        (
            "lsp",
            json!({"operation": "diagnostics", "file": "link/secret.py"}),
        ),
        (
            "lsp",
            json!({"operation": "symbols", "file": "link/secret.py"}),
        ),
        (
            "lsp_rename",
            json!({"file": "link/secret.py", "line": 1, "symbol": "TOKEN", "new_name": "T"}),
        ),
    ] {
        let out = fx.call(tool, args.clone()).await;
        assert!(out.is_error, "{args}: {}", out.text);
        assert!(
            out.text.contains("is outside the workspace root"),
            "{args}: {}",
            out.text
        );
    }

    // A hover about a symbol declared there is withheld.
    let out = fx
        .lsp(json!({"operation": "hover", "file": "use_secret.py", "line": 3, "symbol": "TOKEN"}))
        .await;
    assert!(!out.text.contains(SECRET), "{}", out.text);
    assert!(!out.text.contains("hunter2"), "{}", out.text);
    assert!(
        out.text
            .contains("withheld: it is declared in `link/secret.py`"),
        "{}",
        out.text
    );
    // A hover about a symbol of the root still answers.
    let out = fx
        .lsp(json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter"}))
        .await;
    assert!(
        !out.is_error && out.text.contains("def make_greeter"),
        "{}",
        out.text
    );

    // A location there shows no line of it.
    let out = fx
        .lsp(json!({"operation": "definition", "file": "use_secret.py", "line": 3, "symbol": "TOKEN"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(!out.text.contains(SECRET), "{}", out.text);
    assert!(
        out.text
            .contains("`link/secret.py` is outside the workspace root through a symlink"),
        "{}",
        out.text
    );
    let out = fx
        .lsp(json!({"operation": "references", "file": "use_secret.py", "line": 3, "symbol": "leak_me"}))
        .await;
    assert!(!out.text.contains("def leak_me"), "{}", out.text);

    // Workspace symbols leave it out.
    let out = fx
        .lsp(json!({"operation": "symbols", "file": "use_secret.py", "query": "leak_me"}))
        .await;
    assert!(!out.text.contains("link/secret.py"), "{}", out.text);

    // A rename whose edits reach it changes nothing.
    let before = fx.read("use_secret.py");
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "use_secret.py", "line": 3, "symbol": "leak_me", "new_name": "renamed"}),
        )
        .await;
    // (pyright refuses at prepareRename; a server that proposed the edits would be refused by
    // the plan's confinement, see the unit test `plan_applies_…`.)
    assert!(out.is_error, "{}", out.text);
    assert_eq!(fx.read("use_secret.py"), before);
    assert!(
        std::fs::read_to_string(outside.path().join("secret.py"))
            .unwrap()
            .contains("def leak_me")
    );
}

/// Issue 23: the `file` argument is read as the file tools read it. Before, a FIFO blocked a
/// runtime thread for good (two calls froze the host: no `ping`, no cancellation) and a
/// character device was read until memory ran out. Now both are refused at once, and a file
/// over the size cap is refused with its size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_devices_and_huge_files_are_refused_not_read() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let fifo = fx.root.join("pipe.py");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // /dev/zero's numbers (1, 5): endless bytes.
    let dev = fx.root.join("zero.py");
    let made = std::process::Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "5"])
        .status()
        .unwrap();
    assert!(made.success(), "mknod needs root (tests run as root here)");
    let huge = fx.root.join("huge.py");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(agent_lsp::MAX_FILE_BYTES + 1).unwrap();
    drop(f);
    // Several calls at once, each on its own thread and runtime, so that a call that blocks
    // (as before) fails this test after a generous bound instead of hanging it.
    let fx = std::sync::Arc::new(fx);
    let calls = [
        ("pipe.py", "FIFO"),
        ("zero.py", "character device"),
        ("pipe.py", "FIFO"),
    ];
    let (tx, rx) = std::sync::mpsc::channel();
    for (i, (file, _)) in calls.iter().enumerate() {
        let (fx, tx, file) = (fx.clone(), tx.clone(), file.to_string());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            let out = rt.block_on(
                fx.lsp(json!({"operation": "hover", "file": file, "line": 1, "symbol": "x"})),
            );
            let _ = tx.send((i, out));
        });
    }
    for _ in 0..calls.len() {
        let (i, out) = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("an lsp call on a FIFO or a device never returned");
        let (file, kind) = calls[i];
        assert!(out.is_error, "{file}: {}", out.text);
        assert!(
            out.text.contains(kind) && out.text.contains(file),
            "{}",
            out.text
        );
    }
    let out = fx
        .lsp(json!({"operation": "diagnostics", "file": "huge.py"}))
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("files over 32 MiB"), "{}", out.text);
}

/// Issue 41: a location a server gives outside the root — here a module of a folder beside the
/// project that pyright reaches through the project's own `extraPaths`, in a trusted project —
/// is named with its path and never quoted (the line held the secret), as `read` refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_outside_the_root_is_named_never_quoted() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let outside = tempfile::tempdir().unwrap();
    let outside_dir = outside.path().canonicalize().unwrap();
    std::fs::write(
        outside_dir.join("creds.py"),
        format!("SECRET_TOKEN = \"{SECRET}\"\n"),
    )
    .unwrap();
    std::fs::write(
        fx.root.join("pyrightconfig.json"),
        json!({"extraPaths": [outside_dir]}).to_string(),
    )
    .unwrap();
    std::fs::write(
        fx.root.join("use_creds.py"),
        "from creds import SECRET_TOKEN\n\nprint(SECRET_TOKEN)\n",
    )
    .unwrap();
    for op in ["definition", "references"] {
        let out = fx
            .lsp(json!({"operation": op, "file": "use_creds.py", "line": 3, "symbol": "SECRET_TOKEN"}))
            .await;
        assert!(
            !out.text.contains(SECRET),
            "{op} quoted the outside line:\n{}",
            out.text
        );
        if op == "definition" {
            assert!(
                out.text.contains("creds.py")
                    && out.text.contains("not shown: outside the workspace"),
                "{op}: {}",
                out.text
            );
        }
    }
}

/// Issue 41's hold-out: `pkg/b.py` is a symlink to a file outside the root that imports
/// `helper`. When pyright sees the link, its edit reaches outside the root and the rename is
/// refused whole, naming the file. (When the server does not see it, only the identifier
/// witness can: `agent-tools-cli/tests/witness_write.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_with_a_user_behind_a_symlink_is_refused_whole() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    let outside = tempfile::tempdir().unwrap();
    let pkg = fx.root.join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    let a = "def helper() -> int:\n    return 1\n";
    let c = "from pkg.a import helper\n\nprint(helper())\n";
    std::fs::write(pkg.join("a.py"), a).unwrap();
    std::fs::write(pkg.join("c.py"), c).unwrap();
    let b_target = outside.path().join("b.py");
    let b = "from pkg.a import helper\n\nprint(helper() + 1)\n";
    std::fs::write(&b_target, b).unwrap();
    std::os::unix::fs::symlink(&b_target, pkg.join("b.py")).unwrap();

    let rename = json!({"file": "pkg/a.py", "line": 1, "symbol": "helper", "new_name": "helper2"});
    // pyright sees the link and edits it: the edit reaches outside the root, refused whole.
    let out = fx.call("lsp_rename", rename).await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("pkg/b.py"), "{}", out.text);
    assert!(!out.text.contains("verified:"), "{}", out.text);
    assert_eq!(std::fs::read_to_string(pkg.join("a.py")).unwrap(), a);
    assert_eq!(std::fs::read_to_string(pkg.join("c.py")).unwrap(), c);
    assert_eq!(std::fs::read_to_string(&b_target).unwrap(), b);
}
