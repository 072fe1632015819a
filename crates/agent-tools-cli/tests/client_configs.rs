//! The README's client configs, checked: every snippet under a `<!-- client-config: CLIENT
//! TRANSPORT -->` marker is parsed as its client reads it (JSON, TOML by Python's tomllib, a
//! `claude mcp add` line by shell words), its shape checked against the client's documented
//! keys, and the command it names is run against a scratch root — `uvx` resolving only to the
//! wheel `cargo xtask dist` built, `npx` to the packed npm tarballs installed in the scratch
//! project — and completes an MCP session with the official Python SDK. The HTTP entries are
//! sent, with the token put where each client puts it, to the README's own `serve --listen`
//! line started from the wheel. Claude Code, Codex CLI, Cursor, VS Code, Zed and Gemini CLI each
//! have a stdio and a Streamable HTTP entry.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod dist_common;

use dist_common::{
    Dist, client_venv, npm_install, python_session_http, python_session_stdio, scratch_root,
    tools_path, uv_env, workspace,
};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

const CLIENTS: &[&str] = &["claude-code", "codex", "cursor", "vscode", "zed", "gemini"];
const TOKEN: &str = "client-config-test-token";

/// (client, transport, fence language, body) of every marked snippet in the README.
fn snippets() -> Vec<(String, String, String, String)> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line
            .trim()
            .strip_prefix("<!-- client-config:")
            .and_then(|r| r.strip_suffix("-->"))
        else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (client, transport) = (words.next().unwrap(), words.next().unwrap());
        let fence = lines.next().unwrap_or_default();
        let lang = fence
            .strip_prefix("```")
            .unwrap_or_else(|| panic!("no code block right after the marker `{line}`"));
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push((
            client.to_string(),
            transport.to_string(),
            lang.to_string(),
            body.join("\n"),
        ));
    }
    out
}

fn snippets_of(client: &str, transport: &str) -> Vec<(String, String)> {
    snippets()
        .into_iter()
        .filter(|(c, t, ..)| c == client && t == transport)
        .map(|(_, _, lang, body)| (lang, body))
        .collect()
}

/// A snippet as its client reads it: JSON, or TOML read by Python's tomllib (3.11+).
fn parse(lang: &str, body: &str) -> Value {
    match lang {
        "json" => serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}:\n{body}")),
        "toml" => {
            let mut child = Command::new(client_venv().join("bin/python"))
                .args([
                    "-c",
                    "import json, sys, tomllib; print(json.dumps(tomllib.load(sys.stdin.buffer)))",
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), body.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "not TOML:\n{body}");
            serde_json::from_slice(&out.stdout).unwrap()
        }
        other => panic!("no parser for a `{other}` snippet"),
    }
}

/// The `agent-tools` entry of a parsed config, under the key each client documents.
fn entry(client: &str, config: &Value) -> Value {
    let key = match client {
        "claude-code" | "cursor" | "gemini" => "mcpServers",
        "vscode" => "servers",
        "zed" => "context_servers",
        "codex" => "mcp_servers",
        other => panic!("unknown client {other}"),
    };
    let e = config[key]["agent-tools"].clone();
    assert!(e.is_object(), "{client}: no {key}.agent-tools in {config}");
    e
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// command and args of a stdio snippet.
fn stdio_command(client: &str, lang: &str, body: &str) -> (String, Vec<String>) {
    if lang == "sh" {
        // claude mcp add NAME -- COMMAND ARGS...
        let words = shell_words::split(body.trim()).unwrap();
        assert_eq!(
            &words[..4],
            ["claude", "mcp", "add", "agent-tools"],
            "{body}"
        );
        assert_eq!(words[4], "--", "{body}");
        return (words[5].clone(), words[6..].to_vec());
    }
    let e = entry(client, &parse(lang, body));
    match client {
        "vscode" => assert_eq!(e["type"], "stdio", "VS Code needs type stdio: {e}"),
        "claude-code" => assert!(
            e.get("type").is_none() || e["type"] == "stdio",
            "claude-code: {e}"
        ),
        _ => {}
    }
    (
        e["command"].as_str().unwrap().to_string(),
        strings(&e["args"]),
    )
}

/// url and headers of an HTTP snippet, with the token where each client documents it.
fn http_target(client: &str, lang: &str, body: &str) -> (String, Vec<(String, String)>) {
    let e = entry(client, &parse(lang, body));
    let url_key = match client {
        // Gemini CLI: `httpUrl` is Streamable HTTP; its `url` is the SSE transport.
        "gemini" => "httpUrl",
        _ => "url",
    };
    if client == "claude-code" || client == "vscode" {
        assert_eq!(e["type"], "http", "{client} needs type http: {e}");
    }
    let url = e[url_key]
        .as_str()
        .unwrap_or_else(|| panic!("{client}: no {url_key} in {e}"))
        .to_string();
    let mut headers = Vec::new();
    if client == "codex" {
        // Codex sends `Authorization: Bearer <the variable's value>`.
        assert_eq!(e["bearer_token_env_var"], "AGENT_TOOLS_TOKEN", "{e}");
        headers.push(("Authorization".to_string(), format!("Bearer {TOKEN}")));
    } else {
        let placeholder = match client {
            "claude-code" => "${AGENT_TOOLS_TOKEN}",
            "cursor" => "${env:AGENT_TOOLS_TOKEN}",
            "vscode" => "${input:agent-tools-token}",
            "gemini" => "$AGENT_TOOLS_TOKEN",
            "zed" => "<token>",
            other => panic!("unknown client {other}"),
        };
        for (k, v) in e["headers"].as_object().unwrap() {
            let v = v.as_str().unwrap();
            assert!(
                v.contains(placeholder),
                "{client}: {k}: {v} lacks {placeholder}"
            );
            headers.push((k.clone(), v.replace(placeholder, TOKEN)));
        }
        if client == "vscode" {
            // ${input:ID} names a top-level input that prompts for the token and hides it.
            let config = parse(lang, body);
            assert!(
                config["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["id"] == "agent-tools-token" && i["password"] == true),
                "{config}"
            );
        }
    }
    (url, headers)
}

/// The scratch layout every command runs in: an npm project with the packed tarballs, and the
/// tools' root inside it (where npx finds the local package, as it would in a workspace).
struct Scratch {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    env: Vec<(String, String)>,
}

fn scratch(dist: &Dist) -> Scratch {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    npm_install(&project, &[dist.npm_launcher(), dist.npm_platform()]);
    let root = project.join("ws");
    scratch_root(&root);
    let env = uv_env(tmp.path(), dist);
    Scratch {
        _tmp: tmp,
        root,
        env,
    }
}

fn run_stdio(s: &Scratch, command: &str, args: &[String]) {
    assert!(
        matches!(command, "uvx" | "npx"),
        "the README's commands are uvx or npx: {command}"
    );
    let root = s.root.display().to_string();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("${workspaceFolder}", &root)
                .replace("/path/to/project", &root)
        })
        .collect();
    python_session_stdio(&s.root, command, &args, &s.env);
}

