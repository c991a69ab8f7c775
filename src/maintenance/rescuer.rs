//! The rescuer: running jobs whose lease expired (their runner died) go
//! back to the queue as an attempt that failed with `runner_lost`, or fail
//! when they are out of attempts.

use crate::store::{JobStore, StoreResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How often expired leases are looked for.
pub const RESCUE_EVERY: Duration = Duration::from_secs(5);

pub struct Rescuer {
    store: Arc<dyn JobStore>,
    /// Rung when jobs are queued again, so runners claim them at once.
    wake: Arc<Notify>,
}

impl Rescuer {
    pub fn new(store: Arc<dyn JobStore>, wake: Arc<Notify>) -> Self {
        Rescuer { store, wake }
    }

    /// Rescues what has expired now; how many jobs it moved.
    pub async fn rescue(&self, all_running: bool) -> StoreResult<usize> {
        let rescued = self.store.job_rescue(all_running).await?;
        for r in &rescued {
            tracing::warn!(job = %r.id, status = %r.status, "rescued a job whose runner was lost");
        }
        if !rescued.is_empty() {
            self.wake.notify_one();
        }
        Ok(rescued.len())
    }
}

#[async_trait::async_trait]
impl super::Service for Rescuer {
    fn name(&self) -> &'static str {
        "rescuer"
    }

    fn interval(&self) -> Duration {
        RESCUE_EVERY
    }

    async fn run_once(&self) {
        if let Err(e) = self.rescue(false).await {
            tracing::warn!(error = %e, "rescue failed");
        }
    }
}
