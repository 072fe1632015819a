//! Issue 39, a language server on the first call where bubblewrap is missing (most containers,
//! many CI images): with `bwrap` hidden by a private mount namespace (`unshare -m`, `/dev/null`
//! bound over it, so no lookup finds it), `agent-tools call lsp hover` on a fresh untrusted
//! Python project — no config file, pyright installed — answers, and `lsp status` says Landlock
//! contains the server and why bubblewrap was not used. (A rust-analyzer hover on a hostile
//! crate with bubblewrap hidden runs none of the programs the repository supplies:
//! untrusted_repo.rs; the other servers' doors: server_doors.rs.)

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// Run `script` (sh) where `bwrap` is hidden (`agent_testkit::without_bwrap`); its output.
fn without_bwrap(script: &str, config: &Path) -> String {
    let out = agent_testkit::without_bwrap("sh")
        .args(["-c", script])
        .env("XDG_CONFIG_HOME", config)
        .env("BIN", BIN)
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !agent_testkit::hidden_bwrap_failed(&out),
        "could not hide bwrap: {text}"
    );
    text
}

#[test]
fn with_bubblewrap_hidden_an_untrusted_python_project_answers_its_first_hover_under_landlock() {
    agent_testkit::require("pyright-langserver");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"p\"\nversion = \"0\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("app.py"),
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\ngreet(\"x\")\n",
    )
    .unwrap();
    let config = dir.path().join("config"); // empty: nothing trusted, no mode chosen
    let r = shell_words::quote(&root.display().to_string()).into_owned();
    let text = without_bwrap(
        &format!(
            "command -v bwrap >/dev/null && test -x \"$(command -v bwrap)\" && test -f \"$(command -v bwrap)\" && echo BWRAP-VISIBLE\n\
             \"$BIN\" call lsp '{{\"operation\": \"hover\", \"path\": \"app.py\", \"symbol\": \"greet\", \"line\": 5}}' --root {r}\n\
             echo ---\n\
             \"$BIN\" call lsp '{{\"operation\": \"status\"}}' --root {r}\n\
             echo ---\n\
             \"$BIN\" doctor --root {r}"
        ),
        &config,
    );
    assert!(!text.contains("BWRAP-VISIBLE"), "{text}");
    let parts: Vec<&str> = text.split("---").collect();
    let [hover, status, doctor] = parts.as_slice() else {
        panic!("{text}");
    };
    assert!(hover.contains("(name: str) -> str"), "{text}");
    assert!(status.contains("run contained: Landlock ABI"), "{status}");
    assert!(status.contains("bubblewrap is not installed"), "{status}");
    // `doctor` says the same before any server ran.
    assert!(
        doctor.contains(
            "lsp: the project is not trusted: its language servers run contained by Landlock ABI"
        ) && doctor.contains("bubblewrap is not installed"),
        "{doctor}"
    );
    // With bubblewrap present, doctor names it.
    let out = Command::new(BIN)
        .args(["doctor", "--root"])
        .arg(&root)
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(doctor.contains("contained by bubblewrap"), "{doctor}");
}
