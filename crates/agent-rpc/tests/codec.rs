//! The frame reader on its own: what it accepts and what it refuses.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
use agent_rpc::{FrameError, FrameReader, Limits, encode};
use serde_json::json;

async fn read_all(bytes: &[u8], limits: Limits) -> (Vec<serde_json::Value>, Option<FrameError>) {
    let mut r = FrameReader::new(bytes, limits);
    let mut out = Vec::new();
    loop {
        match r.read().await {
            Ok(Some(v)) => out.push(v),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

#[tokio::test]
async fn tolerated_forms() {
    let mut bytes = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 7\r\n\r\n{\"a\":1}".to_vec();
    // Bare `\n` line ends, blank lines between frames, repeated equal lengths.
    bytes.extend_from_slice(b"\r\n\nContent-Length: 2\nContent-Length: 2\n\n[]");
    bytes.extend_from_slice(&encode(&json!({"b": "\u{1F600}"})));
    let (msgs, err) = read_all(&bytes, Limits::default()).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        msgs,
        vec![json!({"a": 1}), json!([]), json!({"b": "\u{1F600}"})]
    );
}

#[tokio::test]
async fn refused_forms() {
    let small = Limits {
        max_frame: 10,
        max_header_line: 40,
        max_headers: 3,
    };
    let cases: Vec<(&[u8], &str)> = vec![
        (
            b"Content-Length: 11\r\n\r\n{\"a\":12345}",
            "a frame announces 11 bytes, over the limit of 10 bytes",
        ),
        (
            b"Content-Length: 18446744073709551616\r\n\r\n",
            "Content-Length is not a number",
        ),
        (
            b"Content-Length: -1\r\n\r\n",
            "Content-Length is not a number",
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "a second, different Content-Length",
        ),
        (
            b"X-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n",
            "a header line is longer than 40 bytes",
        ),
        (
            b"A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
            "a frame has more than 3 header lines",
        ),
        (
            b"Content-Type: x\r\n\r\n",
            "a frame's headers have no Content-Length",
        ),
        (b"{\"jsonrpc\": \"2.0\"}\r\n\r\n", "bad header"),
        (b"Content Length: 2\r\n\r\n{}", "not a header name"),
        (b"Content-Length: 2\xff\r\n\r\n{}", "not UTF-8"),
        (
            b"Content-Length: 3\r\n\r\nnul",
            "body of 3 bytes is not JSON",
        ),
        (
            b"Content-Length: 8\r\n\r\n{\"a\":",
            "the stream ended inside a frame (in the body)",
        ),
        (
            b"Content-Length: 8\r\n",
            "the stream ended inside a frame (in the headers)",
        ),
        (
            b"Content-Len",
            "the stream ended inside a frame (in a header line)",
        ),
    ];
    for (bytes, want) in cases {
        let (msgs, err) = read_all(bytes, small).await;
        assert!(msgs.is_empty());
        let err =
            err.unwrap_or_else(|| panic!("{:?} was accepted", String::from_utf8_lossy(bytes)));
        assert!(
            err.to_string().contains(want),
            "{:?}: {err}",
            String::from_utf8_lossy(bytes)
        );
    }
}

/// A header line without an end is refused at the cap, not buffered forever.
#[tokio::test]
async fn endless_header_line_stops_at_the_cap() {
    let (mut w, r) = tokio::io::duplex(1024);
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let chunk = [b'a'; 1024];
        while w.write_all(&chunk).await.is_ok() {}
    });
    let mut reader = FrameReader::new(r, Limits::default());
    let err = tokio::time::timeout(std::time::Duration::from_secs(5), reader.read())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(err, FrameError::HeaderTooLong { max: 4096 }),
        "{err}"
    );
    drop(reader);
    writer.await.unwrap();
}

/// A frame near the cap is read whole; the cap is configurable.
#[tokio::test]
async fn large_frame_within_the_cap() {
    let text = "y".repeat(3 << 20);
    let bytes = encode(&json!({"t": text}));
    let limits = Limits {
        max_frame: 4 << 20,
        ..Limits::default()
    };
    let (msgs, err) = read_all(&bytes, limits).await;
    assert!(err.is_none());
    assert_eq!(msgs[0]["t"].as_str().unwrap().len(), 3 << 20);
    let limits = Limits {
        max_frame: 1 << 20,
        ..Limits::default()
    };
    let (_, err) = read_all(&bytes, limits).await;
    assert!(matches!(err, Some(FrameError::TooLarge { .. })));
}
