//! `cargo xtask bench host`, hostile clients (issue 23): `agent-tools serve --listen` with 5,000
//! idle connections that never send the token (a third send nothing, a third half a request
//! head, a third a whole request without the token) and a slowloris sending one byte of a head
//! a second. Measures what a client with the token sees meanwhile: the median `tools/call read`
//! round trip on a keep-alive connection and on a new connection per call, against the same
//! before the strangers came and after they left, as ratios; how many strangers the host closed;
//! and when it closed the slowloris.

use crate::bench_http::{Conn, start};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const STRANGERS: usize = 5_000;
const CALLS: usize = 500;
const FRESH_CALLS: usize = 100;
/// How long the slowloris keeps sending before the bench calls it kept open.
const SLOWLORIS_GIVE_UP: Duration = Duration::from_secs(60);

pub fn run(bin: &Path) -> Result<()> {
    raise_fd_limit(STRANGERS as u64 + 1_024)?;
    let dir =
        std::env::temp_dir().join(format!("agent-tools-bench-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("hello.txt"), "hello\n")?;
    let token = format!("bench-hostile-{}", std::process::id());
    let (mut child, authority) = start(bin, &dir, &token)?;
    let outcome = measure(&authority, &token);
    let alive = child.try_wait()?.is_none();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    outcome?;
    if !alive {
        bail!("the host ended during the hostile bench");
    }
    Ok(())
}

/// The median round trip of `n` `read` calls on one keep-alive connection in a new session.
fn keep_alive_median(authority: &str, token: &str, n: usize) -> Result<f64> {
    let mut conn = Conn::new(authority, token, None);
    conn.initialize()?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        read_hello(&mut conn)?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(&mut times))
}

/// The median round trip of `n` `read` calls, each on a new connection (connect included).
fn fresh_median(
    authority: &str,
    token: &str,
    session: &str,
    first_id: u64,
    n: usize,
) -> Result<f64> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let mut conn =
            Conn::new(authority, token, Some(session.to_string())).ids_from(first_id + i as u64);
        read_hello(&mut conn)?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(&mut times))
}

