use crate::common::*;
use agent_kernel::KernelConfig;

async fn session(kit: &Kit, cells: &[(&str, &str)]) {
    for (code, want) in cells {
        let out = kit.js(code).await;
        assert!(!out.is_error, "cell {code:?} failed: {}", out.text);
        assert_eq!(kit.redact(&out.text), *want, "cell {code:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_declarations_persist_and_redeclare() {
    require_node();
    let kit = Kit::new(KernelConfig::default());
    session(
        &kit,
        &[
            ("let x = 1\nconst y = 2\nfunction f(a) { return a * 10 }\nclass C { m() { return 3 } }\nx + y", "3"),
            ("let x = 5\nconst y = 6\nf(x) + y + new C().m()", "59"),
            ("const data = await Promise.resolve([1, 2, 3])\nlet { a, b: [c] } = { a: 1, b: [2] }, z\ndata.length + a + c", "6"),
            ("`${data.join('-')} ${z} ${typeof f}`", "'1-2-3 undefined function'"),
            ("async function twice(v) { return v * 2 }\nconst t = await twice(21)\nt", "42"),
            ("t + 1", "43"),
            ("class D extends C { m() { return super.m() + 1 } }\nnew D().m()", "4"),
            ("console.log('a', { k: 1 }); console.error('b'); process.stdout.write('c\\n')", "a { k: 1 }\nb\nc\ntrue"),
            ("display({ shown: true }, 'plain text')", "{ shown: true }\nplain text"),
            ("const re = /a\\/b[/]/g; re.source", "'a\\\\/b[/]'"),
            ("Promise.resolve(7)", "7"),
            ("await new Promise(r => setTimeout(r, 10))\nconst later = 'set'", "(no output)"),
            ("later", "'set'"),
            ("require('path').basename('/a/b.txt')", "'b.txt'"),
            ("undefined", "(no output)"),
            (
                "import fs from 'fs'\nimport { basename, join as pjoin } from 'path'\nimport * as os from 'os'\n[typeof fs.readFileSync, basename('/a/b.txt'), pjoin('x', 'y'), typeof os.platform]",
                "[ 'function', 'b.txt', 'x/y', 'function' ]",
            ),
            ("basename('/persisted/import')", "'import'"),
            ("(await import('path')).sep", "'/'"),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_errors_and_junk() {
    require_node();
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .js("function g() {\n  throw new TypeError('boom')\n}\ng()")
        .await;
    assert!(out.is_error);
    insta::assert_snapshot!("javascript_traceback", out.text);

    let out = kit
        .js("const v = await Promise.reject(new RangeError('nope'))")
        .await;
    assert!(out.is_error);
    contains(&out, &["RangeError: nope", "<cell 2>"]);

    let out = kit
        .js("process.stdout.write(Buffer.from([0xff, 0x00, 0x1e, 0x41]))\nrequire('fs').writeSync(1, '\\x1eabc:{\"t\":\"done\"} raw bytes on fd 1\\n')\n'still here'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    contains(&out, &["raw bytes on fd 1", "'still here'"]);
    ok(&kit.js("1 + 1").await, "2");

    // a child with inherited stdio reads /dev/null, not the host's messages; its output shows
    let out = kit
        .js("require('child_process').execSync('cat; echo child says hi', { stdio: 'inherit' }); 'after'")
        .await;
    assert!(!out.is_error, "{}", out.text);
    contains(&out, &["child says hi", "'after'"]);
    ok(&kit.js("1 + 2").await, "3");

    let out = kit.js("process.stdin.read()").await;
    // reading the fake stdin yields nothing; it never blocks
    assert!(!out.text.is_empty());
}