/// The README's `serve --listen` line, run from the wheel on a free port; returns the child and
/// its URL.
struct Listening(std::process::Child, String);

impl Drop for Listening {
    /// `uvx` runs the host as its child: killing `uvx` alone left `agent-tools serve --listen`
    /// running, reparented to init. The launcher leads its own process group, so the group —
    /// found by the launcher's pid, never by a name — is ended whole.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn listen(s: &Scratch) -> Listening {
    let [(_, body)] = snippets_of("server", "http").try_into().unwrap();
    let words = shell_words::split(body.trim()).unwrap();
    let (assign, cmd): (Vec<&String>, Vec<&String>) = words.iter().partition(|w| {
        w.split_once('=')
            .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    });
    assert_eq!(
        assign
            .iter()
            .map(|a| a.split_once('=').unwrap().0)
            .collect::<Vec<_>>(),
        ["AGENT_TOOLS_TOKEN"],
        "{body}"
    );
    let root = s.root.display().to_string();
    let args: Vec<String> = cmd[1..]
        .iter()
        .map(|a| {
            a.replace("127.0.0.1:8765", "127.0.0.1:0")
                .replace("/path/to/project", &root)
        })
        .collect();
    assert_eq!(cmd[0], "uvx", "{body}");
    let mut child = Command::new("uvx")
        .args(&args)
        .process_group(0)
        .current_dir(&s.root)
        .env("PATH", tools_path())
        .envs(s.env.iter().map(|(k, v)| (k, v)))
        .env("AGENT_TOOLS_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut server = Listening(child, String::new());
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended");
        if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
            server.1 = url.to_string();
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return server;
        }
    }
}

/// Every stdio and HTTP snippet of `client`, run.
fn check(client: &str) {
    let dist = Dist::load();
    let s = scratch(&dist);
    let stdio = snippets_of(client, "stdio");
    assert!(!stdio.is_empty(), "README has no stdio config for {client}");
    for (lang, body) in &stdio {
        let (command, args) = stdio_command(client, lang, body);
        run_stdio(&s, &command, &args);
    }
    let http = snippets_of(client, "http");
    assert!(
        !http.is_empty(),
        "README has no Streamable HTTP config for {client}"
    );
    let server = listen(&s);
    for (lang, body) in &http {
        let (url, headers) = http_target(client, lang, body);
        assert_eq!(url, "http://127.0.0.1:8765/mcp", "{client}");
        let url = url.replace("http://127.0.0.1:8765/mcp", &server.1);
        python_session_http(&url, &headers);
    }
}

#[test]
fn every_marked_snippet_names_a_known_client_and_parses() {
    let all = snippets();
    for (client, transport, lang, body) in &all {
        assert!(
            CLIENTS.contains(&client.as_str()) || client == "server",
            "unknown client `{client}`"
        );
        assert!(
            matches!(transport.as_str(), "stdio" | "http"),
            "{transport}"
        );
        if lang != "sh" {
            parse(lang, body);
        }
    }
    for c in CLIENTS {
        for t in ["stdio", "http"] {
            assert!(
                all.iter().any(|(cl, tr, ..)| cl == c && tr == t),
                "README has no {t} config for {c}"
            );
        }
    }
}

#[test]
fn claude_code() {
    check("claude-code");
}

#[test]
fn codex_cli() {
    check("codex");
}

#[test]
fn cursor() {
    check("cursor");
}

#[test]
fn vscode() {
    check("vscode");
}

#[test]
fn zed() {
    check("zed");
}

#[test]
fn gemini_cli() {
    check("gemini");
}