fn read_hello(conn: &mut Conn) -> Result<()> {
    let resp = conn.request(
        "tools/call",
        json!({"name": "read", "arguments": {"path": "hello.txt"}}),
    )?;
    if resp["result"]["isError"] != false {
        bail!("the call failed: {resp}");
    }
    Ok(())
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn measure(authority: &str, token: &str) -> Result<()> {
    let mut session = Conn::new(authority, token, None);
    session.initialize()?;
    let session = session
        .session()
        .context("initialize gave no Mcp-Session-Id")?;
    // Warm up, then the baselines with nobody else connected.
    keep_alive_median(authority, token, 50)?;
    let base_keep = keep_alive_median(authority, token, CALLS)?;
    let base_fresh = fresh_median(authority, token, &session, 1_000, FRESH_CALLS)?;

    let t = Instant::now();
    let mut strangers = Vec::with_capacity(STRANGERS);
    for i in 0..STRANGERS {
        let mut s = TcpStream::connect(authority)
            .with_context(|| format!("stranger {i}: connect to {authority}"))?;
        let sent: &[u8] = match i % 3 {
            0 => b"",
            1 => b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty",
            _ => b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        };
        let _ = s.write_all(sent);
        strangers.push(s);
    }
    let opened = t.elapsed();
    // The newest stranger: it is not closed to make room below, so the header timeout ends it.
    let slowloris = std::thread::spawn({
        let authority = authority.to_string();
        move || slowloris(&authority)
    });
    let flood_keep = keep_alive_median(authority, token, CALLS)?;
    let flood_fresh = fresh_median(authority, token, &session, 10_000, FRESH_CALLS)?;
    let closed = strangers
        .iter_mut()
        .map(closed_by_peer)
        .filter(|&c| c)
        .count();
    drop(strangers);
    let after_keep = keep_alive_median(authority, token, CALLS)?;
    let after_fresh = fresh_median(authority, token, &session, 20_000, FRESH_CALLS)?;

    println!(
        "HTTP with {STRANGERS} idle connections without the token (opened in {:.1} s; {closed} closed by the host to make room) and a slowloris; a client with the token, median `tools/call read` round trip:",
        opened.as_secs_f64()
    );
    println!(
        "  keep-alive connection, {CALLS} calls: {flood_keep:.0} us vs {base_keep:.0} us before the strangers ({:.2}x), {after_keep:.0} us after they left ({:.2}x)",
        flood_keep / base_keep,
        after_keep / base_keep
    );
    println!(
        "  a new connection per call, {FRESH_CALLS} calls: {flood_fresh:.0} us vs {base_fresh:.0} us before ({:.2}x), {after_fresh:.0} us after ({:.2}x)",
        flood_fresh / base_fresh,
        after_fresh / base_fresh
    );
    let loris = slowloris
        .join()
        .map_err(|_| anyhow::anyhow!("the slowloris thread panicked"))??;
    match loris {
        Some((bytes, after)) => println!(
            "  slowloris (1 byte/s of a request head): closed by the host after {bytes} bytes, {:.1} s (header timeout 10 s)",
            after.as_secs_f64()
        ),
        None => println!(
            "  slowloris (1 byte/s of a request head): still open after {} s",
            SLOWLORIS_GIVE_UP.as_secs()
        ),
    }
    Ok(())
}

/// Send a request head one byte a second; the bytes sent and the time when the host hung up
/// (`None`: still open at [`SLOWLORIS_GIVE_UP`]).
fn slowloris(authority: &str) -> Result<Option<(usize, Duration)>> {
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    let mut s = TcpStream::connect(authority)?;
    s.set_read_timeout(Some(Duration::from_secs(1)))?;
    let t = Instant::now();
    let mut sent = 0;
    while t.elapsed() < SLOWLORIS_GIVE_UP {
        if s.write_all(&[head.get(sent).copied().unwrap_or(b'z')])
            .is_err()
        {
            return Ok(Some((sent, t.elapsed())));
        }
        sent += 1;
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Ok(0) => return Ok(Some((sent, t.elapsed()))),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Ok(Some((sent, t.elapsed()))),
        }
    }
    Ok(None)
}

/// Whether the host has closed this connection (EOF or reset waiting to be read).
fn closed_by_peer(s: &mut TcpStream) -> bool {
    if s.set_nonblocking(true).is_err() {
        return true;
    }
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// Raise this process's soft limit on open files to at least `need` (with `prlimit`, as no
/// library call is at hand here); the hard limit bounds it.
fn raise_fd_limit(need: u64) -> Result<()> {
    let limits = std::fs::read_to_string("/proc/self/limits")?;
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .context("no `Max open files` in /proc/self/limits")?;
    let mut fields = line.split_whitespace();
    let parse = |f: Option<&str>| -> Option<u64> {
        match f? {
            "unlimited" => Some(u64::MAX),
            n => n.parse().ok(),
        }
    };
    let (soft, hard) = (parse(fields.next()), parse(fields.next()));
    let (Some(soft), Some(hard)) = (soft, hard) else {
        bail!("cannot read the fd limits from /proc/self/limits: {line}");
    };
    if soft >= need {
        return Ok(());
    }
    if hard < need {
        bail!(
            "the hostile bench holds {need} connections but the hard fd limit is {hard}: raise it (`ulimit -Hn {need}` as root, or limits.conf)"
        );
    }
    let hard_text = if hard == u64::MAX {
        "unlimited".to_string()
    } else {
        hard.to_string()
    };
    let status = Command::new("prlimit")
        .arg(format!("--pid={}", std::process::id()))
        .arg(format!("--nofile={need}:{hard_text}"))
        .status()
        .context("prlimit (util-linux) to raise the fd limit")?;
    if !status.success() {
        bail!("prlimit could not raise the fd soft limit to {need}: run `ulimit -n {need}` first");
    }
    Ok(())
}
