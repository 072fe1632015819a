//! Without a cgroup (`AGENT_TOOLS_CGROUP=off`, as on a machine without a writable cgroup v2),
//! the host adopts what cleared the run's tag and left its parents: the run's end finds and ends
//! it, and an adoptee that exits is reaped (no zombie). One test: the setting is per process.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Command, Launcher};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// `(state, ppid)` of `pid`, if it exists.
fn stat(pid: u32) -> Option<(char, u32)> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &t[t.rfind(')')? + 2..];
    let mut it = rest.split_whitespace();
    Some((it.next()?.chars().next()?, it.next()?.parse().ok()?))
}

#[tokio::test]
async fn without_a_cgroup_the_host_adopts_ends_and_reaps_untagged_orphans() {
    // SAFETY: set before any thread of this test binary reads the environment (the run's cgroup
    // is decided at the first spawn, below).
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(agent_proc::CGROUP_ENV, "off");
    }
    let child = Command::new(&Launcher::host(), "sh")
        .args([
            "-c",
            "(env -i sh -c 'setsid sleep 306 </dev/null >/dev/null 2>&1 & echo $!; \
              setsid sleep 0.2 </dev/null >/dev/null 2>&1 & echo $!' &); sleep 300",
        ])
        .spawn()
        .await
        .unwrap();
    assert!(agent_proc::run_cgroup().is_none());
    let mut out = tokio::io::BufReader::new(child.take_stdout().unwrap()).lines();
    let long: u32 = out
        .next_line()
        .await
        .unwrap()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let short: u32 = out
        .next_line()
        .await
        .unwrap()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let me = std::process::id();
    // Both orphans are adopted by this process, not init.
    let mut adopted = false;
    for _ in 0..100 {
        if stat(long).is_some_and(|(_, ppid)| ppid == me) {
            adopted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        adopted,
        "the orphan {long} was not adopted: {:?}",
        stat(long)
    );
    // The short one exits at 0.2 s and is reaped by the host (no zombie of ours remains).
    let mut reaped = false;
    for _ in 0..150 {
        if stat(short).is_none_or(|(_, ppid)| ppid != me) {
            reaped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reaped, "the exited orphan stayed: {:?}", stat(short));
    // The run's end ends the live one, though it carries no tag and no child of ours is its
    // parent.
    agent_proc::shutdown(Duration::from_millis(300)).await;
    let mut gone = false;
    for _ in 0..150 {
        if stat(long).is_none_or(|(state, _)| state == 'Z') {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = stat(long);
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-9", &long.to_string()])
            .status();
    }
    drop(child);
    assert!(
        gone,
        "the adopted orphan {long} outlived the run's end: {left:?}"
    );
}
