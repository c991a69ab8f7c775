//! The queue keeper: fails queued jobs past their `expire_after_ms` with
//! kind `expired` (each with its task's `on_fail` job, built before the
//! write and inserted in it), and now and then puts back in line jobs that
//! a resume cut short (by a crash) left parked on a queue no longer paused,
//! and deletes throttle keys that hold nothing any more.

use crate::job::JobError;
use crate::registry::{Registry, RegistryError};
use crate::runner::callbacks::{callback_job, Callback};
use crate::store::{Expire, ExpiringJob, JobStore, StoreResult};
use serde_json::json;
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
    registry: Arc<Registry>,
    store: Arc<dyn JobStore>,
    /// Rung when parked jobs are put back in line.
    wake: Arc<Notify>,
    rounds: AtomicU32,
}

impl QueueKeeper {
    pub fn new(registry: Arc<Registry>, wake: Arc<Notify>) -> Self {
        QueueKeeper {
            store: registry.store().clone(),
            registry,
            wake,
            rounds: AtomicU32::new(0),
        }
    }

    /// Fails every job expired now, a batch per write; how many.
    pub async fn expire(&self) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let expiring = self.store.job_expiring(EXPIRE_BATCH).await?;
            let read = expiring.len();
            let mut jobs = Vec::with_capacity(read);
            for job in expiring {
                // One whose callback cannot be built now waits for the
                // next round, rather than fail without it.
                if let Some(on_fail) = self.on_fail(&job).await {
                    jobs.push(Expire {
                        id: job.id,
                        on_fail,
                    });
                }
            }
            let built = jobs.len();
            total += self.store.job_expire(jobs).await?;
            if read < EXPIRE_BATCH as usize || built < read {
                return Ok(total);
            }
        }
    }

    /// The `on_fail` job of an expiring job's task, if it has one (`Some`
    /// of it); `None` when it cannot be told or built now.
    async fn on_fail(&self, job: &ExpiringJob) -> Option<Option<crate::store::NewJob>> {
        let task = match self
            .registry
            .task(&job.tenant, &job.task, Some(job.task_version))
            .await
        {
            Ok(task) => task,
            Err(RegistryError::Store(e)) => {
                tracing::debug!(job = %job.id, error = %e, "an expiring job's task cannot be read now");
                return None;
            }
            // Gone (or never readable): it fails without a callback.
            Err(_) => return Some(None),
        };
        let Some(name) = task.spec.on_fail.as_ref() else {
            return Some(None);
        };
        let error = JobError::expired();
        let about = json!({
            "id": job.id,
            "task": job.task,
            "queue": job.queue,
            "attempts": job.attempts,
        });
        let call = Callback {
            tenant: &job.tenant,
            name,
            about,
            key: "error",
            value: error.brief(),
        };
        // An expiring job never ran, and only jobs a client or a schedule
        // made carry an expiry (callbacks do not): its callback is one
        // deep.
        callback_job(&self.registry, call, 1)
            .await
            .ok()
            .map(|(job, _)| job)
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
            if let Err(e) = self.store.throttle_tidy().await {
                tracing::warn!(error = %e, "deleting spent throttle keys failed");
            }
        }
    }
}
