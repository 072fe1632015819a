//! `cargo run --release -p agent-lsp --example lsp-bench [-- SERVER...]`
//!
//! For each server (default: pyright, gopls, rust-analyzer, clangd, typescript-language-server),
//! in the same run and on the same fixture:
//!
//! - hover and definition latency through our `lsp` tool (registry call path included) against a
//!   minimal raw LSP client talking to a second instance of the same server; the goal is ≤ 1 ms
//!   median added;
//! - diagnostics on write: a `write` through the registry (with our wrapper syncing the file and
//!   waiting for fresh diagnostics) against the raw client's didChange → publishDiagnostics time
//!   of the same version; the goal is ≤ 20 ms median added.
//!
//! Needs the servers on PATH (as `cargo xtask test` sets it up).
#![allow(clippy::unwrap_used)] // a benchmark: a failed unwrap is a failed run

use agent_tier::{RunInfo, Surface};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const N: usize = 40;

struct Fixture {
    dir: &'static str,
    language: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    file: &'static str,
    line: u32,
    symbol: &'static str,
    language_id: &'static str,
    good: &'static str,
    bad: &'static str,
    write_file: &'static str,
    /// initializationOptions given to both clients (rust-analyzer: no cargo check on save, so
    /// both measure the server's own analysis).
    init: Option<&'static str>,
}

