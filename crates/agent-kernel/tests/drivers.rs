//! The shipped drivers are valid source files on their own: every module of the Python driver
//! package passes `python3 -m py_compile`, and every module of the node driver package passes
//! `node --check`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn driver_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/driver")
}

/// Run `cmd`; panic with its output unless it succeeds.
fn check(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not run: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_python_driver_module_compiles_on_its_own() {
    let python = agent_testkit::require("python3");
    let package = driver_dir().join("agent_kernel_driver");
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&package)
        .expect("the driver package")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    modules.sort();
    assert!(modules.len() >= 5, "{modules:?}");
    // bytecode goes to a temporary directory, never into the source tree
    let cache = tempfile::tempdir().expect("tempdir");
    for module in &modules {
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "py_compile"])
            .arg(module)
            .env("PYTHONPYCACHEPREFIX", cache.path());
        check(cmd, &format!("python3 -m py_compile {}", module.display()));
        // the first line says the module's one job
        let source = std::fs::read_to_string(module).expect("read");
        let first = source.lines().next().unwrap_or("");
        assert!(
            first.starts_with("\"\"\"") && first.len() > 20,
            "{}: the first line should be a docstring saying its job: {first:?}",
            module.display()
        );
    }
}

#[test]
fn every_node_driver_module_passes_node_check() {
    let node = agent_testkit::require("node");
    let mut modules: Vec<PathBuf> = std::fs::read_dir(driver_dir().join("node"))
        .expect("the node driver package")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    modules.sort();
    assert!(modules.len() >= 5, "{modules:?}");
    for module in &modules {
        let mut cmd = Command::new(&node);
        cmd.arg("--check").arg(module);
        check(cmd, &format!("node --check {}", module.display()));
    }
}
