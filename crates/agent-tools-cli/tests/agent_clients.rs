//! Issue 38, the model's view: `agent-tools serve` behind the agent clients people run —
//! Claude Code, Codex CLI and Gemini CLI (npm, pinned by `cargo xtask setup`) — each headless
//! against a stand-in model on loopback (`tests/clients/agents/standin_model.py`: the Anthropic
//! Messages, OpenAI Responses and Gemini APIs with streaming) that plays one tool call per turn
//! and records every request the client sends. `run_agent.py` runs one client and reports, per
//! call, exactly what the client put in its next request to the model. The assertions are on
//! that: a file's lines, the grep and glob hits, the matches, the locations with their line
//! text, the hover, the rename, the new diagnostic of an edit, the patch, a staged rewrite and
//! its acceptance, a cell's value and its plot (as an image), and a debugger stop with its
//! locals — over stdio and over Streamable HTTP with a bearer token made by the README's token
//! step, for each client, each
//! configured with the README's own entry for it (its command, or its URL, pointed at the binary
//! under test). Also: the server's instructions reach the model, and our tools are declared to it.
//! What each client does with content, structured content and images is in
//! `tests/clients/agents/FINDINGS.md` and docs/decisions.md.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/agents")
}

/// The venv `cargo xtask setup` fills: the kernel's matplotlib and debugpy come from it.
fn venv() -> PathBuf {
    let venv = std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"));
    assert!(
        venv.join("bin/python").exists(),
        "{} has no python: run `cargo xtask setup`",
        venv.display()
    );
    venv
}

const APP: &str = "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\ndef main() -> None:\n    message = greet(\"x\")\n    print(message)\n\n\nif __name__ == \"__main__\":\n    main()\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "hello from the readme\nsecond line\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(venv(), dir.path().join(".venv")).unwrap();
    dir
}

/// One call of the script and what the model must have been sent for it.
struct Step {
    tool: &'static str,
    args: Value,
    /// Each must appear in the text the client passed on.
    expect: &'static [&'static str],
    /// The client passed an image on.
    image: bool,
}

/// The script for `client`: every family, in an order where each call's answer is known.
fn steps(client: &str) -> Vec<Step> {
    let step = |tool, args, expect| Step {
        tool,
        args,
        expect,
        image: false,
    };
    let mut steps = vec![
        step(
            "read",
            json!({"path": "README.md"}),
            &["1| hello from the readme"],
        ),
        // An error reads as one: its text reaches the model (marked as an error where the client
        // marks errors: Claude Code).
        step(
            "read",
            json!({"path": "missing.txt"}),
            &["`missing.txt` does not exist under the workspace root"],
        ),
        step(
            "grep",
            json!({"pattern": "second"}),
            &["README.md:2: second line"],
        ),
        step("glob", json!({"pattern": "*.py"}), &["app.py"]),
        step(
            "ast_grep",
            json!({"pattern": "greet($A)", "language": "python"}),
            &["app.py:6", "greet(\\\"x\\\")"],
        ),
        step(
            "lsp",
            json!({"operation": "references", "path": "app.py", "symbol": "greet"}),
            &["message = greet(\\\"x\\\")"],
        ),
        step(
            "lsp",
            json!({"operation": "hover", "path": "app.py", "symbol": "greet", "line": 1}),
            &["(name: str) -> str"],
        ),
        step(
            "lsp_rename",
            json!({"symbol": "greet", "new_name": "welcome", "path": "app.py", "line": 1}),
            &["welcome", "app.py"],
        ),
        step(
            "edit",
            json!({"path": "app.py", "old_string": "return \"hi \" + name", "new_string": "return 42"}),
            &["new problems", "is not assignable to return type"],
        ),
        step(
            "lsp",
            json!({"operation": "diagnostics", "path": "app.py"}),
            &["app.py:2", "is not assignable to return type"],
        ),
        step(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: notes.txt\n+patched line\n*** End Patch\n"}),
            &["notes.txt"],
        ),
        step(
            "ast_edit",
            json!({"pattern": "print($A)", "rewrite": "print($A, flush=True)", "language": "python"}),
            &["edit_1", "flush=True"],
        ),
        step(
            "resolve",
            json!({"edit_id": "edit_1", "operation": "accept"}),
            &["app.py"],
        ),
        step(
            "eval",
            json!({"description": "multiply two numbers in the python kernel", "code": "6 * 7"}),
            &["42"],
        ),
        Step {
            tool: "eval",
            args: json!({
                "description": "draw a small line plot with matplotlib",
                "code": "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
            }),
            expect: &[],
            image: true,
        },
        step(
            "debug",
            json!({"operation": "breakpoints", "path": "app.py", "lines": [2]}),
            &["app.py"],
        ),
        step(
            "debug",
            json!({"operation": "launch", "program": "app.py"}),
            &["app.py:2", "name", "'x'"],
        ),
        step(
            "vibe_spawn",
            json!({"brief": "say you finished", "label": "helper"}),
            &["w1"],
        ),
        step(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_s": 60}),
            &["finished-the-brief"],
        ),
    ];
    // Of the three, only Codex declares elicitation (measured: Claude Code 2.1.332 in `-p` and
    // Gemini CLI 0.61.0 do not), so only Codex is served `ask_user`; `codex exec` declines every
    // elicitation, and the model must read that as no answer, not as a choice.
    if client == "codex" {
        steps.push(step(
            "ask_user",
            json!({"question": "Which database?", "options": ["postgres", "sqlite"]}),
            &[
                "declined to answer",
                "Proceed under an explicitly stated assumption",
            ],
        ));
    }
    steps
}

