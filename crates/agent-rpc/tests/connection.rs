//! The connection over an in-process duplex stream, for both dialects.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use agent_rpc::{CallError, ConnectionError, Dap, JsonRpc, Protocol, ReplyError, Request};
use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn round_trip_result_and_error() {
    let (conn, mut peer, _log) = pair(JsonRpc, 1 << 16);
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("textDocument/hover", json!({"x": 1})).await }
    });
    let req = peer.recv().await;
    assert_eq!(req["jsonrpc"], "2.0");
    assert_eq!(req["method"], "textDocument/hover");
    assert_eq!(req["params"], json!({"x": 1}));
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"contents": "hi"}}))
        .await;
    let resp = call.await.unwrap().unwrap();
    assert_eq!(JsonRpc.outcome(resp), Ok(json!({"contents": "hi"})));

    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("shutdown", Value::Null).await }
    });
    let req = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"],
        "error": {"code": -32801, "message": "content modified"}}))
        .await;
    let resp = call.await.unwrap().unwrap();
    assert_eq!(
        JsonRpc.outcome(resp),
        Err(ReplyError {
            code: -32801,
            message: "content modified".into()
        })
    );
    conn.notify("initialized", json!({})).await.unwrap();
    let note = peer.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    );
    assert_eq!(conn.pending(), 0);
}

/// The peer's requests are answered (string ids echoed); notifications that arrived before a
/// response have been handled when that response's caller wakes.
#[tokio::test]
async fn server_requests_and_notifications_in_order() {
    let (conn, mut peer, log) = pair(JsonRpc, 1 << 16);
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("initialize", json!({})).await }
    });
    let req = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"n": 1}}))
        .await;
    peer.send(
        json!({"jsonrpc": "2.0", "id": "cfg-1", "method": "workspace/configuration",
        "params": {"items": [{"section": "x"}]}}),
    )
    .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 7, "method": "unknown/thing"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"n": 2}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {}}))
        .await;
    call.await.unwrap().unwrap();
    let notes: Vec<Value> = log
        .notes()
        .iter()
        .map(|n| n["params"]["n"].clone())
        .collect();
    assert_eq!(notes, vec![json!(1), json!(2)]);
    let reply = peer.recv().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "cfg-1", "result": [{"answer": 42}]})
    );
    let reply = peer.recv().await;
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["error"]["code"], -32601);
    assert_eq!(reply["error"]["message"], "method not found: unknown/thing");
}

/// A caller dropped while its request is still being written (the peer is not reading and the
/// pipe is full) leaves the stream well framed: the request goes out whole, then its cancel,
/// then the next request.
#[tokio::test]
async fn caller_dropped_mid_send_leaves_whole_frames_and_cancels() {
    let (conn, mut peer, _log) = pair(JsonRpc, 64);
    let big = "x".repeat(100_000);
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        conn.request("textDocument/didOpen", json!({"text": big})),
    )
    .await;
    assert!(
        dropped.is_err(),
        "the write cannot finish: the peer reads nothing"
    );
    assert_eq!(conn.pending(), 0, "the drop guard removed the entry");
    let next = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("next", json!({})).await }
    });
    let first = peer.recv().await;
    assert_eq!(first["params"]["text"].as_str().unwrap().len(), 100_000);
    let cancel = peer.recv().await;
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": first["id"]}})
    );
    let second = peer.recv().await;
    assert_eq!(second["method"], "next");
    peer.send(json!({"jsonrpc": "2.0", "id": second["id"], "result": "ok"}))
        .await;
    assert_eq!(next.await.unwrap().unwrap()["result"], "ok");
}

