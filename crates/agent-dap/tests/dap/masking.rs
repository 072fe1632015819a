//! Issue 42, debugging that is safe to show a model: a value whose variable's name looks like a
//! secret's, or that holds a bearer token or the value of a secret environment variable, is
//! masked in the stop's locals and in `evaluate`, saying so; `reveal: true` shows it. Against
//! debugpy and delve.

use crate::common::{Fixture, config, require};
use serde_json::json;

const TOKEN: &str = "tok-1234567890abcdef";

/// The stop's locals section of an answer.
fn locals_of(text: &str) -> String {
    let at = text.find("Locals of frame").expect("a locals section");
    text[at..].to_string()
}
const BEARER: &str = "Bearer abcdefghijklmnopqrstuv";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugpy_masks_secrets_unless_revealed() {
    require("python3");
    let app = format!(
        "API_TOKEN = \"{TOKEN}\"\nauth_header = \"{BEARER}\"\nconn = \"postgres://app:from-the-env-42@db\"\nplain = \"hello\"\nprint(plain)\n"
    );
    let mut f = Fixture::new(
        &[
            ("pyproject.toml", "[project]\nname='demo'\n"),
            ("app.py", &app),
        ],
        config(),
    );
    f.link_venv();
    f.ok(json!({"op": "breakpoints", "file": "app.py", "lines": [5]}))
        .await;
    let launched = f
        .ok(json!({"op": "launch", "program": "app.py", "env": {"DB_PASSWORD": "from-the-env-42"}}))
        .await;
    let text = &launched.text;
    assert!(text.contains("plain: str = 'hello'"), "{text}");
    for (name, why) in [
        ("API_TOKEN", "its name looks like a secret's"),
        ("auth_header", "it holds a bearer token"),
        (
            "conn",
            "it holds the value of a secret environment variable",
        ),
    ] {
        assert!(
            text.contains(&format!(
                "{name}: str = <masked: {why}; `reveal: true` shows it>"
            )),
            "{name}: {text}"
        );
    }
    // The locals (the source listing around the stop shows the file as it is: `read` would).
    let locals = locals_of(text);
    assert!(
        !locals.contains(TOKEN)
            && !locals.contains("abcdefghijklmnopqrstuv")
            && !locals.contains("from-the-env-42"),
        "{locals}"
    );
    let masked = f
        .ok(json!({"op": "evaluate", "expression": "API_TOKEN"}))
        .await;
    assert!(
        !masked.text.contains(TOKEN) && masked.text.contains("<masked"),
        "{}",
        masked.text
    );
    assert_eq!(masked.structured.as_ref().unwrap()["masked"], true);
    let shown = f
        .ok(json!({"op": "evaluate", "expression": "API_TOKEN", "reveal": true}))
        .await;
    assert!(shown.text.contains(TOKEN), "{}", shown.text);
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delve_masks_secrets_unless_revealed() {
    require("go");
    require("dlv");
    let src = format!(
        "package main\n\nimport \"fmt\"\n\nfunc main() {{\n\tapiToken := \"{TOKEN}\"\n\theader := \"{BEARER}\"\n\tplain := \"hello\"\n\tfmt.Println(plain, len(apiToken), len(header))\n}}\n"
    );
    let mut f = Fixture::new(
        &[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", &src)],
        config(),
    );
    f.run("go", &["build", "-gcflags=all=-N -l", "-o", "demo", "."]);
    f.ok(json!({"op": "breakpoints", "file": "main.go", "lines": [9]}))
        .await;
    let launched = f.ok(json!({"op": "launch", "program": "demo"})).await;
    let text = &launched.text;
    assert!(text.contains("plain: string = \"hello\""), "{text}");
    assert!(
        text.contains("apiToken: string = <masked: its name looks like a secret's")
            && text.contains("header: string = <masked: it holds a bearer token"),
        "{text}"
    );
    let locals = locals_of(text);
    assert!(
        !locals.contains(TOKEN) && !locals.contains("abcdefghijklmnopqrstuv"),
        "{locals}"
    );
    let shown = f
        .ok(json!({"op": "evaluate", "expression": "apiToken", "reveal": true}))
        .await;
    assert!(shown.text.contains(TOKEN), "{}", shown.text);
    let masked = f
        .ok(json!({"op": "evaluate", "expression": "header"}))
        .await;
    assert!(
        !masked.text.contains("abcdefghijklmnopqrstuv"),
        "{}",
        masked.text
    );
    f.finish().await;
}
