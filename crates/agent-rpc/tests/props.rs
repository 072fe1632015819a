//! Property tests: arbitrary and truncated input never panics or hangs the decoder, and
//! concurrent requests answered (or cancelled) in any order never get crossed replies.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use agent_rpc::{Dap, FrameError, FrameReader, JsonRpc, Limits, Protocol, encode};
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::time::Duration;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Read frames until the end or an error; bounded by a timeout.
fn decode(bytes: &[u8], limits: Limits) -> (Vec<Value>, Option<FrameError>) {
    rt().block_on(async {
        tokio::time::timeout(Duration::from_secs(5), async {
            let mut r = FrameReader::new(bytes, limits);
            let mut out = Vec::new();
            loop {
                match r.read().await {
                    Ok(Some(v)) => out.push(v),
                    Ok(None) => return (out, None),
                    Err(e) => return (out, Some(e)),
                }
            }
        })
        .await
        .expect("the decoder hung")
    })
}

fn header_like() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..512),
        (any::<u64>(), proptest::collection::vec(any::<u8>(), 0..256)).prop_map(|(n, tail)| {
            let mut b = format!("Content-Length: {n}\r\n\r\n").into_bytes();
            b.extend(tail);
            b
        }),
        (0u64..64, "[ -~\r\n]{0,80}")
            .prop_map(|(n, tail)| { format!("Content-Length: {n}\r\n{tail}").into_bytes() }),
    ]
}

fn small_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::from),
        (".{0,8}", any::<i32>())
            .prop_map(|(k, v)| json!({ k: v, "s": "\r\n\r\nContent-Length: 9" })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any bytes: frames or an error, never a panic or a hang; a frame count no larger than
    /// the input can hold.
    #[test]
    fn random_bytes_never_panic_or_hang(bytes in header_like()) {
        let limits = Limits { max_frame: 1 << 16, ..Limits::default() };
        let (msgs, _) = decode(&bytes, limits);
        prop_assert!(msgs.len() <= bytes.len() / 4 + 1);
    }

    /// Valid frames cut anywhere: every whole frame decodes to what was sent, then a clean end
    /// (cut on a boundary) or a truncation error (cut inside a frame).
    #[test]
    fn truncated_frames(msgs in proptest::collection::vec(small_json(), 0..6), cut in any::<prop::sample::Index>()) {
        let frames: Vec<Vec<u8>> = msgs.iter().map(encode).collect();
        let all: Vec<u8> = frames.concat();
        let at = cut.index(all.len() + 1);
        let mut ends = vec![0usize];
        for f in &frames {
            ends.push(ends.last().unwrap() + f.len());
        }
        let whole = ends.iter().filter(|&&e| e <= at).count() - 1;
        let (got, err) = decode(&all[..at], Limits::default());
        prop_assert_eq!(&got[..], &msgs[..whole]);
        if ends.contains(&at) {
            prop_assert!(err.is_none(), "{:?}", err);
        } else {
            prop_assert!(matches!(err, Some(FrameError::Truncated(_))), "{:?}", err);
        }
    }

    /// Valid frames delivered in arbitrary chunks decode to what was sent.
    #[test]
    fn chunked_delivery(msgs in proptest::collection::vec(small_json(), 1..6), sizes in proptest::collection::vec(1usize..64, 1..32)) {
        let all: Vec<u8> = msgs.iter().map(encode).collect::<Vec<_>>().concat();
        let got = rt().block_on(async {
            let (mut w, r) = tokio::io::duplex(64);
            let feeder = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut rest = &all[..];
                let mut i = 0;
                while !rest.is_empty() {
                    let n = sizes[i % sizes.len()].min(rest.len());
                    w.write_all(&rest[..n]).await.unwrap();
                    rest = &rest[n..];
                    i += 1;
                }
            });
            let mut reader = FrameReader::new(r, Limits::default());
            let mut out = Vec::new();
            tokio::time::timeout(Duration::from_secs(5), async {
                while let Some(v) = reader.read().await.unwrap() {
                    out.push(v);
                }
            }).await.expect("hung");
            feeder.await.unwrap();
            out
        });
        prop_assert_eq!(got, msgs);
    }

    /// N concurrent requests, some callers dropped while waiting, the rest answered in a random
    /// order (the dropped ones too, late): each caller gets its own reply, each dropped one is
    /// cancelled, nothing stays pending.
    #[test]
    fn interleavings(
        order in (1usize..16).prop_flat_map(|n| Just((0..n).collect::<Vec<_>>()).prop_shuffle()),
        dropped in proptest::collection::vec(any::<bool>(), 16),
        dap in any::<bool>(),
    ) {
        if dap {
            let p = Dap::default();
            p.set_cancel(true);
            run_interleaving(p, &order, &dropped);
        } else {
            run_interleaving(JsonRpc, &order, &dropped);
        }
    }
}

fn id_of(msg: &Value) -> i64 {
    msg.get("id")
        .or_else(|| msg.get("seq"))
        .and_then(Value::as_i64)
        .unwrap()
}

fn cancelled_id(msg: &Value) -> Option<i64> {
    msg.pointer("/params/id")
        .or_else(|| msg.pointer("/arguments/requestId"))
        .and_then(Value::as_i64)
}

fn run_interleaving<P: Protocol>(protocol: P, order: &[usize], dropped: &[bool]) {
    let n = order.len();
    rt().block_on(async move {
        let (conn, mut peer, _log) = pair(protocol, 128);
        let mut callers = Vec::new();
        for i in 0..n {
            let conn = conn.clone();
            callers.push(tokio::spawn(async move {
                conn.request("echo", json!({"i": i})).await.unwrap()
            }));
        }
        // Requests arrive in whatever order the tasks ran; remember whose each is.
        let mut reqs = vec![Value::Null; n];
        for _ in 0..n {
            let r = peer.recv().await;
            let i = r.get("params").or_else(|| r.get("arguments")).unwrap()["i"]
                .as_u64()
                .unwrap() as usize;
            reqs[i] = r;
        }
        let mut want_cancel = Vec::new();
        for (i, c) in callers.iter().enumerate() {
            if dropped[i] {
                c.abort();
                want_cancel.push(id_of(&reqs[i]));
            }
        }
        let mut got_cancel = Vec::new();
        for _ in 0..want_cancel.len() {
            got_cancel.push(cancelled_id(&peer.recv().await).unwrap());
        }
        got_cancel.sort();
        want_cancel.sort();
        assert_eq!(got_cancel, want_cancel);
        for &i in order {
            let id = id_of(&reqs[i]);
            peer.send(
                json!({"jsonrpc": "2.0", "id": id, "type": "response", "request_seq": id,
                "success": true, "result": i, "body": i}),
            )
            .await;
        }
        for (i, c) in callers.into_iter().enumerate() {
            match c.await {
                Ok(resp) => {
                    assert!(!dropped[i]);
                    let got = resp.get("result").unwrap();
                    assert_eq!(got, &json!(i), "caller {i} got another's reply");
                }
                Err(e) => assert!(e.is_cancelled() && dropped[i]),
            }
        }
        assert_eq!(conn.pending(), 0);
    });
}
