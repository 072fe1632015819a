//! Session lifecycle against real debugpy: one session per conversation, TTL, a dying adapter,
//! a debuggee that exits early, the project's `.venv` preferred over `$PATH`, attach.

use crate::common::{Fixture, assert_gone, config, filters, require, venv};
use agent_dap::DapConfig;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

const LOOP: &str = "import time\n\nfor i in range(3):\n    x = i * 2\n    print('tick', i, flush=True)\nprint('done')\n";

fn py_fixture(cfg: DapConfig) -> Fixture {
    require("python3");
    let f = Fixture::new(&[("requirements.txt", ""), ("prog.py", LOOP)], cfg);
    f.link_venv();
    f
}

/// Poll `status` until the session has ended (bounded).
async fn wait_ended(f: &mut Fixture) -> String {
    for _ in 0..300 {
        let s = f.quiet(json!({"op": "status"})).await;
        if let Some(st) = &s.structured {
            for key in ["adapter_pid", "debuggee_pid"] {
                if let Some(p) = st.get(key).and_then(serde_json::Value::as_u64) {
                    f.pids.push(p as u32);
                }
            }
        }
        if s.text.contains("ended (") {
            return s.text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the session never ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_launch_is_rejected_naming_the_live_session() {
    let mut f = py_fixture(config());
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": [4]}))
        .await;
    f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    let second = f.err(json!({"op": "launch", "program": "prog.py"})).await;
    assert!(
        second
            .text
            .contains("already live: session 1 (debugpy on prog.py"),
        "{}",
        second.text
    );
    let attach = f.err(json!({"op": "attach", "port": 9})).await;
    assert!(attach.text.contains("already live"), "{}", attach.text);
    // The first session is untouched.
    let st = f.ok(json!({"op": "stack"})).await;
    assert!(st.text.contains("<module> (prog.py:4)"), "{}", st.text);
    f.ok(json!({"op": "terminate"})).await;
    assert_gone(&f.pids).await;
    // After terminate a new launch is allowed.
    f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_expiry_kills_the_session() {
    let mut f = py_fixture(DapConfig {
        ttl: Duration::from_secs(4),
        ..config()
    });
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": [4]}))
        .await;
    // On a loaded machine the TTL may expire while the launch is still starting up; either
    // way the session must end by its TTL.
    let launched = f.call(json!({"op": "launch", "program": "prog.py"})).await;
    let status = wait_ended(&mut f).await;
    assert!(
        status.contains("its time to live of 4s expired"),
        "{status}\n{}",
        launched.text
    );
    if launched.is_error {
        assert!(
            launched.text.contains("time to live of 4s expired"),
            "{}",
            launched.text
        );
    }
    assert_gone(&f.pids).await;
    let err = f.err(json!({"op": "continue"})).await;
    assert!(
        err.text.contains("time to live of 4s expired"),
        "{}",
        err.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adapter_killed_mid_session() {
    let mut f = py_fixture(config());
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": [4]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    let adapter = launched.structured.as_ref().unwrap()["adapter_pid"]
        .as_u64()
        .unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", &adapter.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let status = wait_ended(&mut f).await;
    assert!(
        status.contains("the debug adapter exited unexpectedly"),
        "{status}"
    );
    let err = f.err(json!({"op": "stack"})).await;
    assert!(err.text.contains("exited unexpectedly"), "{}", err.text);
    assert_gone(&f.pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debuggee_exits_before_any_breakpoint() {
    let mut f = py_fixture(config());
    // A breakpoint on a line that never runs (after the loop's body there is no line 40).
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": [6]}))
        .await;
    f.ok(json!({"op": "breakpoints", "file": "prog.py", "lines": []}))
        .await;
    let launched = f
        .ok(json!({"op": "launch", "program": "prog.py", "args": ["a b"], "env": {"DEMO": "1"}}))
        .await;
    assert!(
        launched.text.contains("the program exited with code 0"),
        "{}",
        launched.text
    );
    assert!(launched.text.contains("tick 2\ndone"), "{}", launched.text);
    let err = f.err(json!({"op": "step_over"})).await;
    assert!(
        err.text.contains("ended: the debuggee terminated"),
        "{}",
        err.text
    );
    f.ok(json!({"op": "output"})).await;
    f.ok(json!({"op": "output"})).await;
    assert_gone(&f.pids).await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// The project's `.venv/bin/python` runs the adapter even though `python3` on `$PATH` could:
/// the `.venv` python here is a wrapper that leaves a mark, then runs the test venv's python.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_prefers_project_venv_over_path() {
    require("python3");
    let mut f = Fixture::new(&[("setup.py", ""), ("prog.py", LOOP)], config());
    let bin = f.root().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mark = f.root().join("venv-used");
    let wrapper = format!(
        "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}/bin/python' \"$@\"\n",
        mark.display(),
        venv().display()
    );
    std::fs::write(bin.join("python"), wrapper).unwrap();
    std::fs::set_permissions(bin.join("python"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let launched = f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    assert!(
        launched
            .text
            .contains("/.venv/bin/python -m debugpy.adapter"),
        "{}",
        launched.text
    );
    assert!(
        launched.text.contains("exited with code 0"),
        "{}",
        launched.text
    );
    let used = std::fs::read_to_string(&mark).expect("the .venv python was not run");
    assert!(used.contains("-m debugpy.adapter"), "{used}");
    assert_gone(&f.pids).await;
}

/// `attach` to a program started with `python -m debugpy --listen`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_to_listening_debugpy() {
    let mut f = py_fixture(config());
    std::fs::write(
        f.root().join("serve.py"),
        "import time\nfor i in range(600):\n    n = i\n    time.sleep(0.1)\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(venv().join("bin/python"))
        .args([
            "-m",
            "debugpy",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "serve.py",
        ])
        .current_dir(f.root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start debugpy listener");
    f.ok(json!({"op": "breakpoints", "file": "serve.py", "lines": [3]}))
        .await;
    // The listener takes a moment to open its port (long on a loaded machine): wait until the
    // kernel lists it as listening, without connecting to it.
    wait_listening(port).await;
    let attached = f.ok(json!({"op": "attach", "port": port})).await;
    assert!(
        attached.text.contains("attached to 127.0.0.1:"),
        "{}",
        attached.text
    );
    let attached_text = if attached.text.contains("stopped (breakpoint)") {
        attached.text.clone()
    } else {
        f.ok(json!({"op": "continue"})).await.text
    };
    assert!(attached_text.contains("(serve.py:3)"), "{attached_text}");
    let n = f
        .ok(json!({"op": "evaluate", "expression": "i >= 0"}))
        .await;
    assert!(n.text.contains("= True"), "{}", n.text);
    f.ok(json!({"op": "terminate"})).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_gone(&f.pids).await;
}

/// A program that never stops by itself: `launch` and `continue` come back after the bounded
/// wait with state `running`; `pause` stops it; `status` tells where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_program_returns_after_bounded_wait_and_pauses() {
    let mut f = py_fixture(DapConfig {
        run_wait: Duration::from_secs(2),
        ..config()
    });
    std::fs::write(
        f.root().join("spin.py"),
        "import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n",
    )
    .unwrap();
    let launched = f.ok(json!({"op": "launch", "program": "spin.py"})).await;
    assert!(
        launched.text.contains("still running after 2s"),
        "{}",
        launched.text
    );
    let status = f.ok(json!({"op": "status"})).await;
    assert!(
        status.text.contains("(debugpy on spin.py, running)"),
        "{}",
        status.text
    );
    let err = f.err(json!({"op": "stack"})).await;
    assert!(
        err.text
            .contains("the debuggee is running; `stack` needs it stopped"),
        "{}",
        err.text
    );
    let paused = f.ok(json!({"op": "pause"})).await;
    if !paused.text.starts_with("stopped (pause)") {
        // A loaded machine may need longer than the bounded wait: status tells once it stops.
        let mut stopped = false;
        for _ in 0..300 {
            if f.quiet(json!({"op": "status"}))
                .await
                .text
                .contains("stopped at")
            {
                stopped = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(stopped, "pause never stopped the program: {}", paused.text);
    }
    // Under load the pause may land before `n` exists; the frame evaluates either way.
    let n = f
        .quiet(json!({"op": "evaluate", "expression": "2 + 3"}))
        .await;
    assert!(n.text.contains("= 5"), "{}", n.text);
    let cont = f.ok(json!({"op": "continue"})).await;
    assert!(
        cont.text.contains("still running after 2s"),
        "{}",
        cont.text
    );
    f.finish().await;
}

/// Wait (bounded) until something listens on 127.0.0.1:`port`, per /proc/net/tcp.
pub async fn wait_listening(port: u16) {
    let needle = format!(":{port:04X} ");
    for _ in 0..600 {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        let listening = table.lines().any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() > 3 && format!("{} ", cols[1]).ends_with(&needle) && cols[3] == "0A"
        });
        if listening {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 60 s");
}

/// Numeric arguments out of range are argument errors naming the argument and the valid range
/// (issue 11, item 13): an output cursor past the end, port 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numeric_arguments_out_of_range_name_the_valid_range() {
    let mut f = py_fixture(config());
    let launched = f.ok(json!({"op": "launch", "program": "prog.py"})).await;
    assert!(launched.text.contains("done"), "{}", launched.text);
    for cursor in [u64::MAX, 1 << 40] {
        let err = f.err(json!({"op": "output", "cursor": cursor})).await;
        assert!(
            err.text.contains("`cursor`") && err.text.contains("past the end"),
            "{}",
            err.text
        );
    }
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("tick 0"), "{}", out.text);
    f.ok(json!({"op": "terminate"})).await;
    let err = f.err(json!({"op": "attach", "port": 0})).await;
    assert!(
        err.text.contains("`port`") && err.text.contains("from 1 to 65535"),
        "{}",
        err.text
    );
}

/// `status` says stopped only while the debuggee is: stopped at a breakpoint, then resumed by
/// `continue` (breakpoints cleared), `status` says running and no longer where it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_follows_continue_from_stopped_to_running() {
    let mut f = py_fixture(DapConfig {
        run_wait: Duration::from_secs(2),
        ..config()
    });
    std::fs::write(
        f.root().join("spin.py"),
        "import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n",
    )
    .unwrap();
    f.ok(json!({"op": "breakpoints", "file": "spin.py", "lines": [4]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "spin.py"})).await;
    assert!(launched.text.contains("(spin.py:4)"), "{}", launched.text);
    let stopped = f.ok(json!({"op": "status"})).await;
    assert!(
        stopped.text.contains("stopped (breakpoint") && stopped.text.contains("stopped at "),
        "{}",
        stopped.text
    );
    f.ok(json!({"op": "breakpoints", "file": "spin.py", "lines": []}))
        .await;
    let cont = f.ok(json!({"op": "continue"})).await;
    assert!(
        cont.text.contains("still running after 2s"),
        "{}",
        cont.text
    );
    let status = f.ok(json!({"op": "status"})).await;
    assert!(
        status.text.contains("(debugpy on spin.py, running)") && !status.text.contains("stopped"),
        "{}",
        status.text
    );
    assert_eq!(
        status.structured.as_ref().unwrap()["state"],
        json!("running")
    );
    f.finish().await;
}

/// `attach` never pauses the program: a debugpy listener waiting for its client, attached
/// without breakpoints, runs on; `status` says running and its output keeps coming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_leaves_the_program_running() {
    let mut f = py_fixture(DapConfig {
        run_wait: Duration::from_secs(2),
        ..config()
    });
    std::fs::write(
        f.root().join("serve.py"),
        "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(venv().join("bin/python"))
        .args([
            "-m",
            "debugpy",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--wait-for-client",
            "serve.py",
        ])
        .current_dir(f.root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start debugpy listener");
    wait_listening(port).await;
    let attached = f.ok(json!({"op": "attach", "port": port})).await;
    assert!(
        attached.text.contains("still running after 2s"),
        "{}",
        attached.text
    );
    let status = f.ok(json!({"op": "status"})).await;
    assert!(
        status.text.contains("running)") && !status.text.contains("stopped"),
        "{}",
        status.text
    );
    // Running indeed: its output keeps coming (bounded wait, for a loaded machine).
    let mut ticks = String::new();
    for _ in 0..100 {
        ticks.push_str(&f.quiet(json!({"op": "output"})).await.text);
        if ticks.contains("tick 3") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ticks.contains("tick 3"), "{ticks}");
    f.ok(json!({"op": "terminate"})).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_gone(&f.pids).await;
}
