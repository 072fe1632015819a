use crate::common::{Fixture, config, filters, require};
use serde_json::json;

const GO_SRC: &str = r#"package main

import "fmt"

type Point struct{ X, Y int }

func scale(p Point, k int) Point {
	q := Point{p.X * k, p.Y * k}
	return q
}

func main() {
	p := Point{1, 2}
	names := []string{"a", "b"}
	q := scale(p, 3)
	fmt.Println("q", q.X, q.Y, len(names))
}
"#;

fn go_fixture() -> Fixture {
    require("go");
    require("dlv");
    Fixture::new(
        &[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", GO_SRC)],
        config(),
    )
}

/// A prebuilt Go binary under delve (`mode: exec`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_binary_under_delve() {
    let mut f = go_fixture();
    f.run("go", &["build", "-gcflags=all=-N -l", "-o", "demo", "."]);
    f.ok(json!({"op": "breakpoints", "file": "main.go", "lines": [9]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    assert!(launched.text.contains("with delve"), "{}", launched.text);
    // One answer shows the stop: file:line with its source, the frames, the locals.
    for shown in [
        "at main.scale (main.go:9)",
        "main.go:9\n",
        ">  9 | \treturn q",
        "#1 frame_id ",
        ": main.main (main.go:15)",
        "- k: int = 3",
    ] {
        assert!(launched.text.contains(shown), "{shown}: {}", launched.text);
    }
    let stack = f.ok(json!({"op": "stack"})).await;
    let frames = stack.structured.as_ref().unwrap()["frames"]
        .as_array()
        .unwrap()
        .clone();
    let main_frame = frames[1]["frame_id"].as_i64().unwrap();
    let vars = f.locals(frames[0]["frame_id"].as_i64().unwrap()).await;
    assert!(vars.text.contains("k: int = 3"), "{}", vars.text);
    let names = f
        .ok(json!({"op": "evaluate", "expression": "names", "frame_id": main_frame}))
        .await;
    assert!(names.text.contains("\"a\""), "{}", names.text);
    f.ok(json!({"op": "evaluate", "expression": "q.X + q.Y"}))
        .await;
    f.ok(json!({"op": "step_over"})).await;
    let done = f.ok(json!({"op": "continue"})).await;
    assert!(!done.text.contains("running"), "{}", done.text);
    let out = f.ok(json!({"op": "output", "cursor": 0})).await;
    assert!(out.text.contains("q 3 6 2"), "{}", out.text);
    f.finish().await;
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}

/// A package directory under delve (`mode: debug`: delve builds it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_package_under_delve() {
    let mut f = go_fixture();
    f.ok(json!({"op": "breakpoints", "file": "main.go", "lines": [16]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "."})).await;
    assert!(
        launched.text.contains("at main.main (main.go:16)"),
        "{}",
        launched.text
    );
    let q = f.ok(json!({"op": "evaluate", "expression": "q"})).await;
    assert!(q.text.contains("X: 3"), "{}", q.text);
    // Delve built the package outside the workspace: no `__debug_bin…` beside the sources, during
    // the session or after it (a killed delve used to leave it there).
    let debug_bins = |root: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("__debug_bin"))
            .collect()
    };
    assert_eq!(debug_bins(f.root()), Vec::<String>::new());
    f.ok(json!({"op": "continue"})).await;
    f.finish().await;
    assert_eq!(debug_bins(f.root()), Vec::<String>::new());
}

/// `attach` to a headless delve server (`dlv exec --headless --listen`), which speaks DAP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_to_headless_delve() {
    use std::os::unix::process::CommandExt;
    let mut f = go_fixture();
    f.run("go", &["build", "-gcflags=all=-N -l", "-o", "demo", "."]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new("dlv")
        .args([
            "exec",
            "--headless",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "./demo",
        ])
        .current_dir(f.root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start headless dlv");
    let server = child.id();
    crate::lifecycle::wait_listening(port).await;
    f.ok(json!({"op": "breakpoints", "file": "main.go", "lines": [9]}))
        .await;
    let attached = f
        .ok(json!({"op": "attach", "port": port, "adapter": "delve"}))
        .await;
    assert!(
        attached.text.contains("at main.scale (main.go:9)"),
        "{}",
        attached.text
    );
    let k = f.ok(json!({"op": "evaluate", "expression": "k"})).await;
    assert!(k.text.contains("= 3"), "{}", k.text);
    f.ok(json!({"op": "terminate"})).await;
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{server}")])
        .status();
    let _ = child.wait();
    crate::common::assert_gone(&[server]).await;
}

/// An unrecovered panic stops the program under delve (it needs no filter), and the stop shows
/// the panic's message and where it happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_panic_stops_with_its_message() {
    require("go");
    require("dlv");
    let src = "package main\n\nfunc check(n int) int {\n\tlimit := 3\n\tif n > limit {\n\t\tpanic(\"over the limit\")\n\t}\n\treturn n\n}\n\nfunc main() {\n\tcheck(5)\n}\n";
    let mut f = Fixture::new(
        &[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", src)],
        config(),
    );
    f.run("go", &["build", "-gcflags=all=-N -l", "-o", "demo", "."]);
    let stop = f.ok(json!({"op": "launch", "program": "demo"})).await;
    // Delve stops inside the runtime; the listing and the locals are of the first frame in the
    // workspace.
    for shown in [
        "stopped (exception",
        "exception panic: \"over the limit\"",
        "main.go:6 (frame #2, the first in the workspace)",
        "> 6 | \t\tpanic(\"over the limit\")",
        "- limit: int = 3",
    ] {
        assert!(stop.text.contains(shown), "{shown}: {}", stop.text);
    }
    f.finish().await;
}

/// A breakpoint by function name under delve (`main.helper`), set in the live session: the
/// result says where delve verified it, and `continue` stops in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_function_breakpoint_under_delve() {
    require("go");
    require("dlv");
    let src = "package main\n\nimport \"fmt\"\n\nfunc helper(n int) int {\n\tdouble := n * 2\n\treturn double\n}\n\nfunc main() {\n\tfmt.Println(\"start\")\n\tfmt.Println(helper(21))\n}\n";
    let mut f = Fixture::new(
        &[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", src)],
        config(),
    );
    f.run("go", &["build", "-gcflags=all=-N -l", "-o", "demo", "."]);
    f.ok(json!({"op": "breakpoints", "file": "main.go", "lines": [11]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    assert!(launched.text.contains("main.go:11"), "{}", launched.text);
    let set = f
        .ok(json!({"op": "breakpoints", "function": "main.helper"}))
        .await;
    assert!(
        set.text
            .contains("- function main.helper: verified at main.go:5"),
        "{}",
        set.text
    );
    let stop = f.ok(json!({"op": "continue"})).await;
    for shown in ["at main.helper (main.go:", "- n: int = 21"] {
        assert!(stop.text.contains(shown), "{shown}: {}", stop.text);
    }
    f.finish().await;
}
