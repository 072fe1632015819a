//! One ready bound per call. A call may wait for its server to finish loading at several
//! points (before asking, between retries of an empty or outdated answer, between rounds of a
//! rename); each wait used to get the whole ready bound, so a server that never became ready
//! (gopls with a `go.mod` line it cannot parse) made every `lsp` call on it answer after five
//! sequential 60 s waits. Now a call runs [`within`] its bound, and every wait gets at most what
//! is left of it ([`left`]).

use std::time::{Duration, Instant};

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Run `f` (one call) with at most `bound` of waiting for readiness in all.
pub async fn within<F: Future>(bound: Duration, f: F) -> F::Output {
    DEADLINE.scope(Instant::now() + bound, f).await
}

/// At most `wanted`, and no more than the current call has left (all of `wanted` outside a
/// call).
pub fn left(wanted: Duration) -> Duration {
    DEADLINE
        .try_with(|d| d.saturating_duration_since(Instant::now()))
        .map_or(wanted, |rest| rest.min(wanted))
}

/// Whether the current call has used up its bound (never outside a call).
pub fn spent() -> bool {
    DEADLINE.try_with(|d| Instant::now() >= *d).unwrap_or(false)
}
