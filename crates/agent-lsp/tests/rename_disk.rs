//! Issue 11 items 5 and 8: `lsp_rename` plans from what is on disk and edits bytes.
//!
//! - Files changed outside the host's write tools (a kernel cell, an editor, `git checkout`) after
//!   the server read or opened them are re-synced before the rename is planned, so the server's
//!   offsets are never applied to content they were not computed for.
//! - A byte that is not UTF-8 (Latin-1) outside the edited ranges is kept exactly; an edit that
//!   would have to be placed on such bytes refuses the whole rename.
//!
//! Against pyright.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

fn rename_make_greeter() -> serde_json::Value {
    json!({"file": "lib.py", "line": 12, "symbol": "make_greeter", "new_name": "build_greeter"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_after_files_changed_on_disk_uses_the_disk() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    std::fs::write(
        fx.root.join("other.py"),
        "from lib import make_greeter\n\nmake_greeter()\n",
    )
    .unwrap();
    // The server opens main.py and learns lib.py and other.py from disk.
    let out = fx
        .lsp(json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    let out = fx
        .lsp(json!({"operation": "references", "file": "lib.py", "line": 12, "symbol": "make_greeter"}))
        .await;
    assert!(out.text.contains("other.py:3:1"), "{}", out.text);

    // Then they change behind the host's back: lines move in both.
    let main = format!("import os\nimport sys\n{}", fx.read("main.py"));
    std::fs::write(fx.root.join("main.py"), &main).unwrap();
    let other = "import os\n\n\nfrom lib import make_greeter\n\nprint(os.sep); make_greeter()\n";
    std::fs::write(fx.root.join("other.py"), other).unwrap();
    let lib = fx.read("lib.py");

    check_rename(
        &fx,
        rename_make_greeter(),
        &["lib.py", "main.py", "other.py"],
    )
    .await;
    assert_eq!(
        fx.read("main.py"),
        main.replace("make_greeter", "build_greeter")
    );
    assert_eq!(
        fx.read("other.py"),
        other.replace("make_greeter", "build_greeter")
    );
    assert_eq!(
        fx.read("lib.py"),
        lib.replace("make_greeter", "build_greeter")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_keeps_bytes_that_are_not_utf8_and_refuses_to_guess_on_them() {
    require("pyright-langserver");
    let fx = fixture("python", config("python", "pyright"));
    // A Latin-1 comment on lines the rename does not edit.
    let mut main = std::fs::read(fx.root.join("main.py")).unwrap();
    main.extend_from_slice(b"# caf\xe9 cr\xe8me br\xfbl\xe9e\n");
    std::fs::write(fx.root.join("main.py"), &main).unwrap();
    let lib = fx.read("lib.py");

    check_rename(&fx, rename_make_greeter(), &["lib.py", "main.py"]).await;
    let want: Vec<u8> = {
        let text = String::from_utf8_lossy(&main).replace("make_greeter", "build_greeter");
        // Only the ASCII identifier changed: splice the original Latin-1 tail back.
        let mut v = text.as_bytes()[..text.find("# caf").unwrap()].to_vec();
        v.extend_from_slice(b"# caf\xe9 cr\xe8me br\xfbl\xe9e\n");
        v
    };
    assert_eq!(
        std::fs::read(fx.root.join("main.py")).unwrap(),
        want,
        "{}",
        String::from_utf8_lossy(&std::fs::read(fx.root.join("main.py")).unwrap())
    );
    assert_eq!(
        fx.read("lib.py"),
        lib.replace("make_greeter", "build_greeter")
    );

    // An edit after a Latin-1 byte on its line cannot be placed exactly: nothing changes.
    let fx = fixture("python", config("python", "pyright"));
    let odd = b"from lib import make_greeter\n\nlabel = '\xe9'; make_greeter()\n".to_vec();
    std::fs::write(fx.root.join("odd.py"), &odd).unwrap();
    let before: Vec<Vec<u8>> = ["lib.py", "main.py", "odd.py"]
        .iter()
        .map(|f| std::fs::read(fx.root.join(f)).unwrap())
        .collect();
    let out = fx
        .call(
            "lsp_rename",
            json!({"file": "lib.py", "line": 12, "symbol": "make_greeter", "new_name": "greeter"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains(
            "the rename edits `odd.py` at line 3 where the file has bytes that are not UTF-8"
        ),
        "{}",
        out.text
    );
    let after: Vec<Vec<u8>> = ["lib.py", "main.py", "odd.py"]
        .iter()
        .map(|f| std::fs::read(fx.root.join(f)).unwrap())
        .collect();
    assert_eq!(before, after);
}
