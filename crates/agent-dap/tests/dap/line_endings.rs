//! `debug` against the real debugpy on programs whose lines end with a lone `\r`, and with all
//! three endings mixed. Python reads source with universal newlines, so its line numbers count
//! a lone `\r` as a line's end, as `agent_tier::lines` does: a breakpoint on a line after lone
//! CRs stops there, and what `debug` echoes and lists is that line's text (issue 23). Before,
//! a lone `\r` ended no line: the breakpoint echoed nothing and the stop showed no source.

use crate::common::{Fixture, config, require};
use serde_json::json;

/// Lines 1–9: `def total(n):`, `    acc = 0`, `    for i in range(n):`, `        acc += i`,
/// `    return acc`, (empty), (empty), `result = total(3)`, `print("result", result)`.
const CR_ONLY: &str = "def total(n):\r    acc = 0\r    for i in range(n):\r        acc += i\r    return acc\r\r\rresult = total(3)\rprint(\"result\", result)\r";
/// Lines 1–9 ended by `\n`, `\r\n`, `\r`, `\n`, `\r\n`, `\r`, `\r\n`, `\r`, `\n`: `import sys`,
/// `def total(n):`, `    acc = 0`, `    for i in range(n):`, `        acc += i`, `    return acc`,
/// (empty), `result = total(3)`, `print("result", result)`.
const MIXED: &str = "import sys\ndef total(n):\r\n    acc = 0\r    for i in range(n):\n        acc += i\r\n    return acc\r\r\nresult = total(3)\rprint(\"result\", result)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_breakpoints_after_lone_crs_stop_and_show_their_line() {
    require("python3");
    let mut failures = Vec::new();
    for (program, line, caller) in [(CR_ONLY, 4, 8), (MIXED, 5, 8)] {
        let mut f = Fixture::new(
            &[
                ("pyproject.toml", "[project]\nname='demo'\n"),
                ("app.py", program),
            ],
            config(),
        );
        f.link_venv();
        let set = f
            .ok(json!({"op": "breakpoints", "file": "app.py", "lines": [line]}))
            .await;
        let launched = f.ok(json!({"op": "launch", "program": "app.py"})).await;
        let text = format!("{}\n{}", set.text, launched.text);
        for shown in [
            format!("- app.py:{line}: verified: `acc += i`"),
            format!("stopped (breakpoint) at total (app.py:{line})"),
            format!("> {line} |         acc += i"),
            format!(": <module> (app.py:{caller})"),
        ] {
            if !text.contains(&shown) {
                failures.push(format!("{program:?}: want {shown:?} in:\n{text}"));
            }
        }
        let snap = launched.structured.clone().unwrap_or_default();
        if snap["line"] != line {
            failures.push(format!("{program:?}: stopped at line {}", snap["line"]));
        }
        f.finish().await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
