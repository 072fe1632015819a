//! pyright (npm `pyright`) against the Python fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright() {
    python_cases::run("pyright", "pyright-langserver", true).await;
}
