//! Polite exits run before any signal (its own test binary: `shutdown` ends every child of the
//! process).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Command, Launcher};
use std::time::Duration;

/// The polite exits registered with `on_shutdown` run first, while the children still live: a
/// child told to leave leaves on its own (status 0), not by a signal.
#[tokio::test]
async fn polite_exits_run_before_any_signal() {
    let child = std::sync::Arc::new(
        Command::new(&Launcher::host(), "sh")
            .args(["-c", "read line; [ \"$line\" = bye ] && exit 0; exit 7"])
            .stdin_piped()
            .spawn()
            .await
            .unwrap(),
    );
    let stdin = std::sync::Arc::new(tokio::sync::Mutex::new(child.take_stdin()));
    let polite = child.clone();
    // Like a language server's `shutdown` then `exit`: say goodbye, wait for it to leave.
    let farewell = agent_proc::on_shutdown(move || {
        let (stdin, child) = (stdin.clone(), polite.clone());
        async move {
            use tokio::io::AsyncWriteExt;
            if let Some(w) = stdin.lock().await.as_mut() {
                let _ = w.write_all(b"bye\n").await;
                let _ = w.flush().await;
            }
            child.wait(Duration::from_secs(5)).await;
        }
    });
    agent_proc::shutdown(Duration::from_secs(5)).await;
    let status = child.wait(Duration::from_secs(5)).await.unwrap();
    assert_eq!(agent_proc::describe_exit(status), "exited with status 0");
    drop(farewell);
}
