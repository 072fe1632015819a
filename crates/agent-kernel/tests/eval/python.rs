use crate::common::*;
use agent_kernel::KernelConfig;
use serde_json::json;

/// Runs cells in order on one kernel and checks each text exactly.
async fn session(kit: &Kit, cells: &[(&str, &str)]) {
    for (code, want) in cells {
        let out = kit.py(code).await;
        assert!(!out.is_error, "cell {code:?} failed: {}", out.text);
        assert_eq!(kit.redact(&out.text), *want, "cell {code:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_cells_persist_echo_and_capture_in_order() {
    let kit = Kit::new(KernelConfig::default());
    session(
        &kit,
        &[
            ("x = 20\nimport math", "(no output)"),
            ("x + 1", "21"),
            ("y = x * 2\ny", "40"),
            ("x + 1;", "(no output)"),
            ("print('a'); import sys; print('b', file=sys.stderr); print('c')", "a\nb\nc"),
            ("for i in range(3):\n    print(i)\nmath.sqrt(16)", "0\n1\n2\n4.0"),
            ("display('shown', {'k': [1, 2]})\nNone", "shown\n{'k': [1, 2]}"),
            ("def f(n):\n    return n * 3\nf(x)", "60"),
            ("'text'", "'text'"),
            ("import os, sys\nsys.executable.startswith(os.getcwd()) and '.venv' in sys.executable", "True"),
            ("await __import__('asyncio').sleep(0)\n'awaited'", "'awaited'"),
        ],
    )
    .await;
}

#[test]
fn eval_schema_and_description() {
    let kit = Kit::new(KernelConfig::default());
    let info = kit
        .registry
        .list(agent_tier::Surface::Full)
        .into_iter()
        .find(|i| i.name == "eval")
        .expect("eval is registered");
    assert_eq!(info.tier, agent_tier::Tier::Exec);
    assert!(!info.parallel_safe);
    insta::assert_json_snapshot!("eval_schema", info.input_schema);
    insta::assert_snapshot!("eval_description", info.description);
    assert!(
        kit.registry
            .list(agent_tier::Surface::Plan)
            .iter()
            .all(|i| i.name != "eval")
    );
    let doctor = agent_kernel::doctor(kit.dir.path());
    let python = doctor
        .iter()
        .find(|d| d.id == "python")
        .expect("python entry");
    assert!(python.usable(), "{}", python.summary());
    assert!(
        python
            .binary
            .as_ref()
            .is_some_and(|b| b.starts_with(kit.dir.path().join(".venv"))),
        "{}",
        python.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_binary_junk_cannot_corrupt_the_wire() {
    let kit = Kit::new(KernelConfig::default());
    let junk = "import os, sys\nos.write(1, bytes(range(256)) * 4)\nos.write(2, b'\\x1e\\xff{\"t\":\"done\"}\\n')\nsys.stdout.buffer.write(b'\\x00\\x1eabc:{}\\n')\nos.system('printf \"\\\\036zz:{}\\\\n\"')\n'still here'";
    let out = kit.py(junk).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("'still here'"), "{}", out.text);
    assert!(out.text.contains("{\"t\":\"done\"}"), "{}", out.text);
    ok(&kit.py("1 + 1").await, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_errors_are_short_and_point_at_the_cell() {
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .py("def inner():\n    return 1 / 0\n\nx = 5\ninner()")
        .await;
    assert!(out.is_error);
    assert_eq!(status(&out), "error");
    insta::assert_snapshot!("python_traceback", out.text);

    let out = kit.py("import json\njson.loads('{bad')").await;
    assert!(out.is_error);
    contains(
        &out,
        &[
            "File \"<cell 2>\", line 2",
            "JSONDecodeError",
            "frame(s) inside libraries omitted",
        ],
    );

    let out = kit.py("x = (1,").await;
    assert!(out.is_error);
    contains(&out, &["SyntaxError", "<cell 3>"]);

    let out = kit.py("name = input('your name? ')").await;
    assert!(out.is_error);
    insta::assert_snapshot!("python_input", out.text);

    // the kernel survives errors, with its state
    ok(&kit.py("x").await, "5");

    // A label outside 5–10 words runs, with a note; an empty one is refused.
    let out = kit.call(json!({"code": "1", "label": "too short"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("`description` has 2 word(s)"),
        "{}",
        out.text
    );
    let out = kit
        .call(json!({"code": "1", "description": "one two three four five six seven eight nine ten eleven"}))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("has 11 word(s)"), "{}", out.text);
    let out = kit.call(json!({"code": "1", "description": "  "})).await;
    assert!(out.is_error);
    insta::assert_snapshot!("description_too_short", out.text);
    let out = kit
        .call(json!({"code": "1", "description": "run a test cell for the kernel", "language": "ruby"}))
        .await;
    assert!(out.is_error);
    insta::assert_snapshot!("invalid_language", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_magics_are_rewritten() {
    let kit = Kit::new(KernelConfig::default());
    std::fs::create_dir(kit.dir.path().join("sub")).expect("mkdir");
    std::fs::write(kit.dir.path().join("sub/a.txt"), "hello\n").expect("write");
    session(
        &kit,
        &[
            ("%cd sub", "[ROOT]/sub"),
            ("%pwd", "'[ROOT]/sub'"),
            ("!cat a.txt", "hello"),
            ("name = 'a.txt'\n!wc -c {name}", "6 a.txt"),
            ("files = !ls\nfiles", "['a.txt']"),
            (
                "%%bash\necho from bash\nfor i in 1 2; do echo $i; done",
                "from bash\n1\n2",
            ),
            ("%env AGENT_KERNEL_TEST=yes", "env: AGENT_KERNEL_TEST=yes"),
            ("%env AGENT_KERNEL_TEST", "'yes'"),
            ("import os\nos.environ['AGENT_KERNEL_TEST']", "'yes'"),
            ("%matplotlib inline", "(no output)"),
            ("if True:\n    !echo indented", "indented"),
        ],
    )
    .await;

    let out = kit.py("%time total = sum(range(1000))\ntotal").await;
    assert!(!out.is_error, "{}", out.text);
    contains(&out, &["CPU times:", "Wall time:", "499500"]);
    let out = kit.py("%timeit -n 5 -r 2 sum(range(10))").await;
    contains(
        &out,
        &["per loop (mean ± std. dev. of 2 runs, 5 loops each)"],
    );
    let out = kit
        .py("%%timeit -n 3 -r 2 data = list(range(50))\nsorted(data)")
        .await;
    contains(
        &out,
        &["per loop (mean ± std. dev. of 2 runs, 3 loops each)"],
    );
    let out = kit.py("%%time\nz = 7").await;
    contains(&out, &["Wall time:"]);
    ok(&kit.py("!false").await, "(exit status 1)");

    let out = kit.py("%load_ext autoreload").await;
    assert!(out.is_error);
    insta::assert_snapshot!("unknown_magic", out.text);
    let out = kit.py("%%writefile x.py\nprint(1)").await;
    assert!(out.is_error);
    contains(&out, &["unknown magic `%%writefile`"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_dataframes_and_figures() {
    let kit = Kit::new(KernelConfig::default());
    let out = kit
        .py("import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [4.5, 19.0]})\ndf")
        .await;
    assert!(!out.is_error, "{}", out.text);
    insta::assert_snapshot!("dataframe", out.text);
    let result = &out.structured.as_ref().expect("structured")["result"];
    let html = result["text/html"].as_str().expect("html table");
    assert!(html.contains("<table") && html.contains("Oslo"), "{html}");

    let out = kit.py("display(df.describe())\nprint('after')").await;
    contains(&out, &["temp", "mean", "after"]);

    let out = kit
        .py("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 3))\nax.plot([1, 2, 3], [2, 4, 1])\nplt.show()\nprint('plotted')")
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.images.len(), 1, "{}", out.text);
    let png = &out.images[0];
    assert_eq!(png.mime_type, "image/png");
    assert!(png.data.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.data.len() > 1000);
    contains(&out, &["plotted", "[image 1: PNG "]);

    // figures are closed after each cell
    let out = kit.py("len(plt.get_fignums())").await;
    ok(&out, "0");
    assert!(out.images.is_empty());

    // two figures in one cell
    let out = kit
        .py("plt.figure(); plt.plot([1]); plt.figure(); plt.bar([1], [2]); None")
        .await;
    assert_eq!(out.images.len(), 2, "{}", out.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_output_is_capped_with_a_note() {
    let config = KernelConfig {
        output_cap: 2000,
        ..Default::default()
    };
    let kit = Kit::new(config);
    let out = kit.py("for i in range(5000):\n    print('line', i)").await;
    assert!(!out.is_error);
    contains(
        &out,
        &[
            "line 0\n",
            "bytes of output cut here (the cap is 2000 bytes)",
            "line 4999",
        ],
    );
    assert!(out.text.len() < 2300, "{}", out.text.len());
    let cut = out.structured.as_ref().expect("structured")["output_cut_bytes"]
        .as_u64()
        .unwrap_or(0);
    assert!(cut > 40_000, "{cut}");
}

/// `%pip` installs a local wheel into the project's own venv, and a reinstall of a new version is
/// seen by the next import (the old modules are evicted from `sys.modules`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_pip_installs_a_local_package() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = tools_venv().join("bin/python");
    let made = std::process::Command::new(&base)
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(dir.path().join(".venv"))
        .status()
        .expect("run python -m venv");
    assert!(made.success(), "python -m venv failed");
    let kit = Kit::in_dir(dir, KernelConfig::default(), Vec::new());
    let wheels = kit.dir.path().join("wheels");
    std::fs::create_dir(&wheels).expect("mkdir");
    let make = r#"
import zipfile, sys, os
def wheel(version, dest):
    name = "agentk_demo"
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = '{version}'\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: agentk-demo\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/top_level.txt": f"{name}\n",
    }
    record = "".join(f"{p},,\n" for p in files) + f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record
    path = os.path.join(dest, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for p, c in files.items():
            z.writestr(p, c)
    return path
"#;
    let w = wheels.to_string_lossy();
    let out = kit
        .py(&format!(
            "{make}\nw1 = wheel('0.1', {w:?})\nw2 = wheel('0.2', {w:?})"
        ))
        .await;
    assert!(!out.is_error, "{}", out.text);

    let out = kit.py("%pip install --no-index --no-deps {w1}").await;
    assert!(!out.is_error, "{}", out.text);
    contains(&out, &["Successfully installed agentk-demo-0.1"]);
    ok(
        &kit.py("import agentk_demo\nagentk_demo.VERSION").await,
        "'0.1'",
    );

    let out = kit
        .py("%pip install --no-index --no-deps --upgrade {w2}")
        .await;
    assert!(!out.is_error, "{}", out.text);
    contains(
        &out,
        &[
            "Successfully installed agentk-demo-0.2",
            "evicted 1 module(s) from sys.modules",
        ],
    );
    ok(
        &kit.py("import agentk_demo\nagentk_demo.VERSION").await,
        "'0.2'",
    );
    ok(
        &kit.py("import sys\nsys.prefix.endswith('.venv') and agentk_demo.__file__.startswith(sys.prefix)").await,
        "True",
    );

    let out = kit
        .py("%pip install --no-index definitely-not-a-package-agentk")
        .await;
    assert!(out.is_error);
    contains(&out, &["pip exited with status"]);
}
