//! The queue keeper: fails queued jobs past their `expire_after_ms` with
//! kind `expired`, and now and then puts back in line jobs that a resume
//! cut short (by a crash) left parked on a queue no longer paused.

use crate::store::{JobStore, StoreResult};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How often expired jobs are looked for: an expired job that a claim
/// meets first is passed over, so this bounds how late it fails.
pub const EXPIRE_EVERY: Duration = Duration::from_secs(1);
/// Rounds between two tidies (a tidy reads every parked job).
const TIDY_EVERY_ROUNDS: u32 = 300;
/// Most jobs expired in one write.
const EXPIRE_BATCH: u32 = 1000;

pub struct QueueKeeper {
    store: Arc<dyn JobStore>,
    /// Rung when parked jobs are put back in line.
    wake: Arc<Notify>,
    rounds: AtomicU32,
}

impl QueueKeeper {
    pub fn new(store: Arc<dyn JobStore>, wake: Arc<Notify>) -> Self {
        QueueKeeper {
            store,
            wake,
            rounds: AtomicU32::new(0),
        }
    }

    /// Fails every job expired now, a batch per write; how many.
    pub async fn expire(&self) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let n = self.store.job_expire(EXPIRE_BATCH).await?;
            total += n;
            if n < u64::from(EXPIRE_BATCH) {
                return Ok(total);
            }
        }
    }

    /// Puts back in line what a cut-short resume left parked; how many.
    pub async fn tidy(&self) -> StoreResult<u64> {
        let n = self.store.queue_tidy().await?;
        if n > 0 {
            self.wake.notify_one();
        }
        Ok(n)
    }
}

#[async_trait::async_trait]
impl super::Service for QueueKeeper {
    fn name(&self) -> &'static str {
        "queue-keeper"
    }

    fn interval(&self) -> Duration {
        EXPIRE_EVERY
    }

    async fn run_once(&self) {
        match self.expire().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(jobs = n, "expired jobs still queued past expire_after_ms"),
            Err(e) => tracing::warn!(error = %e, "expiring jobs failed"),
        }
        if self
            .rounds
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(TIDY_EVERY_ROUNDS)
        {
            match self.tidy().await {
                Ok(0) => {}
                Ok(n) => tracing::warn!(
                    jobs = n,
                    "put back in line jobs a cut-short resume left parked"
                ),
                Err(e) => tracing::warn!(error = %e, "tidying paused queues failed"),
            }
        }
    }
}
