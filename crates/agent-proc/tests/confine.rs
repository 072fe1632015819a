//! Landlock confinement of a real child (`sh`), asserted from inside: it writes only beneath its
//! writable folder, runs programs only from the executable folders (a script it wrote itself,
//! or one in an outside folder, is refused), holds no capability, cannot signal the test
//! process (Landlock ABI 6) nor read its `/proc/<pid>/environ`, and has no controlling terminal.
//! The kernel here offers Landlock (ABI 7); a kernel without it fails the spawn, which is also
//! asserted to be an error rather than an unconfined child.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Command, Confinement, Launcher};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

#[tokio::test]
async fn a_confined_child_writes_and_runs_only_where_it_may() {
    let abi = agent_proc::landlock_abi().expect("this machine's kernel offers Landlock");
    let private = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    // A program outside every executable folder, runnable by its mode.
    let script = outside.path().join("run-me.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let confinement = Confinement {
        writable: vec![private.path().to_path_buf()],
        executable: ["/usr", "/bin", "/lib", "/lib64"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
    };
    let probe = format!(
        r#"
        echo x > "{private}/ok" && echo write_private=ok || echo write_private=denied
        echo x > "{outside}/escaped" 2>/dev/null && echo write_outside=ok || echo write_outside=denied
        "{script}" >/dev/null 2>&1 && echo exec_outside=ok || echo exec_outside=denied
        cp /bin/true "{private}/mine" && chmod +x "{private}/mine"
        "{private}/mine" 2>/dev/null && echo exec_own=ok || echo exec_own=denied
        /bin/true && echo exec_system=ok || echo exec_system=denied
        grep CapEff /proc/self/status
        kill -0 {me} 2>/dev/null && echo signal_outside=ok || echo signal_outside=denied
        cat /proc/{me}/environ >/dev/null 2>&1 && echo environ_outside=ok || echo environ_outside=denied
        (exec 3<>/dev/tty) 2>/dev/null && echo tty=ok || echo tty=none
        "#,
        private = private.path().display(),
        outside = outside.path().display(),
        script = script.display(),
        me = std::process::id(),
    );
    let out = Command::new(&Launcher::host(), "/bin/sh")
        .args(["-c", &probe])
        .confine(confinement)
        .output(Duration::from_secs(30))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    for want in [
        "write_private=ok",
        "write_outside=denied",
        "exec_outside=denied",
        "exec_own=denied",
        "exec_system=ok",
        "CapEff:\t0000000000000000",
        "environ_outside=denied",
        "tty=none",
    ] {
        assert!(text.contains(want), "{want} in:\n{text}\n{}", out.stderr);
    }
    if abi >= 6 {
        assert!(text.contains("signal_outside=denied"), "{text}");
    }
    assert!(!outside.path().join("escaped").exists());
}