/// The fast tier's worker for `vibe_spawn`: reads its brief, answers.
fn worker_file(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("worker.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\ncat >/dev/null\necho finished-the-brief\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn script_file(dir: &Path, steps: &[Step]) -> PathBuf {
    let mut turns: Vec<Value> = steps
        .iter()
        .map(|s| json!({"tool": s.tool, "args": s.args.clone()}))
        .collect();
    turns.push(json!({"text": "Done."}));
    let path = dir.join("script.json");
    std::fs::write(&path, serde_json::to_string_pretty(&turns).unwrap()).unwrap();
    path
}

/// The README's client-config snippet for `client` (its marker's name) over `transport`, in a
/// language the harness reads (JSON or TOML; Claude Code's `claude mcp add` line is the same
/// entry as its JSON one): (language, body).
fn readme_snippet(client: &str, transport: &str) -> (String, String) {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let marker = format!("<!-- client-config: {client} {transport} -->");
    for (at, _) in readme.match_indices(&marker) {
        let rest = &readme[at + marker.len()..];
        let fence = rest.trim_start();
        let Some(open) = fence.strip_prefix("```") else {
            continue;
        };
        let (lang, body) = open.split_once('\n').unwrap();
        let body = &body[..body.find("```").unwrap()];
        if lang == "json" || lang == "toml" {
            return (lang.to_string(), body.to_string());
        }
    }
    panic!("the README has no JSON or TOML snippet marked `{marker}`");
}

/// Run the README's token step (the `sh` block after `<!-- token-step -->`) with `home` as
/// HOME; the token file it made, checked: 0600, 64 hex digits.
fn readme_token_step(home: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let after = &readme[readme
        .find("<!-- token-step -->")
        .expect("the README's token step")..];
    let body = after
        .split_once("```sh\n")
        .and_then(|(_, b)| b.split_once("```"))
        .map(|(b, _)| b)
        .expect("a sh block after the token-step marker");
    let out = Command::new("sh")
        .args(["-c", body])
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{body}: {out:?}");
    let file = home.join(".config/agent-tools/token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    let token = std::fs::read_to_string(&file).unwrap();
    assert!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token:?}"
    );
    file
}

/// `serve --listen 127.0.0.1:0` with a token file; the URL it prints.
struct Listening {
    child: Child,
    url: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(root: &Path, token_file: &Path, worker: &Path) -> Listening {
    let mut child = Command::new(BIN)
        .args(["serve", "--vibe", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(token_file)
        .arg("--root")
        .arg(root)
        .env("AGENT_TOOLS_VIBE_FAST", worker)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "serve exited");
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_string();
        }
    };
    // Keep draining stderr so the host never blocks on it.
    std::thread::spawn(move || for _ in err.lines() {});
    Listening { child, url }
}

