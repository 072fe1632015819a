//! typescript-language-server (npm, with typescript@6) against the TypeScript fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_language_server() {
    require("typescript-language-server");
    let fx = fixture("ts", config("typescript", "typescript-language-server"));
    let cases = vec![
        // First call on a fresh server: diagnostics must not race its (dynamic) pull registration.
        ok(
            json!({"operation": "diagnostics", "file": "src/main.ts"}),
            &["no errors or warnings in `src/main.ts`"],
        ),
        ok(
            json!({"operation": "definition", "file": "src/main.ts", "line": 4, "symbol": "makeGreeter"}),
            &["src/lib.ts:14:17: export function makeGreeter(): Greeter {"],
        ),
        ok(
            json!({"operation": "type_definition", "file": "src/main.ts", "line": 4, "symbol": "g ="}),
            &["src/lib.ts:7:14: export class Greeter implements Greet {"],
        ),
        ok(
            json!({"operation": "implementation", "file": "src/lib.ts", "line": 2, "symbol": "Greet"}),
            &["src/lib.ts:7:14"],
        ),
        ok(
            json!({"operation": "references", "file": "src/lib.ts", "line": 14, "symbol": "makeGreeter"}),
            &["src/main.ts:4:", "src/main.ts:8:10: return makeGreeter();"],
        ),
        ok(
            json!({"operation": "hover", "file": "src/main.ts", "line": 4, "symbol": "makeGreeter"}),
            &["makeGreeter(): Greeter", "Builds a greeter."],
        ),
        ok(
            json!({"operation": "symbols", "file": "src/lib.ts"}),
            &["class Greeter", "function makeGreeter"],
        ),
    ];
    check_all(&fx, &cases).await;
    check_write_ledger(
        &fx,
        "src/extra.ts",
        "export const n: number = 1;\n",
        "export const n: number = undefinedThingXyz;\n",
        "undefinedThingXyz",
    )
    .await;
    // A semantic error (no syntax error: the first, syntactic stage of the publishes says
    // nothing) is in the answer, and its fix reports none (issue 26).
    const HEAD: &str = "The write succeeded. The language server reports these new problems";
    let out = fx
        .write("src/typed.ts", "export const t: number = 1;\n")
        .await;
    assert!(!out.text.contains(HEAD), "{}", out.text);
    let out = fx
        .write("src/typed.ts", "export const t: number = \"one\";\n")
        .await;
    let text = fx.red(&out.text);
    assert!(
        text.contains(HEAD)
            && text.contains(
                "src/typed.ts:1:14: error[2322]: Type 'string' is not assignable to type 'number'."
            ),
        "{text}"
    );
    let out = fx
        .write("src/typed.ts", "export const t: number = 2;\n")
        .await;
    assert!(!out.text.contains(HEAD), "{}", out.text);
    check_rename(
        &fx,
        json!({"file": "src/main.ts", "line": 4, "symbol": "makeGreeter", "new_name": "buildGreeter"}),
        &["src/lib.ts", "src/main.ts"],
    )
    .await;
    assert!(
        fx.read("src/lib.ts")
            .contains("export function buildGreeter(): Greeter {")
    );
}
