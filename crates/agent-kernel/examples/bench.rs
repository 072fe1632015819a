//! `cargo run --release -p agent-kernel --example kernel-bench`
//!
//! Measures, in one run, the `eval` tool against `jupyter_client` + `ipykernel` (the peer) and a
//! bare `python -c pass`, all with the same interpreter (the test venv: `$AGENT_TOOLS_VENV`, else
//! `<workspace>/.tools/venv`):
//!
//! - round trip of a `1+1` cell on a warm kernel (median of many); goal ≤ 0.3× the peer's;
//! - cold start: a fresh kernel up to the result of its first `1+1` (median of several); goal
//!   ≤ 1.3× a bare `python -c pass`, and the peer's cold start is printed for reference.

use agent_tier::{Registry, RunInfo, Surface};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const ROUND_TRIPS: usize = 300;
const COLD_STARTS: usize = 31;

fn venv() -> PathBuf {
    std::env::var_os("AGENT_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv"))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

const PEER: &str = r#"
import json, statistics, sys, time
from jupyter_client.manager import KernelManager

def one_cold():
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.kernel_spec_manager.ensure_native_kernel = True
    km.start_kernel(extra_arguments=["--HistoryManager.enabled=False"])
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    reply = kc.execute_interactive("1+1", timeout=60, output_hook=lambda m: None)
    dt = time.perf_counter() - t0
    return dt, km, kc

colds = []
for _ in range(int(sys.argv[1])):
    dt, km, kc = one_cold()
    colds.append(dt)
    kc.stop_channels()
    km.shutdown_kernel(now=True)

_, km, kc = one_cold()
results = []
rts = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    kc.execute_interactive("1+1", timeout=60, output_hook=lambda m: results.append(m))
    rts.append(time.perf_counter() - t0)
ok = any(m.get("msg_type") == "execute_result" and m["content"]["data"]["text/plain"] == "2" for m in results)
kc.stop_channels()
km.shutdown_kernel(now=True)
print(json.dumps({"cold": statistics.median(colds), "rt": statistics.median(rts), "ok": ok}))
"#;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let python = venv().join("bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `cargo xtask setup` or set AGENT_TOOLS_VENV",
        python.display()
    );
    let dir = std::env::temp_dir().join(format!("agent-kernel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let config = agent_kernel::KernelConfig {
        python: Some(python.clone()),
        ..Default::default()
    };
    let new_registry = || {
        let r = Registry::new(RunInfo {
            root: dir.clone(),
            ..Default::default()
        });
        agent_kernel::attach(&r, config.clone());
        r
    };
    let cell =
        |code: &str| json!({"code": code, "description": "add one and one for the benchmark"});

    // bare python and our cold start (a new registry, no kernel yet, up to the result of
    // `1+1`), interleaved so that load on the machine hits both alike
    let mut bare = Vec::new();
    let mut colds = Vec::new();
    for _ in 0..COLD_STARTS {
        let t = Instant::now();
        let s = Command::new(&python)
            .args(["-c", "pass"])
            .status()
            .expect("python -c pass");
        assert!(s.success());
        bare.push(t.elapsed());

        let r = new_registry();
        let t = Instant::now();
        let out = r.call("eval", cell("1+1"), Surface::Full).await;
        colds.push(t.elapsed());
        assert_eq!(out.text, "2", "{}", out.text);
    }
    let (bare_min, cold_min) = (
        bare.iter().min().copied().unwrap_or_default(),
        colds.iter().min().copied().unwrap_or_default(),
    );
    let bare = median(bare);
    let cold = median(colds);

    // our round trip
    let r = new_registry();
    let out = r.call("eval", cell("1+1"), Surface::Full).await;
    assert_eq!(out.text, "2");
    let mut rts = Vec::new();
    for _ in 0..ROUND_TRIPS {
        let t = Instant::now();
        let out = r.call("eval", cell("1+1"), Surface::Full).await;
        rts.push(t.elapsed());
        assert_eq!(out.text, "2");
    }
    let rt = median(rts);

    // javascript, for reference: cold start against a bare `node -e 0`, and the round trip
    let js_cell = |code: &str| json!({"code": code, "description": "add one and one for the benchmark", "language": "javascript"});
    let mut node_bare = Vec::new();
    let mut js_colds = Vec::new();
    for _ in 0..COLD_STARTS.min(11) {
        let t = Instant::now();
        let s = Command::new("node")
            .args(["-e", "0"])
            .status()
            .expect("node -e 0 (is node on PATH?)");
        assert!(s.success());
        node_bare.push(t.elapsed());
        let r = new_registry();
        let t = Instant::now();
        let out = r.call("eval", js_cell("1+1"), Surface::Full).await;
        js_colds.push(t.elapsed());
        assert_eq!(out.text, "2", "{}", out.text);
    }
    let r = new_registry();
    let _ = r.call("eval", js_cell("1+1"), Surface::Full).await;
    let mut js_rts = Vec::new();
    for _ in 0..ROUND_TRIPS {
        let t = Instant::now();
        let out = r.call("eval", js_cell("1+1"), Surface::Full).await;
        js_rts.push(t.elapsed());
        assert_eq!(out.text, "2");
    }
    let (node_bare, js_cold, js_rt) = (median(node_bare), median(js_colds), median(js_rts));

    // the peer, in the same run
    let peer = Command::new(&python)
        .args([
            "-c",
            PEER,
            &COLD_STARTS.min(5).to_string(),
            &ROUND_TRIPS.to_string(),
        ])
        .current_dir(&dir)
        .output()
        .expect("run jupyter_client");
    assert!(
        peer.status.success(),
        "jupyter_client + ipykernel failed (install them into the venv): {}",
        String::from_utf8_lossy(&peer.stderr)
    );
    let peer: serde_json::Value = serde_json::from_slice(&peer.stdout).expect("peer prints json");
    assert_eq!(peer["ok"], json!(true), "the peer did not compute 1+1");
    let peer_cold = Duration::from_secs_f64(peer["cold"].as_f64().unwrap_or(0.0));
    let peer_rt = Duration::from_secs_f64(peer["rt"].as_f64().unwrap_or(0.0));
    let _ = std::fs::remove_dir_all(&dir);

    println!("agent-kernel bench (python {}, medians)", python.display());
    println!(
        "round trip `1+1`:   eval {}   jupyter_client+ipykernel {}   ratio {:.3} (goal <= 0.3)",
        ms(rt),
        ms(peer_rt),
        rt.as_secs_f64() / peer_rt.as_secs_f64()
    );
    println!(
        "cold start to `2`:  eval {}   bare `python -c pass` {}   ratio {:.2} (goal <= 1.3)",
        ms(cold),
        ms(bare),
        cold.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "  (fastest of {COLD_STARTS}: eval {}, bare python {}, ratio {:.2})",
        ms(cold_min),
        ms(bare_min),
        cold_min.as_secs_f64() / bare_min.as_secs_f64()
    );
    println!(
        "cold start to `2`:  eval {}   jupyter_client+ipykernel {}   ratio {:.3}",
        ms(cold),
        ms(peer_cold),
        cold.as_secs_f64() / peer_cold.as_secs_f64()
    );
    println!(
        "javascript:         round trip {}; cold start to `2` {} vs bare `node -e 0` {} (ratio {:.2})",
        ms(js_rt),
        ms(js_cold),
        ms(node_bare),
        js_cold.as_secs_f64() / node_bare.as_secs_f64()
    );
}
