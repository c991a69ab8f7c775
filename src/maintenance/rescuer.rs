//! The rescuer: running jobs whose lease expired (their runner died) have
//! their lost attempt decided like any failed one, as `runner_lost`: queued
//! again after the task's backoff, failed when out of attempts, or handed
//! to the task's fallback. A job its runner claimed but never began goes
//! back to the queue at once, its attempt uncounted.

use crate::registry::Registry;
use crate::runner::executor;
use crate::store::{Finalize, Finalized, RescueParams, StoreResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How often expired leases are looked for, at most (a short lease is
/// looked for three times a lease).
pub const RESCUE_EVERY: Duration = Duration::from_secs(5);

/// Most jobs one round takes over and decides. What a round takes it holds
/// under a lease of its own, and must decide before that runs out: a round
/// of every expired job (hundreds, when a worker with many claimed ahead
/// stops) could take longer than that on a busy machine, and then every
/// process's rescuer would take the jobs over from the last, none of them
/// ever landing its decisions.
pub const RESCUE_BATCH: u32 = 64;

pub struct Rescuer {
    registry: Arc<Registry>,
    /// Rung when jobs are queued again, so runners claim them at once.
    wake: Arc<Notify>,
    /// The lease runners take, and so the one this takes over lost jobs
    /// with while it decides them.
    lease_ms: u64,
}

impl Rescuer {
    pub fn new(registry: Arc<Registry>, wake: Arc<Notify>, lease_ms: u64) -> Self {
        Rescuer {
            registry,
            wake,
            lease_ms,
        }
    }

    /// Rescues what has expired now (`all_running`: every running job, at
    /// start), in rounds of `RESCUE_BATCH`; how many jobs it took over.
    pub async fn rescue(&self, all_running: bool) -> StoreResult<usize> {
        let mut taken = 0;
        loop {
            let n = self.round(all_running).await?;
            taken += n;
            if n < RESCUE_BATCH as usize {
                return Ok(taken);
            }
        }
    }

    /// Takes over and decides one batch; how many it took.
    async fn round(&self, all_running: bool) -> StoreResult<usize> {
        let store = self.registry.store();
        let lost = store
            .job_rescue(RescueParams {
                owner: format!("rescuer-{}", std::process::id()),
                lease_ms: self.lease_ms,
                all_running,
                limit: RESCUE_BATCH,
            })
            .await?;
        if lost.is_empty() {
            return Ok(0);
        }
        let t0 = std::time::Instant::now();
        let mut decided = Vec::with_capacity(lost.len());
        let mut deciding = Vec::with_capacity(lost.len());
        for job in &lost {
            if !job.begun {
                // Claimed ahead and never started: back to the queue,
                // its attempt uncounted.
                decided.push(Finalize::release(job, 0));
                deciding.push(job);
                continue;
            }
            // One not decided now is rescued again when this lease ends.
            if let Some(f) = executor::lost(&self.registry, job).await {
                decided.push(f);
                deciding.push(job);
            }
        }
        let closing: Vec<_> = decided.iter().map(|f| f.close_children).collect();
        // Lost attempts carry no log: cheap to keep for the metrics.
        let counted = decided.clone();
        let results = store.job_finalize(decided).await?;
        let metrics = crate::metrics::get();
        metrics.rescued(lost.len());
        for (f, result) in counted.iter().zip(&results) {
            crate::figures::finalized(f, result);
        }
        let fenced = results.iter().filter(|r| **r == Finalized::Fenced).count();
        if fenced > 0 {
            tracing::warn!(
                fenced,
                took_ms = t0.elapsed().as_millis() as u64,
                "decisions of rescued jobs were refused: another rescuer took them over (this round outlasted its lease) or the write failed; they are rescued again"
            );
        }
        for ((job, result), close) in deciding.iter().zip(&results).zip(closing) {
            // An ended parent's children, as its task's parent_close says.
            if let (Finalized::Done(s), Some(policy)) = (result, close) {
                if s.is_terminal() {
                    let r = crate::workflow::cancel::close_children(
                        store.as_ref(),
                        &job.tenant,
                        &job.id,
                        policy,
                    )
                    .await;
                    if let Err(e) = r {
                        tracing::warn!(job = %job.id, error = %e, "the ended job's children could not be cancelled");
                    }
                }
            }
            match result {
                Finalized::Done(status) if job.begun => {
                    tracing::warn!(job = %job.id, %status, "rescued a job whose runner was lost")
                }
                Finalized::Done(_) => {
                    tracing::info!(job = %job.id, "gave back a job its lost runner never began")
                }
                Finalized::Fenced => {}
            }
        }
        self.wake.notify_one();
        Ok(lost.len())
    }
}

#[async_trait::async_trait]
impl super::Service for Rescuer {
    fn name(&self) -> &'static str {
        "rescuer"
    }

    fn interval(&self) -> Duration {
        RESCUE_EVERY.min(Duration::from_millis(self.lease_ms / 3))
    }

    async fn run_once(&self) {
        if let Err(e) = self.rescue(false).await {
            tracing::warn!(error = %e, "rescue failed");
        }
    }
}
