mod common;
use common::*;
use serde_json::json;
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch() {
    let fx = fixture("python", config("python", "pylsp"));
    let o = fx.write("broken.py", "from lib import make_greeter\n\nvalue = make_greeter()\n").await;
    println!("{}", o.text);
    let o = fx.write("broken.py", "from lib import make_greeter\n\nvalue = make_greeter_typo()\n").await;
    println!("{}", o.text);
    let o = fx.lsp(json!({"operation":"diagnostics","file":"broken.py"})).await;
    println!("{}", o.text);
    let o = fx.lsp(json!({"operation":"status"})).await;
    println!("{}", o.text);
}
