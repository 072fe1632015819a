//! pylsp (with pyflakes, installed by `cargo xtask setup`) against the Python fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pylsp() {
    python_cases::run("pylsp", "pylsp", true).await;
}
