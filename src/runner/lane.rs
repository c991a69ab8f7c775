//! The prompt lane: one worker on a thread of normal priority that starts
//! the attempts of tenants with nothing running. The other workers run on
//! threads of lower priority (guests must not slow the server), so under a
//! flood of one tenant's guests a quiet tenant's job would wait for a core
//! behind them; here it starts at once. An attempt still running after a
//! short slice is handed to the guests' runtime, where it goes on at their
//! priority, and the lane takes the next: a tenant gets at most a slice of
//! normal priority per attempt, and only while it has nothing else running.

use super::{attempt, give_back, Inner};
use std::sync::Arc;
use std::time::Duration;

/// How long an attempt runs on the lane before it is handed on (it is
/// handed on at its guest's first yield after this, within one epoch).
pub const SLICE: Duration = Duration::from_millis(2);

/// The lane's runtime: one thread, at the priority the process has.
pub fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("taskbox-prompt")
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            tracing::warn!(error = %e, "cannot start the prompt lane; idle tenants' attempts start on the guests' threads");
            None
        }
    }
}

/// Starts each idle tenant's job the dispatch hands the lane, one at a time.
pub async fn run(inner: Arc<Inner>) {
    while let Some((job, seat)) = inner.dispatch.next_prompt().await {
        if inner.stopping.is_cancelled() {
            give_back(&inner, &job, 0).await;
            inner.seat_free(&job.tenant, seat, None).await;
            inner.dispatch.lane_free();
            continue;
        }
        let mut running = Box::pin(attempt(inner.clone(), job, seat));
        let ended = tokio::select! {
            biased;
            () = &mut running => true,
            () = tokio::time::sleep(SLICE) => false,
        };
        if !ended {
            inner.guests.spawn(running);
        }
        inner.dispatch.lane_free();
    }
}
