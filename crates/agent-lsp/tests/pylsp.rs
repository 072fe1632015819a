//! pylsp against the Python fixture.
mod common;
mod python_cases;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pylsp() {
    python_cases::run("pylsp", "pylsp", false).await;
}
