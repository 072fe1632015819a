//! The wire to a language server that breaks the framing (scripted fake,
//! `tests/support/fake_dart_lsp.py`): a frame announcing 1 TiB and a body that is not JSON are
//! errors that stop the server — never an allocation attempt that aborts the host, never a
//! silent `null` — and the next call starts a fresh server.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;
use std::time::Duration;

fn fake_config() -> agent_lsp::LspConfig {
    let mut cfg = config("dart", "dart");
    let script = fixtures().join("../support/fake_dart_lsp.py");
    patch(
        &mut cfg,
        "dart",
        agent_lsp::ServerPatch {
            commands: Some(vec![vec!["python3".into(), script.display().to_string()]]),
            ..Default::default()
        },
    );
    cfg
}

async fn server_pid(fx: &Fx) -> u32 {
    let status = fx.lsp(json!({"operation": "status"})).await;
    status.structured.unwrap()["servers"][0]["pid"]
        .as_u64()
        .unwrap() as u32
}

async fn gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_frames_are_errors_and_the_server_is_replaced() {
    require("python3");
    let fx = fixture("dart", fake_config());
    std::fs::write(
        fx.root.join("lib/main.dart"),
        fx.read("lib/main.dart") + "\nvoid huge() {}\nvoid garbage() {}\n",
    )
    .unwrap();
    let hover = |line: u32, symbol: &str| json!({"operation": "hover", "file": "lib/main.dart", "line": line, "symbol": symbol});
    check(&fx, &ok(hover(8, "makeGreeter"), &["fake hover"])).await;

    // `Content-Length: 1099511627776`: the old reader did `vec![0u8; len]` and the host aborted.
    let pid = server_pid(&fx).await;
    let out = fx.lsp(hover(13, "huge")).await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains(
            "dart exited while handling `textDocument/hover` (stopped after a protocol error: \
             a frame announces 1099511627776 bytes, over the limit of 67108864 bytes); \
             the next call restarts it"
        ),
        "{}",
        out.text
    );
    assert!(
        gone(pid).await,
        "the server that broke the framing was stopped"
    );

    // A body that is not JSON: the old reader turned it into a `null` result ("no hover").
    check(&fx, &ok(hover(8, "makeGreeter"), &["fake hover"])).await;
    let pid = server_pid(&fx).await;
    let out = fx.lsp(hover(14, "garbage")).await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("protocol error: a frame's body of 8 bytes is not JSON"),
        "{}",
        out.text
    );
    assert!(gone(pid).await);

    check(&fx, &ok(hover(8, "makeGreeter"), &["fake hover"])).await;
}
