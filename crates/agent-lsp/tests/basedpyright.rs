//! basedpyright against the Python fixture.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basedpyright() {
    python_cases::run("basedpyright", "basedpyright-langserver", true).await;
}
