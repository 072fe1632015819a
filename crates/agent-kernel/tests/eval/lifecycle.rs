use crate::common::*;
use agent_kernel::KernelConfig;
use serde_json::json;
use std::time::Duration;

fn tight(budget_ms: u64) -> KernelConfig {
    KernelConfig {
        inactivity_budget: Duration::from_millis(budget_ms),
        interrupt_grace: Duration::from_secs(2),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_inactivity_budget() {
    let kit = Kit::new(tight(3000));
    ok(&kit.py("state = 'kept'").await, "(no output)");

    // a loop that keeps printing runs well past the budget
    let out = kit
        .py("import time\nfor i in range(40):\n    print(i, flush=True)\n    time.sleep(0.1)\n'finished'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("39\n'finished'"), "{}", out.text);

    // a silent loop is interrupted; the kernel survives with its state
    let out = kit.py("while True:\n    pass").await;
    assert!(out.is_error);
    assert_eq!(status(&out), "interrupted");
    contains(&out, &["KeyboardInterrupt", "<cell 3>"]);
    insta::assert_snapshot!("python_interrupted_note", last_line(&out.text));
    ok(&kit.py("state").await, "'kept'");

    // a cell that swallows the interrupt is killed, and the next call says state was lost
    let out = kit
        .py("import time\nwhile True:\n    try:\n        time.sleep(60)\n    except KeyboardInterrupt:\n        pass")
        .await;
    assert!(out.is_error);
    assert_eq!(status(&out), "killed");
    assert_eq!(kernel_field(&out, "state_lost"), json!(true));
    insta::assert_snapshot!("python_killed_note", last_line(&out.text));
    let out = kit.py("'state' in globals()").await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(kernel_field(&out, "fresh"), json!(true));
    assert_eq!(kernel_field(&out, "state_lost"), json!(true));
    insta::assert_snapshot!("python_after_kill", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_inactivity_budget() {
    require_node();
    let kit = Kit::new(tight(2500));
    ok(&kit.js("let state = 'kept'").await, "(no output)");
    let out = kit.js("while (true) {}").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    ok(&kit.js("state").await, "'kept'");
    let out = kit.js("await new Promise(() => {})").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    ok(&kit.js("state").await, "'kept'");
    let out = kit
        .js("for (let i = 0; i < 25; i++) { console.log(i); await new Promise(r => setTimeout(r, 150)) }\n'finished'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("24\n'finished'"), "{}", out.text);
}

fn last_line(text: &str) -> String {
    text.lines().last().unwrap_or("").to_string()
}

/// Each way a kernel dies gives its exit status and stderr tail, and the next call starts fresh
/// and says that state was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_crashes() {
    let kit = Kit::new(KernelConfig::default());
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "import os, sys\nprint('before', file=sys.stderr)\nos._exit(3)",
            "it exited with status 3",
            &["before"],
        ),
        (
            "import ctypes\nctypes.string_at(0)",
            "killed by signal 11 (SIGSEGV: a segmentation fault)",
            &["Fatal Python error: Segmentation fault"],
        ),
        (
            // what the out-of-memory killer does
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
            "killed by signal 9 (SIGKILL: often the out-of-memory killer)",
            &[],
        ),
        (
            "import os\nos.abort()",
            "killed by signal 6 (SIGABRT",
            &["Fatal Python error: Aborted"],
        ),
    ];
    for (code, exit, tail) in cases {
        ok(&kit.py("marker = 1").await, "(no output)");
        let out = kit.py(code).await;
        assert!(out.is_error, "{code}: {}", out.text);
        assert_eq!(status(&out), "died", "{}", out.text);
        contains(
            &out,
            &[
                exit,
                "; it was restarted — every name (variables, imports) from this and earlier cells is gone",
            ],
        );
        contains(&out, tail);
        assert_eq!(kernel_field(&out, "state_lost"), json!(true));
        let out = kit.py("'marker' in globals()").await;
        assert!(!out.is_error, "{}", out.text);
        assert!(out.text.ends_with("False"), "{}", out.text);
        contains(
            &out,
            &[
                "a fresh python kernel was started: the previous one died",
                "earlier cells are gone",
            ],
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_crash_and_reset() {
    require_node();
    let kit = Kit::new(KernelConfig::default());
    ok(&kit.js("globalThis.marker = 1").await, "1");
    let out = kit.js("process.exit(4)").await;
    assert_eq!(status(&out), "died", "{}", out.text);
    contains(&out, &["exited with status 4"]);
    let out = kit.js("typeof marker").await;
    contains(
        &out,
        &["a fresh javascript kernel was started", "'undefined'"],
    );
    // a kernel that dies between calls (here: a timer after its cell finished)
    ok(
        &kit.js("setTimeout(() => process.exit(7), 100); 'armed'")
            .await,
        "'armed'",
    );
    let mut text = String::new();
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let out = kit.js("1").await;
        if out.text.contains("fresh javascript kernel") {
            text = out.text;
            break;
        }
    }
    // usually "died between calls"; under heavy load the timer may fire during the `1` cell
    assert!(
        text.contains("the previous one died") && text.contains("(exited with status 7)"),
        "{text}"
    );
    ok(&kit.js("let keep = 2").await, "(no output)");
    let out = kit
        .call(json!({"code": "typeof keep", "description": "check that reset clears all state", "language": "javascript", "reset": true}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("javascript_reset", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_reset_starts_clean() {
    let kit = Kit::new(KernelConfig::default());
    ok(&kit.py("x = 1\nx").await, "1");
    let out = kit
        .call(json!({"code": "'x' in globals()", "description": "start over with a clean interpreter", "reset": true}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(kernel_field(&out, "fresh"), json!(true));
    insta::assert_snapshot!("python_reset", out.text);
    // reset with no code just restarts
    let out = kit
        .call(json!({"code": "", "description": "start over with a clean interpreter", "reset": true}))
        .await;
    ok(
        &out,
        "[reset: the previous python kernel was discarded; a fresh one was started]\n(no output)",
    );
}

/// The sandbox launcher is put in front of the interpreter: a wrapper script that records it ran,
/// then execs the interpreter; and `env` setting a variable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_prefix_launches_the_kernel() {
    let launcher_dir = tempfile::tempdir().expect("tempdir");
    let log = launcher_dir.path().join("launched.log");
    let script = launcher_dir.path().join("sandbox.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexport INSIDE_SANDBOX=yes\nexec \"$@\"\n",
            log.display()
        ),
    )
    .expect("write launcher");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let kit = Kit::with_prefix(
        KernelConfig {
            inactivity_budget: Duration::from_secs(3),
            interrupt_grace: Duration::from_secs(2),
            ..Default::default()
        },
        vec![script.to_string_lossy().to_string()],
    );
    ok(
        &kit.py("import os\nos.environ.get('INSIDE_SANDBOX')").await,
        "'yes'",
    );
    ok(
        &kit.py("print(tool('read', {'path': 'p'}))").await,
        "contents of p",
    );
    let out = kit.py("while True:\n    pass").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
    ok(&kit.py("1 + 1").await, "2");
    let logged = std::fs::read_to_string(&log).expect("the launcher ran");
    assert!(logged.contains(".venv/bin/python"), "{logged}");

    require_node();
    ok(&kit.js("process.env.INSIDE_SANDBOX").await, "'yes'");
    let logged = std::fs::read_to_string(&log).expect("the launcher ran");
    // node is started through `sh`, which moves the wire off stdin and then execs node
    assert!(logged.lines().any(|l| l == "sh"), "{logged}");

    let kit = Kit::with_prefix(
        KernelConfig::default(),
        vec!["env".into(), "AGENT_KERNEL_PREFIX=env".into()],
    );
    ok(
        &kit.py("import os\nos.environ['AGENT_KERNEL_PREFIX']").await,
        "'env'",
    );

    let kit = Kit::with_prefix(
        KernelConfig::default(),
        vec!["/nonexistent/launcher".into()],
    );
    let out = kit.py("1").await;
    assert!(out.is_error);
    contains(
        &out,
        &["could not start the python kernel", "/nonexistent/launcher"],
    );
}

/// A call whose caller stops waiting takes its kernel with it (killed, never left running), and
/// the next call says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_discards_its_kernel() {
    let kit = Kit::new(KernelConfig::default());
    let pid = kit.py("import os\nos.getpid()").await;
    assert!(!pid.is_error, "{}", pid.text);
    let pid: i32 = pid.text.trim().parse().expect("a pid");
    let cancelled = tokio::time::timeout(
        Duration::from_millis(800),
        kit.py("import time\ntime.sleep(60)"),
    )
    .await;
    assert!(cancelled.is_err(), "the cell should still be running");
    let out = kit.py("'os' in globals()").await;
    assert!(!out.is_error, "{}", out.text);
    contains(
        &out,
        &[
            "was discarded because an earlier eval call was cancelled",
            "False",
        ],
    );
    // the old kernel is gone (bounded wait: killing is asynchronous)
    let mut gone = false;
    for _ in 0..100 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.is_empty() || status.contains("State:\tZ") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the cancelled kernel (pid {pid}) is still running");
}

/// While a person is being asked anywhere in the run (an `ask_user` card, an approval prompt),
/// a silent cell is not interrupted; once the question is answered the budget starts afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_question_pauses_the_budget() {
    let kit = Kit::new(tight(3000));
    let asking = kit.registry.asking();
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(4000)).await;
        drop(asking);
    });
    // Silent for 5 s: past the 3 s budget, but a question is pending for the first 4 s, and the
    // budget restarts when it is answered (so it would end at 7 s).
    let out = kit.py("import time\ntime.sleep(5)\n'survived'").await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("'survived'"), "{}", out.text);
    release.await.unwrap();
    // With nobody being asked, the same silence is interrupted.
    let out = kit.py("import time\ntime.sleep(5)\n'survived'").await;
    assert_eq!(status(&out), "interrupted", "{}", out.text);
}