/// A caller dropped while waiting: its entry goes, the peer gets `$/cancelRequest`, and a late
/// answer is ignored.
#[tokio::test]
async fn caller_dropped_mid_wait_cancels_and_late_reply_is_ignored() {
    let (conn, mut peer, _log) = pair(JsonRpc, 1 << 16);
    let waiting = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("slow", json!({})).await }
    });
    let req = peer.recv().await;
    assert_eq!(conn.pending(), 1);
    waiting.abort();
    let cancel = peer.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], req["id"]);
    assert_eq!(conn.pending(), 0);
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": "late"}))
        .await;
    let again = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("again", json!({})).await }
    });
    let req2 = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": req2["id"], "result": "fresh"}))
        .await;
    assert_eq!(again.await.unwrap().unwrap()["result"], "fresh");
}

/// The end of the stream fails every pending request, once, with the reason; a later request
/// fails at once.
#[tokio::test]
async fn end_of_stream_fails_every_pending() {
    let (conn, mut peer, log) = pair(JsonRpc, 1 << 16);
    let mut waits = Vec::new();
    for i in 0..3 {
        let p = conn.start_request("m", json!({"i": i})).await.unwrap();
        waits.push(tokio::spawn(p.wait()));
    }
    for _ in 0..3 {
        peer.recv().await;
    }
    drop(peer);
    for w in waits {
        let err = tokio::time::timeout(Duration::from_secs(5), w)
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert_eq!(err, ConnectionError::Ended("end of stream".into()));
    }
    assert_eq!(
        log.closed(),
        vec![ConnectionError::Ended("end of stream".into())]
    );
    let late = conn.request("after", json!({})).await.unwrap_err();
    assert_eq!(late, ConnectionError::Ended("end of stream".into()));
    assert_eq!(conn.closed(), Some(late));
}

async fn broken_by(bytes: &[u8]) -> ConnectionError {
    let (conn, mut peer, log) = pair(JsonRpc, 1 << 16);
    let p = conn.start_request("m", json!({})).await.unwrap();
    peer.recv().await;
    peer.raw(bytes).await;
    let err = tokio::time::timeout(Duration::from_secs(5), p.wait())
        .await
        .expect("the pending request fails, not hangs")
        .unwrap_err();
    assert_eq!(log.closed(), vec![err.clone()]);
    err
}

/// A peer announcing a terabyte: an error naming the length and the limit, no allocation (a
/// `vec![0; len]` of that size aborts the process).
#[tokio::test]
async fn huge_announced_length_is_an_error() {
    let err = broken_by(b"Content-Length: 1099511627776\r\n\r\n").await;
    assert_eq!(
        err.to_string(),
        "the peer broke the protocol: a frame announces 1099511627776 bytes, over the limit of 67108864 bytes"
    );
}

#[tokio::test]
async fn bad_header_is_an_error() {
    let err = broken_by(b"Content-Length: twelve\r\n\r\n{}").await;
    assert!(
        err.to_string().contains("Content-Length is not a number"),
        "{err}"
    );
    let err = broken_by(b"this is not a header\r\n\r\n").await;
    assert!(err.to_string().contains("no `:`"), "{err}");
    let err = broken_by(b"Content-Type: x\r\n\r\n{}").await;
    assert!(err.to_string().contains("no Content-Length"), "{err}");
}

/// A body that is not JSON is an error, not a silent `null`.
#[tokio::test]
async fn non_json_body_is_an_error() {
    let err = broken_by(b"Content-Length: 5\r\n\r\nhello").await;
    assert!(
        matches!(&err, ConnectionError::Protocol(m) if m.contains("body of 5 bytes is not JSON")),
        "{err}"
    );
}

/// Many concurrent callers on a multi-threaded runtime, answered in reverse: no crossed replies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_get_their_own_replies() {
    let (conn, mut peer, _log) = pair(JsonRpc, 256);
    let callers: Vec<_> = (0..40)
        .map(|i| {
            let conn = conn.clone();
            tokio::spawn(async move { (i, conn.request("echo", json!({"i": i})).await) })
        })
        .collect();
    let mut reqs = Vec::new();
    for _ in 0..40 {
        reqs.push(peer.recv().await);
    }
    for r in reqs.iter().rev() {
        peer.send(json!({"jsonrpc": "2.0", "id": r["id"], "result": r["params"]["i"]}))
            .await;
    }
    for c in callers {
        let (i, r) = c.await.unwrap();
        assert_eq!(r.unwrap()["result"], json!(i));
    }
}

