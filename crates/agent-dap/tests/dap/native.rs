use crate::common::{Fixture, config, filters, require};
use serde_json::json;

// `r` is set before the call: a stop inside `add` shows it in `main`'s locals, and an
// uninitialised local is whatever the stack held (0 in one run, 32767 in another).
const C_SRC: &str = r#"#include <stdio.h>

struct point { int x; int y; };

int add(int a, int b) {
    int sum = a + b;
    return sum;
}

int main(void) {
    struct point p = { 3, 4 };
    int r = 0; r = add(p.x, p.y);
    printf("r=%d\n", r);
    return 0;
}
"#;

/// A C program built with `gcc -g`, under lldb-dap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_program_under_lldb() {
    require("gcc");
    let mut f = Fixture::new(
        &[("CMakeLists.txt", "project(demo C)\n"), ("main.c", C_SRC)],
        config(),
    );
    f.run("gcc", &["-g", "-O0", "-o", "demo", "main.c"]);
    f.ok(json!({"op": "breakpoints", "file": "main.c", "lines": [6]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    // One answer shows the stop: file:line with its source, the frames, the locals.
    for shown in [
        "at add (main.c:6)",
        "main.c:6\n",
        "> 6 |     int sum = a + b;",
        "#1 frame_id ",
        ": main (main.c:12)",
        "- a: int = 3",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    let stack = f.ok(json!({"op": "stack"})).await;
    let frames = stack.structured.as_ref().unwrap()["frames"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        frames[1]["at"]
            .as_str()
            .unwrap()
            .starts_with("main (main.c:12)"),
        "{frames:?}"
    );
    let main_frame = frames[1]["frame_id"].as_i64().unwrap();
    let vars = f.locals(main_frame).await;
    assert!(vars.text.contains("p: point = "), "{}", vars.text);
    f.ok(json!({"op": "evaluate", "expression": "a * b"})).await;
    f.ok(json!({"op": "evaluate", "expression": "p.y", "frame_id": main_frame}))
        .await;
    f.ok(json!({"op": "step_out"})).await;
    // A breakpoint on a blank line lands on the next line with code: the result says where,
    // and echoes that line.
    let moved = f
        .ok(json!({"op": "breakpoints", "file": "main.c", "lines": [9]}))
        .await;
    assert!(
        moved.text.contains("(asked 9, moved by the adapter)"),
        "{}",
        moved.text
    );
    f.ok(json!({"op": "breakpoints", "file": "main.c", "lines": []}))
        .await;
    f.ok(json!({"op": "threads"})).await;
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("r=7"), "{}", out.text);
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

const RUST_SRC: &str = r#"struct Config {
    name: String,
    retries: u32,
}

fn main() {
    let name = String::from("hello");
    let nums = vec![1, 2, 3];
    let cfg = Config { name: name.clone(), retries: 3 };
    let maybe: Option<i32> = Some(7);
    let total: i32 = nums.iter().sum();
    println!("{} {} {} {:?}", cfg.name, cfg.retries, total, maybe);
}
"#;

/// A Rust program built with `rustc -g`: the toolchain's formatters make variables read as
/// values (a `String` as its text, a `Vec` by its elements).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_program_under_lldb() {
    require("rustc");
    let mut f = Fixture::new(
        &[
            ("Cargo.toml", "[package]\nname = \"demo\"\n"),
            ("src/main.rs", RUST_SRC),
        ],
        config(),
    );
    f.run(
        "rustc",
        &["-g", "-C", "opt-level=0", "-o", "demo", "src/main.rs"],
    );
    f.ok(json!({"op": "breakpoints", "file": "src/main.rs", "lines": [11]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    assert!(
        launched.text.contains("(src/main.rs:11)"),
        "{}",
        launched.text
    );
    let stack = f.quiet(json!({"op": "stack"})).await;
    let top = stack.structured.as_ref().unwrap()["frames"][0]["frame_id"]
        .as_i64()
        .unwrap();
    let vars = f.locals(top).await;
    assert!(
        vars.text
            .contains("name: alloc::string::String = \"hello\""),
        "{}",
        vars.text
    );
    let rows = vars.structured.as_ref().unwrap()["variables"]
        .as_array()
        .unwrap()
        .clone();
    let nums = rows.iter().find(|r| r["name"] == "nums").unwrap()["reference"]
        .as_i64()
        .unwrap();
    let elems = f.ok(json!({"op": "variables", "reference": nums})).await;
    assert!(elems.text.contains("[1]: int = 2"), "{}", elems.text);
    f.ok(json!({"op": "evaluate", "expression": "cfg.retries"}))
        .await;
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    assert!(done.text.contains("hello 3 6 Some(7)"), "{}", done.text);
    f.finish().await;
    // Frames inside the standard library depend on the toolchain: not in the snapshot.
    let mut filters = filters();
    filters.push((r"\n#[1-9] frame_id \[id\]: [^\n]*", ""));
    filters.push((r"… \d+ more frame\(s\)", "… [n] more frame(s)"));
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// Start `lldb-server-19 gdbserver` on a port it picks itself (written to a file through its
/// `--named-pipe` option), launching `program` stopped at its entry. Returns the server (in its
/// own process group, killed on drop) and the port.
async fn gdbserver(f: &Fixture, program: &str) -> (tokio::process::Child, u16) {
    let server = require("lldb-server-19");
    let port_file = f.root().join("gdbserver.port");
    std::fs::write(&port_file, b"").expect("create the port file");
    let child = tokio::process::Command::new(server)
        .arg("gdbserver")
        .arg("--named-pipe")
        .arg(&port_file)
        .arg("127.0.0.1:0")
        .arg("--")
        .arg(f.root().join(program))
        .current_dir(f.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start lldb-server-19");
    // The port is written once the server listens: digits, then a NUL.
    for _ in 0..600 {
        let text = std::fs::read(&port_file).unwrap_or_default();
        if let Some(end) = text.iter().position(|b| *b == 0) {
            let port = std::str::from_utf8(&text[..end])
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| panic!("lldb-server wrote a bad port: {text:?}"));
            return (child, port);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("lldb-server-19 gdbserver never reported its port");
}

/// Attach through lldb-dap to a C program started under `lldb-server-19 gdbserver`: the
/// breakpoint set before attaching is hit, a variable reads as its value, `terminate` detaches
/// and the program runs to its end, so nothing is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_program_attached_under_lldb_server() {
    require("gcc");
    let mut f = Fixture::new(
        &[("CMakeLists.txt", "project(demo C)\n"), ("main.c", C_SRC)],
        config(),
    );
    f.run("gcc", &["-g", "-O0", "-o", "demo", "main.c"]);
    let (mut server, port) = gdbserver(&f, "demo").await;
    let server_pid = server.id().expect("lldb-server pid");
    f.redact
        .push((format!("127.0.0.1:{port}"), "127.0.0.1:[port]".into()));
    f.redact
        .push((format!("\"port\":{port}"), "\"port\":[port]".into()));
    f.ok(json!({"op": "breakpoints", "file": "main.c", "lines": [7]}))
        .await;
    let attached = f
        .ok(json!({"op": "attach", "adapter": "lldb", "port": port}))
        .await;
    assert!(
        attached.text.contains("at add (main.c:7)"),
        "{}",
        attached.text
    );
    // The frames below `main` come from the C library: not in the snapshot.
    let stack = f.quiet(json!({"op": "stack"})).await;
    let top = stack.structured.as_ref().unwrap()["frames"][0]["frame_id"]
        .as_i64()
        .unwrap();
    let vars = f.locals(top).await;
    for shown in ["a: int = 3", "b: int = 4", "sum: int = 7"] {
        assert!(vars.text.contains(shown), "{}", vars.text);
    }
    let sum = f.ok(json!({"op": "evaluate", "expression": "a + b"})).await;
    assert!(sum.text.contains('7'), "{}", sum.text);
    let ended = f.ok(json!({"op": "terminate"})).await;
    assert!(
        ended.text.contains("detached, left running"),
        "{}",
        ended.text
    );
    // Detached: the program runs to its end and the server exits with it.
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), server.wait())
        .await
        .expect("lldb-server-19 did not exit after the program ended")
        .expect("wait for lldb-server-19");
    // The adapter and the program the server started were both reported.
    assert_eq!(f.pids.len(), 2, "{:?}", f.pids);
    f.pids.push(server_pid);
    f.finish().await;
    assert!(status.success(), "lldb-server-19 exited with {status}");
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// A breakpoint by function name under lldb-dap: set before launch, verified where the adapter
/// resolved it, and the launch stops in that function; `[]` clears the set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_function_breakpoint_under_lldb() {
    require("gcc");
    let mut f = Fixture::new(
        &[("CMakeLists.txt", "project(demo C)\n"), ("main.c", C_SRC)],
        config(),
    );
    f.run("gcc", &["-g", "-O0", "-o", "demo", "main.c"]);
    let pending = f
        .ok(json!({"op": "breakpoints", "function": ["add"]}))
        .await;
    assert!(pending.text.contains("add will be set"), "{}", pending.text);
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    for shown in [
        "- function add: verified at main.c:6: `int sum = a + b;`",
        "stopped (breakpoint",
        "at add (main.c:6)",
        "- a: int = 3",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    let cleared = f.ok(json!({"op": "breakpoints", "function": []})).await;
    assert!(cleared.text.contains("cleared"), "{}", cleared.text);
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(done.text.contains("exited with code 0"), "{}", done.text);
    f.finish().await;
}

const CPP_THROW: &str = r#"#include <stdexcept>

int check(int n) {
    int limit = 3;
    if (n > limit) {
        throw std::runtime_error("over the limit");
    }
    return n;
}

int main() {
    return check(5);
}
"#;

/// An uncaught C++ exception under lldb-dap: lldb-dap 19 offers only catch/throw filters (no
/// "uncaught" one), but the uncaught exception ends in `std::terminate` → SIGABRT, which stops
/// the program; the stop shows the signal and the first frame in the workspace (below the
/// frames shown), where it threw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpp_uncaught_exception_stops_under_lldb() {
    require("g++");
    let mut f = Fixture::new(
        &[
            ("CMakeLists.txt", "project(demo CXX)\n"),
            ("main.cpp", CPP_THROW),
        ],
        config(),
    );
    f.run("g++", &["-g", "-O0", "-o", "demo", "main.cpp"]);
    // Frames inside libc and libstdc++ differ between toolchains: checked, not snapshotted.
    let stop = f.ok(json!({"op": "launch", "program": "demo"})).await;
    // The throwing frame lies below the frames shown (libc, libstdc++): found, listed, and its
    // source and locals shown.
    for shown in [
        "stopped (exception",
        "SIGABRT",
        "(frame #",
        "the first in the workspace)",
        "> 6 |         throw std::runtime_error(\"over the limit\");",
        ": check(int) (main.cpp:6)",
        "- n: int = 5",
        "- limit: int = 3",
    ] {
        assert!(stop.text.contains(shown), "{shown}: {}", stop.text);
    }
    // The exception's message is what libstdc++ printed on the way to `abort`.
    let out = f.quiet(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("what():  over the limit"), "{}", out.text);
    f.finish().await;
}
