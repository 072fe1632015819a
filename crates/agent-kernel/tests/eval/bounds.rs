//! Kernel output is bounded on every path: exception messages, display() floods, large values
//! and output printed between cells (issue 11, item 12).

use crate::common::*;
use agent_kernel::KernelConfig;
use agent_tier::ToolOutput;
use std::path::Path;
use std::time::Duration;

/// What a result costs its caller: the text plus the structured JSON.
fn size(out: &ToolOutput) -> usize {
    out.text.len()
        + out
            .structured
            .as_ref()
            .map(|s| s.to_string().len())
            .unwrap_or(0)
}

const LIMIT: usize = 64 * 1024;

#[track_caller]
fn bounded(out: &ToolOutput) {
    let n = size(out);
    assert!(
        n <= LIMIT,
        "result is {n} bytes (limit {LIMIT}); text starts: {}",
        out.text.chars().take(300).collect::<String>()
    );
}

/// The host's resident set, from /proc/self/status (kB).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .expect("VmRSS in /proc/self/status")
}

/// The heavy tests of this file run one at a time, so that one's memory does not count in
/// another's RSS check.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Wait (without asserting on time) until the kernel has written `name` in the project.
async fn wait_for_file(dir: &Path, name: &str) {
    for _ in 0..6000 {
        if dir.join(name).exists() {
            // the last frames may still be on their way through the pipe
            tokio::time::sleep(Duration::from_millis(500)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the kernel never wrote {name}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_huge_exception_message_is_cut_head_and_tail() {
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .py("raise ValueError('HEAD' + 'x' * 30_000_000 + 'TAIL')")
        .await;
    assert!(out.is_error);
    assert_eq!(status(&out), "error");
    bounded(&out);
    contains(&out, &["ValueError: HEAD", "TAIL", "cut here"]);
    // the kernel is still there, state and all
    ok(&kit.py("1 + 1").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_huge_exception_message_is_cut_head_and_tail() {
    require_node();
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .js("throw new Error('HEAD' + 'x'.repeat(30_000_000) + 'TAIL')")
        .await;
    assert!(out.is_error);
    bounded(&out);
    contains(&out, &["Error: HEAD", "TAIL", "cut here"]);
    ok(&kit.js("1 + 1").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_display_flood_is_capped_with_a_note() {
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .py("for i in range(300):\n    display({'row': i, 'pad': 'p' * 19000})\n'after'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(
        &out,
        &["'row': 0", "display output(s) not shown", "'after'"],
    );
    // the text says how many were left out
    assert!(
        out.text.contains("299 more display") || out.text.contains("more display output(s)"),
        "{}",
        out.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_display_flood_is_capped_with_a_note() {
    require_node();
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .js("for (let i = 0; i < 300; i++) display('row ' + i + ' ' + 'p'.repeat(19000));\n'after'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(&out, &["row 0 ", "display output(s) not shown", "'after'"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_large_values_are_cut() {
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    // a long container (pretty-printing it whole was superlinear) and a long string
    let out = kit.py("list(range(3_000_000))").await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(&out, &["[0, 1, 2", "2999999]", "cut"]);
    let out = kit.py("'s' * 30_000_000").await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(&out, &["'sss", "cut"]);
    let out = kit.js("'s'.repeat(30_000_000)").await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_output_between_cells_is_dropped_beyond_a_cap() {
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    ok(&kit.py("x = 'kept'").await, "(no output)");
    let before = rss_kib();
    // ~200 MB printed by a thread after its cell has finished
    let out = kit
        .py("import threading\ndef spam():\n    line = 'z' * 99_999\n    for _ in range(2000):\n        print(line)\n    open('spam.done', 'w').close()\nthreading.Thread(target=spam, daemon=True).start()")
        .await;
    assert!(!out.is_error, "{}", out.text);
    wait_for_file(kit.dir.path(), "spam.done").await;
    let grown = rss_kib().saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "the host grew by {grown} kB while the kernel printed 200 MB between cells"
    );
    let out = kit.py("x").await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(&out, &["dropped", "between cells", "'kept'"]);
    let dropped = out
        .structured
        .as_ref()
        .and_then(|s| s["dropped_between_cells_bytes"].as_u64())
        .unwrap_or(0);
    assert!(dropped > 100_000_000, "dropped {dropped} bytes");
    ok(&kit.py("x").await, "'kept'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_raw_output_between_cells_is_dropped_beyond_a_cap() {
    require_node();
    let _heavy = HEAVY.lock().await;
    let kit = Kit::new(KernelConfig::default());
    ok(&kit.js("let x = 'kept'").await, "(no output)");
    let before = rss_kib();
    // ~200 MB written straight to fd 1 (not as frames) from timers after the cell finished
    let out = kit
        .js("const fs = require('fs');\nconst line = Buffer.from('z'.repeat(99_999) + '\\n');\nlet n = 0;\nfunction spam() { for (let i = 0; i < 50; i++) fs.writeSync(1, line); if (++n < 40) setImmediate(spam); else fs.writeFileSync('spam.done', ''); }\nsetImmediate(spam);\n'started'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    wait_for_file(kit.dir.path(), "spam.done").await;
    let grown = rss_kib().saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "the host grew by {grown} kB while the kernel printed 200 MB between cells"
    );
    let out = kit.js("x").await;
    assert!(!out.is_error, "{}", out.text);
    bounded(&out);
    contains(&out, &["dropped", "between cells", "'kept'"]);
}

/// A host that configures "forever" (`Duration::MAX`) for the budget, the grace and the start-up
/// timeout gets working cells, not a panic from an overflowing deadline (issue 11, item 13).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forever_budgets_do_not_overflow() {
    let kit = Kit::new(KernelConfig {
        inactivity_budget: Duration::MAX,
        interrupt_grace: Duration::MAX,
        startup_timeout: Duration::MAX,
        ..Default::default()
    });
    ok(&kit.py("1 + 1").await, "2");
    ok(&kit.py("print('again')").await, "again");
}
