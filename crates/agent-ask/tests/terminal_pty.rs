//! The terminal card driven through a real pseudo-terminal (python3's `pty` module), and its
//! fail-closed behaviour when stdin is not a terminal.
//!
//! This test binary has no libtest harness: run normally it is the driver; run with
//! `AGENT_ASK_CARD` set it is the program under test, which shows that card through a
//! `TerminalPort` on its own stdin/stderr and prints the outcome.

use agent_ask::{AskOutcome, AskPort, AskUserArgs, Card, TerminalOptions, TerminalPort};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const CARD_ENV: &str = "AGENT_ASK_CARD";

fn child(spec: &str) {
    let spec: Value = serde_json::from_str(spec).expect("card spec");
    let args: AskUserArgs = serde_json::from_value(spec["args"].clone()).expect("card args");
    let card = Card {
        question: args.question,
        context: args.context,
        options: args
            .options
            .into_iter()
            .map(agent_ask::CardOption::from)
            .collect(),
        allow_free_text: args.allow_free_text,
        multi_select: args.multi_select,
        timeout: spec["timeout_ms"].as_u64().map(Duration::from_millis),
        ..Card::question("")
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let port = TerminalPort::new(TerminalOptions::default());
    let outcome = rt.block_on(port.ask(card, None));
    let shown = match outcome {
        AskOutcome::Answer(a) => json!({"answer": a}),
        AskOutcome::Skip => json!("skip"),
        AskOutcome::Decline => json!("decline"),
        AskOutcome::Timeout => json!("timeout"),
        AskOutcome::Unavailable(r) => json!({"unavailable": r}),
    };
    println!("OUTCOME {shown}");
}

fn db_args() -> Value {
    json!({
        "question": "Which database should the service use?",
        "context": "The migration scripts differ per engine.",
        "options": [
            {"label": "Postgres", "description": "the team already runs it"},
            {"label": "SQLite", "description": "no server to run"},
            {"label": "MySQL"}
        ],
        "allow_free_text": true
    })
}

/// Run the card on a pty, typing `steps` (expected text, then what to type); returns the
/// transcript with the tty's `\r\n` as `\n`.
fn on_pty(args: &Value, timeout_ms: u64, steps: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().expect("current exe");
    let card = json!({"args": args, "timeout_ms": timeout_ms}).to_string();
    let spec = json!({
        "argv": [exe],
        "env": {CARD_ENV: card},
        "steps": steps.iter().map(|(e, s)| json!({"expect": e, "send": s})).collect::<Vec<_>>(),
        "deadline": 120,
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pty_drive.py");
    let mut driver = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 is needed to drive the pseudo-terminal; install python3");
    driver
        .stdin
        .take()
        .expect("stdin")
        .write_all(spec.to_string().as_bytes())
        .expect("write spec");
    let out = driver.wait_with_output().expect("driver output");
    assert!(out.status.success(), "pty driver failed: {:?}", out.status);
    let report: Value = serde_json::from_slice(&out.stdout).expect("driver report");
    let transcript = report["transcript"]
        .as_str()
        .unwrap_or("")
        .replace("\r\n", "\n");
    assert!(
        report["error"].is_null(),
        "pty driver: {}; transcript so far:\n{transcript}",
        report["error"]
    );
    assert_eq!(
        report["status"],
        json!(0),
        "card program failed:\n{transcript}"
    );
    transcript
}

fn outcome_of(transcript: &str) -> Value {
    let line = transcript
        .lines()
        .find_map(|l| l.strip_prefix("OUTCOME "))
        .unwrap_or_else(|| panic!("no outcome in:\n{transcript}"));
    serde_json::from_str(line).expect("outcome json")
}

struct Case {
    name: &'static str,
    args: Value,
    timeout_ms: u64,
    steps: Vec<(&'static str, &'static str)>,
    outcome: Value,
}

fn check(case: &Case) {
    let transcript = on_pty(&case.args, case.timeout_ms, &case.steps);
    assert_eq!(
        outcome_of(&transcript),
        case.outcome,
        "case `{}`:\n{transcript}",
        case.name
    );
    insta::assert_snapshot!(format!("pty_{}", case.name), transcript);
}

/// With stdin not a terminal the port fails at once and reads nothing, even when input waits.
fn fail_closed(stdin: &str, input: &[u8]) {
    let exe = std::env::current_exe().expect("current exe");
    let card = json!({"args": db_args(), "timeout_ms": 600_000}).to_string();
    let mut child = Command::new(exe)
        .env(CARD_ENV, card)
        .stdin(if stdin == "null" {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the card program");
    if let Some(mut i) = child.stdin.take() {
        i.write_all(input).expect("write input");
    }
    let out = child.wait_with_output().expect("card program output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        outcome_of(&stdout),
        json!({"unavailable": "stdin is not a terminal, so nobody can answer here"}),
        "stdin {stdin}"
    );
    assert!(
        out.stderr.is_empty(),
        "no card is drawn: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Text a model wrote reaches the person's terminal as text: a window title, a clear screen, an
/// OSC 52 clipboard write and a bidi override in the question, context, labels and descriptions
/// are shown escaped (they were written raw).
fn hostile_text_is_escaped() {
    let evil = "\u{1b}]0;title\u{7}\u{1b}[2J\u{1b}]52;c;aGVsbG8=\u{7}\u{202e}\u{9b}";
    let args = json!({
        "question": format!("Deploy? {evil}"),
        "context": format!("line one\n\tindented {evil}"),
        "options": [{"label": format!("yes{evil}"), "description": evil}, {"label": "no"}],
    });
    let transcript = on_pty(&args, 600_000, &[("> ", "1\n")]);
    assert_eq!(
        outcome_of(&transcript),
        json!({"answer": {"selected": [format!("yes{evil}")], "text": null}}),
        "{transcript}"
    );
    // What the port wrote; the test program's own OUTCOME line (JSON) follows it.
    let card = transcript.split("OUTCOME").next().unwrap_or_default();
    for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}'] {
        assert!(
            !card.contains(raw),
            "raw {raw:?} reached the terminal:\n{transcript:?}"
        );
    }
    assert!(
        transcript.contains(
            "| Deploy? \\x1b]0;title\\x07\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07\\u{202e}\\u{9b}"
        ),
        "{transcript}"
    );
    assert!(
        transcript.contains("|   line one\n|   \tindented \\x1b]0;"),
        "{transcript}"
    );
    assert!(transcript.contains("  -> yes\\x1b]0;"), "{transcript}");
}

fn main() {
    if let Ok(spec) = std::env::var(CARD_ENV) {
        child(&spec);
        return;
    }
    let ten_minutes = 600_000;
    let cases = vec![
        Case {
            name: "answer",
            args: db_args(),
            timeout_ms: ten_minutes,
            steps: vec![("> ", "2\n")],
            outcome: json!({"answer": {"selected": ["SQLite"], "text": null}}),
        },
        Case {
            name: "retry_then_answer",
            args: db_args(),
            timeout_ms: ten_minutes,
            steps: vec![("> ", "9\n"), ("> ", "1\n")],
            outcome: json!({"answer": {"selected": ["Postgres"], "text": null}}),
        },
        Case {
            name: "multi_select",
            args: json!({"question": "Which checks should run before the release?", "options": [
                {"label": "unit tests"}, {"label": "lint", "description": "clippy with -D warnings"},
                {"label": "benchmarks", "description": "slow: about 20 minutes"}], "multi_select": true}),
            timeout_ms: ten_minutes,
            steps: vec![("> ", "3, 1\n")],
            outcome: json!({"answer": {"selected": ["unit tests", "benchmarks"], "text": null}}),
        },
        Case {
            name: "free_text",
            args: db_args(),
            timeout_ms: ten_minutes,
            steps: vec![("> ", "DuckDB, embedded in the service\n")],
            outcome: json!({"answer": {"selected": [], "text": "DuckDB, embedded in the service"}}),
        },
        Case {
            name: "skip",
            args: db_args(),
            timeout_ms: ten_minutes,
            steps: vec![("> ", "s\n")],
            outcome: json!("skip"),
        },
        Case {
            name: "timeout",
            args: json!({"question": "Deploy now?", "options": [{"label": "yes"}, {"label": "no"}]}),
            timeout_ms: 2000,
            steps: vec![],
            outcome: json!("timeout"),
        },
    ];
    let mut failed = Vec::new();
    let mut run = |name: &str, f: &dyn Fn()| {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(name.to_string());
        }
    };
    for case in &cases {
        run(&format!("pty_{}", case.name), &|| check(case));
    }
    run("pty_hostile_text_is_escaped", &hostile_text_is_escaped);
    run("no_tty_stdin_null", &|| fail_closed("null", b""));
    run("no_tty_stdin_pipe_with_input", &|| {
        fail_closed("pipe", b"1\n")
    });
    let total = cases.len() + 3;
    println!("{} passed, {} failed", total - failed.len(), failed.len());
    if !failed.is_empty() {
        eprintln!("failed: {}", failed.join(", "));
        std::process::exit(1);
    }
}
