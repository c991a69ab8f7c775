//! The marker: marks claimed jobs begun in the store, a window ahead of
//! their starts, so that the dispatch may start them (`Dispatch::to_mark`).
//! A job is begun only once the runner is about to start it: a runner
//! killed with jobs claimed ahead leaves those uncounted, and the rescuer
//! gives them back as they were.
//!
//! The window is twice what started during the last mark's round trip
//! (doubled instead when the starts took all of some that was begun: they
//! may have waited for the mark), narrowing by at most an eighth a mark, between
//! twice the slots and `MAX_AHEAD`: wide
//! enough that the workers seldom wait for a mark while attempts are
//! short, narrow while they are long, so that what a killed runner had
//! begun and not started is about what would have started within two
//! round trips.

use super::Inner;
use std::sync::Arc;
use std::time::Duration;

/// Most jobs marked begun ahead of their starts.
pub const MAX_AHEAD: usize = 512;

pub(super) async fn marker(inner: Arc<Inner>) {
    let store = inner.registry.store().clone();
    let least = (2 * inner.config.slots).clamp(1, MAX_AHEAD);
    let mut window = least;
    loop {
        let batch = inner.dispatch.to_mark(window);
        if batch.is_empty() {
            tokio::select! {
                () = inner.dispatch.mark_wanted() => {}
                () = inner.stopping.cancelled() => break,
            }
            continue;
        }
        let started = inner.dispatch.picks();
        // Begun and waiting when the mark went out: if the workers took
        // them all before it came back, they may have waited for it.
        let ready = inner.dispatch.begun_waiting();
        match store.job_begin(batch.clone()).await {
            Ok(()) => inner.dispatch.marked(&batch, true),
            Err(e) => {
                tracing::warn!(error = %e, jobs = batch.len(), "marking jobs begun failed; retrying shortly");
                inner.dispatch.marked(&batch, false);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                    () = inner.stopping.cancelled() => break,
                }
            }
        }
        let during = usize::try_from(inner.dispatch.picks() - started).unwrap_or(MAX_AHEAD);
        // Round trips vary (a mark may wait behind a long write): the
        // window narrows by an eighth a mark at most.
        // Nothing begun when it went out is no sign of hunger: the
        // starts had taken it before the marker looked, as they do when
        // each attempt outlasts a round trip.
        window = if ready > 0 && during >= ready {
            window.saturating_mul(2)
        } else {
            during.saturating_mul(2).max(window - window / 8)
        }
        .clamp(least, MAX_AHEAD);
        tracing::debug!(jobs = batch.len(), during, window, "marked");
    }
}
