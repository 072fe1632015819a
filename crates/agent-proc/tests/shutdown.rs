//! The run's shutdown (its own test binary: it ends every child of the process).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Child, Command, Launcher};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| t[t.rfind(')').unwrap() + 1..].trim_start().chars().next())
        .is_some_and(|s| s != 'Z' && s != 'X')
}

async fn start(script: &str, lines: usize) -> (Child, Vec<u32>) {
    let child = Command::new(&Launcher::host(), "sh")
        .args(["-c", script])
        .spawn()
        .await
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.take_stdout().unwrap()).lines();
    let mut pids = Vec::new();
    for _ in 0..lines {
        pids.push(
            out.next_line()
                .await
                .unwrap()
                .unwrap()
                .trim()
                .parse()
                .unwrap(),
        );
    }
    (child, pids)
}

/// The run's shutdown ends every live child and whatever escaped from each.
#[tokio::test]
async fn shutdown_ends_the_whole_run() {
    let (a, mut pids) = start(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; echo $$; sleep 300",
        2,
    )
    .await;
    let (b, more) = start("trap '' TERM; echo $$; while :; do sleep 0.05; done", 1).await;
    pids.extend(more);
    agent_proc::shutdown(Duration::from_millis(300)).await;
    let mut left = pids.clone();
    for _ in 0..250 {
        left.retain(|p| alive(*p));
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    drop((a, b));
    assert!(left.is_empty(), "still running after shutdown: {left:?}");
}
