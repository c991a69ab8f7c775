//! The queue sampler: every few seconds, each queue's depth (jobs due and
//! not started) and how long its oldest job has waited, kept a row a queue
//! a minute for a day, for the dashboard's charts. No record keeps these:
//! a queue's depth at a past minute cannot be read back from the jobs.

use crate::store::JobStore;
use std::sync::Arc;
use std::time::Duration;

/// How often a sample is taken; the minute's row holds the latest, so a
/// chart of the current minute moves while one looks at it.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(10);
/// How long samples are kept: the charts' longest span, a day, and an
/// hour's slack.
pub const KEEP_MS: i64 = 25 * 3_600_000;

pub struct Sampler {
    store: Arc<dyn JobStore>,
}

impl Sampler {
    pub fn new(store: Arc<dyn JobStore>) -> Self {
        Sampler { store }
    }
}

#[async_trait::async_trait]
impl super::Service for Sampler {
    fn name(&self) -> &'static str {
        "queue-sampler"
    }

    fn interval(&self) -> Duration {
        SAMPLE_EVERY
    }

    async fn run_once(&self) {
        if let Err(e) = self.store.queue_sample(KEEP_MS).await {
            tracing::warn!(error = %e, "sampling the queues' depths failed; the charts miss this one");
        }
    }
}
