use crate::common::{Fixture, config, filters, require};
use serde_json::json;

const C_SRC: &str = r#"#include <stdio.h>

struct point { int x; int y; };

int add(int a, int b) {
    int sum = a + b;
    return sum;
}

int main(void) {
    struct point p = { 3, 4 };
    int r = add(p.x, p.y);
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
    assert!(
        launched.text.contains("at add (main.c:6)"),
        "{}",
        launched.text
    );
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
    let scopes = f.ok(json!({"op": "scopes", "frame_id": main_frame})).await;
    let locals = scopes.structured.as_ref().unwrap()["scopes"][0]["reference"]
        .as_i64()
        .unwrap();
    let vars = f.ok(json!({"op": "variables", "reference": locals})).await;
    assert!(vars.text.contains("p: point = "), "{}", vars.text);
    f.ok(json!({"op": "evaluate", "expression": "a * b"})).await;
    f.ok(json!({"op": "evaluate", "expression": "p.y", "frame_id": main_frame}))
        .await;
    f.ok(json!({"op": "step_out"})).await;
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
    let scopes = f.ok(json!({"op": "scopes", "frame_id": top})).await;
    let locals = scopes.structured.as_ref().unwrap()["scopes"][0]["reference"]
        .as_i64()
        .unwrap();
    let vars = f.ok(json!({"op": "variables", "reference": locals})).await;
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
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(f.redacted());
    });
}