fn fixture_for(server: &str) -> Fixture {
    match server {
        "gopls" => Fixture {
            dir: "go",
            language: "go",
            program: "gopls",
            args: &[],
            file: "main.go",
            line: 6,
            symbol: "MakeGreeter",
            language_id: "go",
            good: "package main\n\nvar n = 1\n",
            bad: "package main\n\nvar n = undefinedThingXyz\n",
            write_file: "extra.go",
            init: None,
        },
        "rust-analyzer" => Fixture {
            dir: "rust",
            language: "rust",
            program: "rust-analyzer",
            args: &[],
            file: "src/lib.rs",
            line: 16,
            symbol: "Greeter",
            language_id: "rust",
            good: "pub fn f() -> i32 {\n    1\n}\n",
            bad: "pub fn f() -> i32 {\n    1\n}\n\npub fn g() {\n    f(1);\n}\n",
            write_file: "src/extra.rs",
            init: Some(r#"{"checkOnSave": false, "cachePriming": {"enable": false}}"#),
        },
        "clangd" => Fixture {
            dir: "c",
            language: "c",
            program: "clangd",
            args: &[],
            file: "main.c",
            line: 5,
            symbol: "make_greeter",
            language_id: "c",
            good: "int f(void) { return 1; }\n",
            bad: "int f(void) { return undefined_thing_xyz; }\n",
            write_file: "extra.c",
            init: None,
        },
        "typescript-language-server" => Fixture {
            dir: "ts",
            language: "typescript",
            program: "typescript-language-server",
            args: &["--stdio"],
            file: "src/main.ts",
            line: 4,
            symbol: "makeGreeter",
            language_id: "typescript",
            good: "export const n: number = 1;\n",
            bad: "export const n: number = undefinedThingXyz;\n",
            write_file: "src/extra.ts",
            init: None,
        },
        _ => Fixture {
            dir: "python",
            language: "python",
            program: "pyright-langserver",
            args: &["--stdio"],
            file: "main.py",
            line: 4,
            symbol: "make_greeter",
            language_id: "python",
            good: "value = 1\n",
            bad: "value = undefined_thing_xyz\n",
            write_file: "extra.py",
            init: None,
        },
    }
}

use agent_testkit::raw_lsp::{Raw, uri};

// ---- our side --------------------------------------------------------------------------------

// The host's own `write` and the fixture copy come from the test kit.

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

async fn bench(server: &str) {
    let fx = fixture_for(server);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    agent_testkit::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fx.dir),
        &root,
    );
    let file = root.join(fx.file);
    let text = std::fs::read_to_string(&file).unwrap();
    let line_text = text.lines().nth(fx.line as usize - 1).unwrap().to_string();
    let byte = line_text.find(fx.symbol).unwrap();
    // Debian names clangd by its version.
    let names: &[&str] = if fx.program == "clangd" {
        &[
            "clangd",
            "clangd-19",
            "clangd-18",
            "clangd-17",
            "clangd-16",
            "clangd-15",
        ]
    } else {
        &[fx.program]
    };
    let program: PathBuf = agent_tier::process::resolve_binary(&root, &[], names)
        .unwrap_or_else(|| panic!("{} not on PATH", fx.program));

    // Ours.
    let reg = agent_tier::Registry::new(RunInfo {
        root: root.clone(),
        ..Default::default()
    });
    reg.register(agent_testkit::FakeWrite);
    let mut cfg = agent_lsp::LspConfig {
        skip_config_files: true,
        ..Default::default()
    };
    cfg.overrides
        .languages
        .insert(fx.language.into(), vec![server.into()]);
    let init: Option<Value> = fx.init.map(|j| serde_json::from_str(j).unwrap());
    if let Some(init) = &init {
        cfg.overrides.servers.insert(
            server.to_string(),
            agent_lsp::ServerPatch {
                init_options: Some(init.clone()),
                ..Default::default()
            },
        );
    }
    agent_lsp::attach(&reg, cfg);
    let call =
        |op: &str| json!({"operation": op, "file": fx.file, "line": fx.line, "symbol": fx.symbol});
    for _ in 0..3 {
        let out = reg.call("lsp", call("definition"), Surface::Full).await;
        assert!(!out.is_error, "{}", out.text);
    }

    // The peer.
    let mut raw = Raw::start(&program, fx.args, &root).await;
    let kinds: Vec<u32> = (1..=26).collect();
    raw.request(
        "initialize",
        json!({"processId": std::process::id(), "rootUri": uri(&root),
               "initializationOptions": init,
               "workspaceFolders": [{"uri": uri(&root), "name": "root"}],
               "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                                "workspace": {"configuration": true, "symbol": {"symbolKind": {"valueSet": kinds}}},
                                "textDocument": {"hover": {"contentFormat": ["markdown"]},
                                                 "definition": {"linkSupport": true},
                                                 "publishDiagnostics": {"versionSupport": true}}}}),
    )
    .await;
    raw.notify("initialized", json!({})).await;
    raw.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(&file), "languageId": fx.language_id, "version": 1, "text": text}}),
    )
    .await;
    let character: usize = line_text[..byte].chars().map(char::len_utf16).sum();
    let pos = json!({"textDocument": {"uri": uri(&file)}, "position": {"line": fx.line - 1, "character": character}});
    // Warm up until it answers.
    for _ in 0..100 {
        let r = raw.request("textDocument/definition", pos.clone()).await;
        if r.get("result")
            .is_some_and(|v| !v.is_null() && v != &json!([]))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    println!("\n## {server}");
    println!("| operation | ours (median) | raw client (median) | added | ratio |");
    println!("|---|---|---|---|---|");
    for (op, method) in [
        ("hover", "textDocument/hover"),
        ("definition", "textDocument/definition"),
    ] {
        let mut ours = Vec::new();
        let mut peer = Vec::new();
        for _ in 0..N {
            let t = Instant::now();
            let out = reg.call("lsp", call(op), Surface::Full).await;
            ours.push(t.elapsed());
            assert!(!out.is_error, "{}", out.text);
            let t = Instant::now();
            raw.request(method, pos.clone()).await;
            peer.push(t.elapsed());
        }
        let (o, p) = (median(ours), median(peer));
        println!(
            "| {op} | {} | {} | {} | {:.2}x |",
            ms(o),
            ms(p),
            ms(o.saturating_sub(p)),
            o.as_secs_f64() / p.as_secs_f64()
        );
    }

    // Diagnostics on write: ours = the whole wrapped write; peer = didChange → publish.
    let wf = root.join(fx.write_file);
    std::fs::write(&wf, fx.good).unwrap();
    let mut ours = Vec::new();
    let mut peer = Vec::new();
    raw.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(&wf), "languageId": fx.language_id, "version": 1, "text": fx.good}}),
    )
    .await;
    let wuri = uri(&wf);
    for i in 0..10 {
        let content = if i % 2 == 0 { fx.bad } else { fx.good };
        let t = Instant::now();
        let out = reg
            .call(
                "write",
                json!({"path": fx.write_file, "content": content}),
                Surface::Full,
            )
            .await;
        ours.push(t.elapsed());
        assert!(!out.is_error, "{}", out.text);
        let version = i + 2;
        let t = Instant::now();
        raw.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": wuri, "version": version}, "contentChanges": [{"text": content}]}),
        )
        .await;
        raw.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": wuri}}),
        )
        .await;
        let w = wuri.clone();
        // The server's publish for this content: its version, or (unversioned) the first
        // publish whose findings match it (the error for the bad content, none for the good).
        let bad = content == fx.bad;
        raw.until(move |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == w.as_str()
                && (m["params"]["version"] == version
                    || (m["params"]["version"].is_null()
                        && m["params"]["diagnostics"]
                            .as_array()
                            .is_some_and(|d| d.is_empty() != bad)))
        })
        .await;
        peer.push(t.elapsed());
    }
    let (o, p) = (median(ours), median(peer));
    println!(
        "| diagnostics on write | {} | {} (server's publish) | {} | {:.2}x |",
        ms(o),
        ms(p),
        ms(o.saturating_sub(p)),
        o.as_secs_f64() / p.as_secs_f64()
    );
    if server != "typescript-language-server" {
        return;
    }
    // typescript-language-server's complete answer for the content (issue 26): didChange,
    // didSave, then tsserver's syntactic and semantic diagnostics asked synchronously, as the
    // wrapper now asks them.
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    for i in 0..10 {
        let content = if i % 2 == 0 { fx.bad } else { fx.good };
        let t = Instant::now();
        let out = reg
            .call(
                "write",
                json!({"path": fx.write_file, "content": content}),
                Surface::Full,
            )
            .await;
        ours.push(t.elapsed());
        assert!(!out.is_error, "{}", out.text);
        let version = i + 12;
        let t = Instant::now();
        raw.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": wuri, "version": version}, "contentChanges": [{"text": content}]}),
        )
        .await;
        raw.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": wuri}}),
        )
        .await;
        let mut found = 0;
        for request in ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"] {
            let r = raw
                .request(
                    "workspace/executeCommand",
                    json!({"command": "typescript.tsserverRequest", "arguments": [request, {"file": wuri}]}),
                )
                .await;
            found += r["result"]["body"].as_array().map_or(0, Vec::len);
        }
        assert_eq!(
            found > 0,
            content == fx.bad,
            "tsserver's answer for {content:?}"
        );
        peer.push(t.elapsed());
    }
    let (o, p) = (median(ours), median(peer));
    println!(
        "| diagnostics on write | {} | {} (tsserver's sync answer) | {} | {:.2}x |",
        ms(o),
        ms(p),
        ms(o.saturating_sub(p)),
        o.as_secs_f64() / p.as_secs_f64()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut servers: Vec<String> = std::env::args().skip(1).collect();
    if servers.is_empty() {
        servers = [
            "pyright",
            "gopls",
            "rust-analyzer",
            "clangd",
            "typescript-language-server",
        ]
        .map(String::from)
        .to_vec();
    }
    println!(
        "# agent-lsp bench: our `lsp` tool vs a raw LSP client, same server, same run ({N} calls each)"
    );
    for s in servers {
        bench(&s).await;
    }
}
