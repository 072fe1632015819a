//! Every way an `eval` result can end, as a model and a client read it: the text, the structured
//! content, the error flag and how many images, one snapshot per language. Pids, versions, paths
//! and the PNG's size are redacted. Each language's cells run twice, with the driver loaded from
//! the cache (on the host) and passed as source (behind a launcher, here `env`): the results are
//! the same.

use crate::common::*;
use agent_kernel::KernelConfig;
use agent_tier::ToolOutput;
use serde_json::Value;
use std::time::Duration;

/// Redact what changes from run to run: pids, versions, the image folder, a PNG's size.
fn redacted(kit: &Kit, out: &ToolOutput) -> String {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    match k.as_str() {
                        "pid" | "restarted_pid" if v.is_number() => *v = "[PID]".into(),
                        "version" => *v = "[VERSION]".into(),
                        "path" if v.is_string() => *v = "[PNG]".into(),
                        _ => walk(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut structured = out.structured.clone().unwrap_or(Value::Null);
    walk(&mut structured);
    let mut text = kit.redact(&out.text);
    while let Some(at) = text.find("saved as /") {
        let end = text[at..].find(']').map_or(text.len(), |e| at + e);
        text.replace_range(at + "saved as ".len()..end, "[PNG]");
    }
    while let Some(at) = text
        .find("PNG ")
        .filter(|at| text[at + 4..].starts_with(|c: char| c.is_ascii_digit()))
    {
        let end = text[at + 4..].find(',').map_or(text.len(), |e| at + 4 + e);
        text.replace_range(at + 4..end, "[size]");
    }
    format!(
        "is_error: {}\nimages: {}\ntext:\n{text}\nstructured: {}\n",
        out.is_error,
        out.images.len(),
        serde_json::to_string_pretty(&structured).unwrap_or_default()
    )
}

async fn check(kit: &Kit, lang: &str, cases: &[(&str, &str)]) -> String {
    let mut report = String::new();
    for (name, code) in cases {
        let out = kit.eval_on(lang, code, agent_tier::Surface::Full).await;
        report.push_str(&format!("## {name}\n{}\n", redacted(kit, &out)));
    }
    report
}

/// The cells of one language, run in a kernel with the default budget and then in one with a
/// short budget (the cells that are interrupted, killed or die), under the launcher `prefix`.
async fn run(
    lang: &str,
    prefix: &[&str],
    cells: &[(&str, &str)],
    tight: &[(&str, &str)],
) -> String {
    let prefix: Vec<String> = prefix.iter().map(|p| p.to_string()).collect();
    let config = KernelConfig {
        output_cap: 400,
        ..Default::default()
    };
    let mut report = check(
        &Kit::with_prefix(config.clone(), prefix.clone()),
        lang,
        cells,
    )
    .await;
    let config = KernelConfig {
        inactivity_budget: Duration::from_millis(2500),
        interrupt_grace: Duration::from_millis(1500),
        ..config
    };
    report.push_str(&check(&Kit::with_prefix(config, prefix), lang, tight).await);
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_results() {
    let cases = [
        ("nothing", "x = 1"),
        (
            "streams and a value",
            "import sys\nprint('out')\nprint('err', file=sys.stderr)\n40 + 2",
        ),
        (
            "displays",
            "class H:\n    def _repr_html_(self):\n        return '<b>' + 'h' * 1000 + '</b>'\n    def _repr_markdown_(self):\n        return '**m**'\n    def __repr__(self):\n        return 'H()'\ndisplay(H())\ndisplay('plain text')\nH()",
        ),
        (
            "an exception",
            "def f():\n    raise ValueError('bad value')\nf()",
        ),
        ("output cut", "for i in range(200):\n    print('line', i)"),
        (
            "tool bridge",
            "r = tool('read', {'path': 'a.txt'})\nprint(r, r.structured)\ntool('fails', {'path': 'b'})",
        ),
        (
            "a figure",
            "import matplotlib.pyplot as plt\nplt.plot([1, 2], [2, 1])\nplt.show()",
        ),
    ];
    let tight = [
        (
            "interrupted",
            "import time\nkept = 1\nwhile True:\n    time.sleep(0.05)",
        ),
        (
            "killed",
            "import time\nwhile True:\n    try:\n        time.sleep(60)\n    except KeyboardInterrupt:\n        pass",
        ),
        ("after a kill", "'kept' in globals()"),
        (
            "died",
            "import os, sys\nprint('going', file=sys.stderr, flush=True)\nos._exit(3)",
        ),
    ];
    let report = run("python", &[], &cases, &tight).await;
    assert_eq!(run("python", &["env"], &cases, &tight).await, report);
    insta::assert_snapshot!("python_results", report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_results() {
    require_node();
    let cases = [
        ("nothing", "let x = 1"),
        (
            "names a driver might have taken",
            "const a = 1, b = 2, d = 3, f = 4, m = 5, r = 6, vm = 7, path = 8, wire = 9\n[a, b, d, f, m, r, vm, path, wire]",
        ),
        (
            "streams and a value",
            "console.log('out'); console.error('err'); 40 + 2",
        ),
        ("displays", "display({a: 1}, 'plain text'); [1, 2, 3]"),
        (
            "an exception",
            "function f() { throw new TypeError('bad value') }\nf()",
        ),
        (
            "output cut",
            "for (let i = 0; i < 200; i++) console.log('line', i)",
        ),
        (
            "tool bridge",
            "const r = await tool('read', {path: 'a.txt'})\nconsole.log(r)\nawait tool('fails', {path: 'b'})",
        ),
    ];
    let tight = [
        ("interrupted", "var kept = 1\nwhile (true) {}"),
        ("died", "process.stderr.write('going\\n'); process.exit(3)"),
    ];
    let report = run("javascript", &[], &cases, &tight).await;
    assert_eq!(run("javascript", &["env"], &cases, &tight).await, report);
    insta::assert_snapshot!("javascript_results", report);
}