/// DAP: seq / request_seq, events in order, a reverse request refused with a message, and no
/// cancel request unless it is switched on.
#[tokio::test]
async fn dap_dialect() {
    let (conn, mut peer, log) = pair(Dap::default(), 1 << 16);
    let first = conn
        .start_request("initialize", json!({"a": 1}))
        .await
        .unwrap();
    let req = peer.recv().await;
    assert_eq!(
        req,
        json!({"seq": first.id(), "type": "request", "command": "initialize", "arguments": {"a": 1}})
    );
    peer.send(json!({"seq": 1, "type": "event", "event": "initialized"}))
        .await;
    peer.send(json!({"seq": 2, "type": "request", "command": "runInTerminal", "arguments": {}}))
        .await;
    peer.send(
        json!({"seq": 3, "type": "response", "request_seq": req["seq"], "success": true,
        "command": "initialize", "body": {"supportsCancelRequest": true}}),
    )
    .await;
    let resp = first.wait().await.unwrap();
    assert_eq!(resp["body"]["supportsCancelRequest"], true);
    assert_eq!(log.notes()[0]["event"], "initialized");
    let reverse = peer.recv().await;
    assert_eq!(reverse["type"], "response");
    assert_eq!(reverse["request_seq"], 2);
    assert_eq!(reverse["command"], "runInTerminal");
    assert_eq!(reverse["success"], false);
    assert_eq!(reverse["message"], "method not found: runInTerminal");
    assert!(reverse["seq"].as_i64().unwrap() > first_seq(&req));

    // Off by default: a dropped request sends nothing.
    let quiet = conn.start_request("threads", json!({})).await.unwrap();
    peer.recv().await;
    drop(quiet);
    conn.protocol().set_cancel(true);
    let cancelled = conn.start_request("stackTrace", json!({})).await.unwrap();
    let st = peer.recv().await;
    drop(cancelled);
    let cancel = peer.recv().await;
    assert_eq!(cancel["command"], "cancel", "{cancel}");
    assert_eq!(cancel["arguments"], json!({"requestId": st["seq"]}));
    assert_eq!(conn.pending(), 0);
}

fn first_seq(req: &Value) -> i64 {
    req["seq"].as_i64().unwrap()
}

/// Dropping the last handle closes the writer once the queued frames are out.
#[tokio::test]
async fn dropping_the_connection_closes_the_writer_after_queued_frames() {
    let (conn, mut peer, log) = pair(JsonRpc, 1 << 16);
    conn.notify("exit", Value::Null).await.unwrap();
    drop(conn);
    assert_eq!(peer.recv().await["method"], "exit");
    let end = tokio::time::timeout(Duration::from_secs(5), peer.reader.read())
        .await
        .unwrap()
        .unwrap();
    assert!(end.is_none(), "the stream ends");
    let log = Arc::clone(&log);
    assert!(log.closed().is_empty(), "no one is left to tell");
}

/// Writing to a peer that is gone fails the call with a write error (not a hang), and a request
/// after the reader saw the end fails at once.
#[tokio::test]
async fn writing_to_a_gone_peer_is_an_error() {
    let (conn, peer, log) = pair(JsonRpc, 1 << 16);
    drop(peer);
    eventually(|| !log.closed().is_empty()).await;
    let err = conn.notify("exit", Value::Null).await.unwrap_err();
    assert!(matches!(err, ConnectionError::Write(_)), "{err}");
    let err = conn.request("late", json!({})).await.unwrap_err();
    assert_eq!(err, ConnectionError::Ended("end of stream".into()));
}

struct Hover;
impl Request for Hover {
    const METHOD: &'static str = "textDocument/hover";
    type Params = Value;
    type Result = HoverReply;
}
#[derive(Debug, serde::Deserialize, PartialEq)]
struct HoverReply {
    contents: String,
}