fn run_client(client: &str, http: bool) {
    let bin_dir = agent_testkit::require(match client {
        "claude" => "claude",
        "codex" => "codex",
        _ => "gemini",
    })
    .parent()
    .unwrap()
    .to_path_buf();
    let python = agent_testkit::require("python3");
    let ws = workspace();
    let scratch = tempfile::tempdir().unwrap();
    let steps = steps(client);
    let script = script_file(scratch.path(), &steps);
    let worker = worker_file(scratch.path());
    // The README's own entry for this client and transport, its command or URL pointed at the
    // binary under test.
    let (lang, snippet) = readme_snippet(
        if client == "claude" {
            "claude-code"
        } else {
            client
        },
        if http { "http" } else { "stdio" },
    );
    let entry = scratch.path().join(format!("entry.{lang}"));
    std::fs::write(&entry, snippet).unwrap();
    let mut cmd = Command::new(python);
    cmd.arg(agents_dir().join("run_agent.py"))
        .args(["--client", client, "--script"])
        .arg(&script)
        .arg("--workdir")
        .arg(ws.path())
        .arg("--bin-dir")
        .arg(&bin_dir)
        .args(["--timeout", "420", "--entry-lang", &lang, "--entry"])
        .arg(&entry);
    let _server = if http {
        // The README's token step, run as pasted in a scratch home: the file it makes (0600)
        // is the token the host reads and the client sends.
        let token_file = readme_token_step(scratch.path());
        let token = std::fs::read_to_string(&token_file).unwrap();
        let server = listen(ws.path(), &token_file, &worker);
        cmd.args([
            "--transport",
            "http",
            "--url",
            &server.url,
            "--token",
            &token,
        ]);
        Some(server)
    } else {
        // Every family is served (the README's stdio entries leave the file tools out for
        // these clients; `own_edits_*` below runs that entry as it is), vibe mode on.
        let server_cmd = shell_words::join([
            "env",
            &format!("AGENT_TOOLS_VIBE_FAST={}", worker.display()),
            BIN,
            "serve",
            "--vibe",
            "--root",
            &ws.path().display().to_string(),
        ]);
        cmd.args(["--transport", "stdio", "--server-cmd", &server_cmd]);
        None
    };
    let report = report_of(&mut cmd);
    let who = format!(
        "{client} {} over {}",
        report["version"],
        if http { "HTTP" } else { "stdio" }
    );
    let brief = || {
        format!(
            "exit {} timed_out {}\nstderr: {}\nstdout: {}",
            report["exit_code"], report["timed_out"], report["stderr_tail"], report["stdout_tail"]
        )
    };
    assert_eq!(report["timed_out"], false, "{who}: {}", brief());
    let declared: Vec<&str> = report["tools_declared"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for tool in [
        "read",
        "grep",
        "glob",
        "ast_grep",
        "lsp",
        "eval",
        "debug",
        "apply_patch",
    ] {
        assert!(
            report["mcp_tools"][tool].is_string(),
            "{who}: `{tool}` was not declared to the model; declared: {declared:?}\n{}",
            brief()
        );
    }
    // Each tool's description reaches the model whole (the served one is in what the model
    // was given).
    let lengths = report["description_lengths"].as_object().unwrap();
    assert!(!lengths.is_empty(), "{who}: no descriptions recorded");
    for (tool, l) in lengths {
        let (seen, served) = (l[0].as_u64().unwrap(), l[1].as_u64().unwrap());
        assert!(
            served > 0 && seen >= served,
            "{who}: `{tool}`'s description was clipped: {seen} of {served} characters reached the model"
        );
    }
    // `ask_user` is offered exactly to a client that can elicit.
    let asks = declared.iter().any(|d| d.ends_with("ask_user"));
    assert_eq!(
        asks,
        client == "codex",
        "{who}: ask_user declared: {asks}; declared: {declared:?}"
    );
    assert_eq!(
        report["instructions_seen"], true,
        "{who}: the server's instructions did not reach the model: {}",
        report["instructions_lines"]
    );
    let results = report["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        steps.len(),
        "{who}: the model got {} of {} results\n{}",
        results.len(),
        steps.len(),
        brief()
    );
    for (i, (step, got)) in steps.iter().zip(results).enumerate() {
        let text = got["model_saw_text"].as_str().unwrap_or("");
        assert_eq!(got["tool"], step.tool, "{who}: turn {i}");
        for want in step.expect {
            // The clients differ in how they quote a result (JSON-escaped inside structured
            // content, or plain): accept both spellings of a quote.
            let plain = want.replace("\\\"", "\"");
            assert!(
                text.contains(want) || text.contains(&plain),
                "{who}: turn {i} ({} {}): the model was not sent `{plain}`; it was sent:\n{text}",
                step.tool,
                step.args
            );
        }
        if step.expect.iter().any(|e| e.contains("does not exist")) && client == "claude" {
            assert_eq!(
                got["is_error_marked"], true,
                "{who}: turn {i}: the error was not marked as one: {}",
                got["raw"]
            );
        }
        if step.image {
            let saw_image = got["model_saw"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p["image"] == "image/png"));
            assert!(
                saw_image,
                "{who}: turn {i}: the plot did not reach the model as an image: {}",
                got["model_saw"]
            );
        }
    }
}

