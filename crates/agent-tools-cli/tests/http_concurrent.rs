//! `serve --listen` under load: 200 `read` calls in flight at once from 4 clients (each its own
//! MCP session over Streamable HTTP, `rmcp`'s own client), every one answered, none crossed —
//! each client reads 50 files of its own whose content names the client and the file, and every
//! answer must be the one its request asked for. Correctness only; `cargo xtask bench host`
//! measures the time.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");
const CLIENTS: usize = 4;
const PER_CLIENT: usize = 50;

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(root: &std::path::Path, token: &str) -> Server {
    // Held from the start: a failed assertion below still ends the host (drop kills its pid).
    let mut server = Server {
        child: Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--root"])
            .arg(root)
            .env("AGENT_TOOLS_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        url: String::new(),
    };
    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "serve ended before listening"
        );
        if let Some(url) = line.trim().strip_prefix("agent-tools serve: listening on ") {
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            server.url = url.to_string();
            return server;
        }
    }
}

/// The content of client `c`'s file `i`: it names both, and differs in length from its
/// neighbours so a mixed-up answer cannot pass.
fn content(c: usize, i: usize) -> String {
    format!("client {c} file {i} <{}>\n", "z".repeat(c * PER_CLIENT + i))
}

#[test]
fn two_hundred_concurrent_reads_from_four_clients_all_answered_none_crossed() {
    let dir = tempfile::tempdir().unwrap();
    for c in 0..CLIENTS {
        std::fs::create_dir_all(dir.path().join(format!("c{c}"))).unwrap();
        for i in 0..PER_CLIENT {
            std::fs::write(dir.path().join(format!("c{c}/f{i}.txt")), content(c, i)).unwrap();
        }
    }
    let server = start(dir.path(), "conc-token");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let answered = rt.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..CLIENTS {
            let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
                .auth_header("conc-token");
            clients.push(
                ().serve(StreamableHttpClientTransport::from_config(config))
                    .await
                    .unwrap(),
            );
        }
        // Every call is spawned before any is awaited: all 200 are in flight together.
        let mut calls = tokio::task::JoinSet::new();
        for (c, client) in clients.iter().enumerate() {
            for i in 0..PER_CLIENT {
                let peer = client.peer().clone();
                calls.spawn(async move {
                    let mut p = CallToolRequestParams::new("read".to_string());
                    p.arguments = serde_json::json!({"path": format!("c{c}/f{i}.txt")})
                        .as_object()
                        .cloned();
                    (c, i, peer.call_tool(p).await)
                });
            }
        }
        let mut answered = 0;
        while let Some(joined) = calls.join_next().await {
            let (c, i, result) = joined.unwrap();
            let result = result.unwrap_or_else(|e| panic!("client {c} file {i}: {e}"));
            let v = serde_json::to_value(&result).unwrap();
            assert_eq!(result.is_error, Some(false), "client {c} file {i}: {v}");
            let text = v["content"][0]["text"].as_str().unwrap();
            let want = format!("1| {}", content(c, i).trim_end());
            assert!(
                text.lines().next() == Some(want.as_str()),
                "client {c} file {i} got another answer: {text}"
            );
            assert_eq!(
                v["structuredContent"]["path"],
                format!("c{c}/f{i}.txt"),
                "{v}"
            );
            answered += 1;
        }
        for client in clients {
            client.cancel().await.unwrap();
        }
        answered
    });
    assert_eq!(answered, CLIENTS * PER_CLIENT);
}
