//! The Python cases, shared by pyright, basedpyright, ty and pylsp.
use crate::common::*;
use serde_json::json;

pub async fn run(server: &str, program: &str) {
    require(program);
    let fx = fixture("python", config("python", server));
    let cases = vec![
        ok(
            json!({"operation": "definition", "file": "main.py", "line": 4, "symbol": "make_greeter"}),
            &["lib.py:12:5: def make_greeter() -> Greeter:"],
        ),
        ok(
            json!({"operation": "definition", "file": "main.py", "line": 5, "symbol": "greet"}),
            &["lib.py:7:9: def greet(self, name: str) -> str:"],
        ),
        ok(
            json!({"operation": "hover", "file": "main.py", "line": 4, "symbol": "make_greeter"}),
            &["make_greeter", "Build a greeter."],
        ),
        ok(
            json!({"operation": "references", "file": "lib.py", "line": 12, "symbol": "make_greeter"}),
            &["main.py:4:", "main.py:9:12: return make_greeter()"],
        ),
        ok(
            json!({"operation": "symbols", "file": "lib.py"}),
            &["class Greeter", "greet", "make_greeter"],
        ),
        ok(
            json!({"operation": "diagnostics", "file": "main.py"}),
            &["no errors or warnings in `main.py`"],
        ),
    ];
    check_all(&fx, &cases).await;
    check_write_ledger(
        &fx,
        "broken.py",
        "from lib import make_greeter\n\nvalue = make_greeter()\n",
        "from lib import make_greeter\n\nvalue = make_greeter_typo()\n",
        "make_greeter_typo",
    )
    .await;
}