/// Run `run_agent.py` as `cmd` says; its report.
fn report_of(cmd: &mut Command) -> Value {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "run_agent.py printed no report ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Claude Code headless with the README's stdio entry as it is (`--without files`; its command
/// pointed at the binary under test), its own `Read`, `Edit` and `Write` allowed, playing `turns`
/// in `ws`, with `settings` as its settings.json; the report.
fn claude_with_readme_entry(ws: &Path, turns: Value, settings: Option<&Path>) -> Value {
    let bin_dir = agent_testkit::require("claude")
        .parent()
        .unwrap()
        .to_path_buf();
    let python = agent_testkit::require("python3");
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("script.json");
    std::fs::write(&script, serde_json::to_string_pretty(&turns).unwrap()).unwrap();
    let (lang, snippet) = readme_snippet("claude-code", "stdio");
    assert!(snippet.contains("\"--without\", \"files\""), "{snippet}");
    let entry = scratch.path().join(format!("entry.{lang}"));
    std::fs::write(&entry, snippet).unwrap();
    let server_cmd = shell_words::join([BIN, "serve", "--root", &ws.display().to_string()]);
    let mut cmd = Command::new(python);
    cmd.arg(agents_dir().join("run_agent.py"))
        .args(["--client", "claude", "--script"])
        .arg(&script)
        .arg("--workdir")
        .arg(ws)
        .arg("--bin-dir")
        .arg(&bin_dir)
        .args(["--timeout", "420", "--entry-lang", &lang, "--entry"])
        .arg(&entry)
        .args(["--entry-args", "--allow-native", "Read,Edit,Write"])
        .args(["--transport", "stdio", "--server-cmd", &server_cmd]);
    if let Some(settings) = settings {
        cmd.arg("--claude-settings").arg(settings);
    }
    let report = report_of(&mut cmd);
    let declared: Vec<&str> = report["tools_declared"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        declared.iter().any(|d| d.ends_with("__ast_grep"))
            && !declared
                .iter()
                .any(|d| d.starts_with("mcp__") && d.ends_with("__read")),
        "--without files serves ast_grep and no read: {declared:?}"
    );
    report
}

/// What the model was sent as the result of turn `i`, quotes unescaped.
fn result_text(report: &Value, i: usize) -> String {
    report["results"][i]["model_saw_text"]
        .as_str()
        .unwrap_or("")
        .replace("\\\"", "\"")
        .replace("\\n", "\n")
}

const OUTSIDE: &str = "Changed outside agent-tools' write tools: `app.py`.";

/// Issue 38: the README's Claude Code entry as it is (`--without files`): the model edits
/// through Claude Code's own `Edit`, which our write wrapper never sees. The type error that edit
/// writes to a file a language server has open reaches the model in the answer of our next tool
/// call, as a new problem named as an outside change, and only once.
#[test]
fn claude_codes_own_edit_reaches_the_model_as_a_new_problem_once() {
    let ws = workspace();
    let app = ws.path().join("app.py").display().to_string();
    let report = claude_with_readme_entry(
        ws.path(),
        json!([
            {"tool": "lsp", "args": {"operation": "diagnostics", "path": "app.py"}},
            {"tool": "Read", "args": {"file_path": app}},
            {"tool": "Edit", "args": {"file_path": app, "old_string": "return \"hi \" + name", "new_string": "return 42"}},
            {"tool": "ast_grep", "args": {"pattern": "greet($A)", "language": "python"}},
            {"tool": "ast_grep", "args": {"pattern": "print($A)", "language": "python"}},
            {"text": "Done."},
        ]),
        None,
    );
    let who = format!("claude {} with the README's entry", report["version"]);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{who}: {results:#?}");
    assert!(
        std::fs::read_to_string(&app).unwrap().contains("return 42"),
        "{who}: Claude Code's Edit did not write: {}",
        result_text(&report, 2)
    );
    let after = result_text(&report, 3);
    for want in [
        OUTSIDE,
        "new problems",
        "app.py:2",
        "is not assignable to return type",
    ] {
        assert!(
            after.contains(want),
            "{who}: the answer after the Edit did not carry `{want}`:\n{after}"
        );
    }
    assert!(
        !result_text(&report, 4).contains("Changed outside"),
        "{who}: reported twice:\n{}",
        result_text(&report, 4)
    );
}

/// Issue 38: with the README's hook (`agent-tools hook claude-code` after Claude Code's own
/// `Edit`/`Write`), the problems an edit introduced reach the model right after that edit's
/// result — also in a file no language server had open — and not again with our next answer.
/// A `Write` that creates a file with an error is reported too (every problem of a new file is
/// new).
#[test]
fn the_readme_hook_hands_claude_codes_edit_problems_to_the_model_at_once() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let at = readme
        .find("<!-- claude-code-hook -->")
        .expect("the README's hook snippet");
    let body = readme[at..]
        .split_once("```json\n")
        .and_then(|(_, b)| b.split_once("```"))
        .map(|(b, _)| b)
        .unwrap();
    let hook_cmd = "uvx --from agent-tools-cli agent-tools";
    assert!(body.contains(hook_cmd), "{body}");
    let scratch = tempfile::tempdir().unwrap();
    let settings = scratch.path().join("settings.json");
    std::fs::write(&settings, body.replace(hook_cmd, BIN)).unwrap();
    let ws = workspace();
    let app = ws.path().join("app.py").display().to_string();
    let fresh = ws.path().join("fresh.py").display().to_string();
    let report = claude_with_readme_entry(
        ws.path(),
        json!([
            {"tool": "Read", "args": {"file_path": app}},
            {"tool": "Edit", "args": {"file_path": app, "old_string": "return \"hi \" + name", "new_string": "return 42"}},
            {"tool": "Write", "args": {"file_path": fresh, "content": "count: int = \"three\"\n"}},
            {"tool": "ast_grep", "args": {"pattern": "greet($A)", "language": "python"}},
            {"text": "Done."},
        ]),
        Some(&settings),
    );
    let who = format!(
        "claude {} with the README's entry and hook",
        report["version"]
    );
    let system: Vec<String> = report["system_texts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let after_edit = system
        .iter()
        .find(|t| t.contains("PostToolUse:Edit hook additional context"))
        .unwrap_or_else(|| panic!("{who}: no hook context after the Edit: {system:#?}"));
    for want in [
        OUTSIDE,
        "new problems",
        "app.py:2",
        "is not assignable to return type",
    ] {
        assert!(
            after_edit.contains(want),
            "{who}: the hook's context lacks `{want}`:\n{after_edit}"
        );
    }
    let after_write = system
        .iter()
        .find(|t| t.contains("PostToolUse:Write hook additional context"))
        .unwrap_or_else(|| panic!("{who}: no hook context after the Write: {system:#?}"));
    assert!(
        after_write.contains("fresh.py:1") && after_write.contains("is not assignable"),
        "{who}: {after_write}"
    );
    let next = result_text(&report, 3);
    assert!(
        !next.contains("Changed outside"),
        "{who}: reported again with the next answer:\n{next}"
    );
}

#[test]
fn claude_code_over_stdio() {
    run_client("claude", false);
}

#[test]
fn claude_code_over_http() {
    run_client("claude", true);
}

#[test]
fn codex_over_stdio() {
    run_client("codex", false);
}

#[test]
fn codex_over_http() {
    run_client("codex", true);
}

#[test]
fn gemini_cli_over_stdio() {
    run_client("gemini", false);
}

#[test]
fn gemini_cli_over_http() {
    run_client("gemini", true);
}