/// A typed call reads the declared result, and a reply of another shape is an error that names
/// the method and the field — never a default.
#[tokio::test]
async fn a_typed_call_reads_its_result_and_names_a_malformed_one() {
    let (conn, mut peer, _log) = pair(JsonRpc, 1 << 16);
    for (result, want) in [
        (json!({"contents": "hi"}), Ok("hi")),
        (
            json!({"contents": 7}),
            Err("textDocument/hover reply is malformed: invalid type: integer"),
        ),
        (
            json!(null),
            Err("textDocument/hover reply is malformed: invalid type: null"),
        ),
    ] {
        let call = tokio::spawn({
            let conn = conn.clone();
            async move { conn.call::<Hover>(&json!({})).await }
        });
        let req = peer.recv().await;
        peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
            .await;
        match (call.await.unwrap(), want) {
            (Ok(r), Ok(w)) => assert_eq!(r.contents, w),
            (Err(CallError::Malformed(e)), Err(w)) => {
                assert!(e.to_string().contains(w), "{e}")
            }
            (got, w) => panic!("{got:?} where {w:?} was expected"),
        }
    }
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.call::<Hover>(&json!({})).await }
    });
    let req = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601}}))
        .await;
    let err = call.await.unwrap().unwrap_err().to_string();
    assert!(
        err.contains("refused textDocument/hover: a malformed error (missing field `message`)"),
        "{err}"
    );
}

/// DAP: `success: false` is a refusal with the adapter's message and its detail.
#[test]
fn a_dap_refusal_carries_the_adapters_message() {
    let dap = Dap::default();
    assert_eq!(
        dap.outcome(json!({"success": true, "body": {"threads": []}})),
        Ok(json!({"threads": []}))
    );
    assert_eq!(dap.outcome(json!({"success": true})), Ok(Value::Null));
    let e = dap
        .outcome(json!({"success": false, "message": "notStopped",
            "body": {"error": {"format": "Thread is running"}}}))
        .unwrap_err();
    assert_eq!(e.message, "notStopped: Thread is running");
    let e = dap.outcome(json!({"type": "response"})).unwrap_err();
    assert_eq!(e.message, "a response without `success`");
}

/// The one typed call with a bound (what the LSP client and the DAP transport both use): past
/// the bound it is `CallError::Timeout` naming the method and the bound, the request is
/// abandoned (no pending entry left) and the peer is told (`$/cancelRequest` with its id); a
/// DAP refusal says the adapter's message with its `{name}` placeholders filled in.
#[tokio::test]
async fn a_bounded_typed_call_times_out_cancels_and_reads_refusals() {
    let (conn, mut peer, _log) = pair(JsonRpc, 1 << 16);
    let call = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.call_within::<Hover>(&json!({}), Duration::from_millis(200))
                .await
        }
    });
    let req = peer.recv().await;
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout {
            method: "textDocument/hover",
            after: Duration::from_millis(200)
        }
    );
    let cancel = peer.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], req["id"]);
    assert_eq!(conn.pending(), 0);

    let (conn, mut peer, _log) = pair(Dap::default(), 1 << 16);
    let pending = conn.send::<Hover>(&json!({})).await.unwrap();
    let req = peer.recv().await;
    peer.send(
        json!({"seq": 9, "type": "response", "request_seq": req["seq"], "success": false,
        "command": "textDocument/hover", "message": "evaluate failed",
        "body": {"error": {"format": "name {n} is not defined (in {where})",
                           "variables": {"n": "x", "where": "frame 0"}}}}),
    )
    .await;
    let err = pending.wait(Duration::from_secs(5)).await.unwrap_err();
    match err {
        CallError::Refused { method, error } => {
            assert_eq!(method, "textDocument/hover");
            assert_eq!(
                error.message,
                "evaluate failed: name x is not defined (in frame 0)"
            );
        }
        other => panic!("{other:?}"),
    }
}
