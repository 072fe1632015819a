//! basedpyright against the Python fixture.
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basedpyright() {
    python_cases::run("basedpyright", "basedpyright-langserver", true).await;
}
