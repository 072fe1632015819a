//! Supervised children against real processes: escapes from the group are ended, a child
//! outlives the thread that asked for it, grace and exit wording, bounded runs, the run's
//! shutdown, and pids that are not ours are left alone.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_proc::{Child, Command, Launcher, RunError};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// Whether `pid` is alive (exists and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| t[t.rfind(')').unwrap() + 1..].trim_start().chars().next())
        .is_some_and(|s| s != 'Z' && s != 'X')
}

/// Wait (bounded) until none of `pids` is alive; the ones still alive.
async fn gone(pids: &[u32]) -> Vec<u32> {
    for _ in 0..250 {
        if pids.iter().all(|p| !alive(*p)) {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pids.iter().copied().filter(|p| alive(*p)).collect()
}

/// `sh -c script`, whose stdout lines are pids the script started; returns the child and them.
async fn start(script: &str, lines: usize) -> (Child, Vec<u32>) {
    let child = Command::new(&Launcher::host(), "sh")
        .args(["-c", script])
        .spawn()
        .await
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.take_stdout().unwrap()).lines();
    let mut pids = Vec::new();
    for _ in 0..lines {
        let line = out.next_line().await.unwrap().unwrap();
        pids.push(line.trim().parse().unwrap());
    }
    (child, pids)
}

fn kill_by_pid(pids: &[u32]) {
    for p in pids {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
}

/// A grandchild in a new session (and one that also cleared its environment) used to survive
/// the group kill.
#[tokio::test]
async fn kill_ends_descendants_that_left_the_group() {
    let (child, pids) = start(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; \
         env -i setsid sleep 301 </dev/null >/dev/null 2>&1 & echo $!; \
         (setsid sh -c 'sleep 302 & echo $!; wait' </dev/null 2>/dev/null &); sleep 300",
        3,
    )
    .await;
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    child.kill();
    let left = gone(&pids).await;
    kill_by_pid(&left);
    assert!(left.is_empty(), "still running after kill: {left:?}");
}

/// Issue 41: a grandchild that cleared its environment (no run tag) *and* double-forked (its
/// parent gone, so no descendant link either) escaped the tag-and-descendants sweep. The run's
/// cgroup (where the machine offers a writable cgroup v2) holds it: it cannot leave by clearing
/// anything.
#[tokio::test]
async fn kill_ends_a_double_forked_grandchild_that_cleared_its_environment() {
    let (child, pids) = start(
        "(env -i sh -c 'setsid sleep 304 </dev/null >/dev/null 2>&1 & echo $!' &); sleep 300",
        1,
    )
    .await;
    let orphan = pids[0];
    // Its parent is gone (it was adopted by init or a subreaper) and it carries no tag.
    let mut adopted = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{orphan}/stat")).unwrap();
        let ppid: u32 = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        if ppid != child.pid() && !is_descendant_of(ppid, child.pid()) {
            adopted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let env = std::fs::read(format!("/proc/{orphan}/environ")).unwrap();
    assert!(
        adopted && !String::from_utf8_lossy(&env).contains("AGENT_TOOLS_RUN_"),
        "the test's orphan must be untagged and adopted"
    );
    assert!(
        agent_proc::run_cgroup().is_some(),
        "this machine offers a writable cgroup v2 (see `agent-tools doctor`); the test needs it"
    );
    child.kill();
    let left = gone(&pids).await;
    kill_by_pid(&left);
    assert!(left.is_empty(), "still running after kill: {left:?}");
}

/// Whether `pid` descends from `root` (by parent pid).
fn is_descendant_of(mut pid: u32, root: u32) -> bool {
    while pid > 1 {
        if pid == root {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        pid = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
    }
    false
}

#[tokio::test]
async fn dropping_a_child_ends_its_escapees() {
    let (child, pids) = start(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; sleep 300",
        1,
    )
    .await;
    let leader = child.pid();
    drop(child);
    let left = gone(&[pids[0], leader]).await;
    kill_by_pid(&left);
    assert!(left.is_empty(), "still running after drop: {left:?}");
}

/// The parent-death signal fires when the thread that forked the child exits: a child asked
/// for from a short-lived thread must still live after that thread is gone.
#[test]
fn a_child_outlives_the_thread_that_asked_for_it() {
    let (child, rt) = std::thread::spawn(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let child = rt.block_on(async {
            Command::new(&Launcher::host(), "sleep")
                .arg("300")
                .spawn()
                .await
                .unwrap()
        });
        (child, rt)
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.pid();
    let was_alive = alive(pid);
    rt.block_on(async {
        drop(child);
        assert!(gone(&[pid]).await.is_empty());
    });
    assert!(
        was_alive,
        "the child died with the thread that asked for it"
    );
}

#[tokio::test]
async fn terminate_gives_grace_then_kills_and_words_the_status() {
    let polite = Command::new(&Launcher::host(), "sh")
        .args([
            "-c",
            "trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done",
        ])
        .spawn()
        .await
        .unwrap();
    let mut out = tokio::io::BufReader::new(polite.take_stdout().unwrap()).lines();
    assert_eq!(out.next_line().await.unwrap().as_deref(), Some("ready"));
    assert_eq!(
        polite.terminate(Duration::from_secs(5)).await,
        "exited with status 3"
    );
    let stubborn = Command::new(&Launcher::host(), "sh")
        .args([
            "-c",
            "trap '' TERM; echo ready; while :; do sleep 0.05; done",
        ])
        .spawn()
        .await
        .unwrap();
    let mut out = tokio::io::BufReader::new(stubborn.take_stdout().unwrap()).lines();
    assert_eq!(out.next_line().await.unwrap().as_deref(), Some("ready"));
    let how = stubborn.terminate(Duration::from_millis(200)).await;
    assert!(how.starts_with("killed by signal 9"), "{how}");
}

#[tokio::test]
async fn output_is_bounded_in_time_and_keeps_stderr() {
    let out = Command::new(&Launcher::host(), "sh")
        .args(["-c", "echo out; echo err >&2; exit 4"])
        .output(Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, "err\n");
    assert_eq!(
        agent_proc::describe_exit(out.status),
        "exited with status 4"
    );
    let slow = Command::new(&Launcher::host(), "sh")
        .args(["-c", "echo $$ >&2; exec sleep 300"])
        .output(Duration::from_millis(300))
        .await;
    let Err(RunError::TimedOut(_, err)) = slow else {
        panic!("expected a timeout: {slow:?}");
    };
    let pid: u32 = err.trim().parse().unwrap();
    assert!(gone(&[pid]).await.is_empty());
}

/// A pid a child reports is signalled only if it carries that child's tag.
#[tokio::test]
async fn a_reported_pid_that_is_not_ours_is_left_alone() {
    let (ours, pids) = start(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; sleep 300",
        1,
    )
    .await;
    let (other, theirs) = start("echo $$; sleep 300", 1).await;
    let mut stranger = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    assert!(!ours.kill_reported(stranger.id()));
    assert!(!ours.kill_reported(theirs[0]), "another child's pid");
    assert!(alive(stranger.id()) && alive(theirs[0]));
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert!(ours.kill_reported(pids[0]));
    assert!(gone(&pids).await.is_empty());
    drop((ours, other));
}
