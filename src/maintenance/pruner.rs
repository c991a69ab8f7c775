//! The pruner: completed and cancelled jobs are deleted a while after they
//! end (7 days by default), failed ones later (30 days), with their
//! attempts and logs; components no task uses are collected, and the
//! compiled artifacts of the digests no tenant has any more deleted with
//! them (this process's; other processes' caches are held to their size).
//! A pass reads
//! the jobs in id order (ULIDs rise with time, so it starts with the
//! oldest and stops at the first id too young to have ended before the
//! cutoff), a short write per step, resting between steps as long as the
//! step took, so that the queue's own writes never wait long behind it.
//! Events (the outbox's rows) and webhook deliveries are deleted once they
//! are as old as the completed jobs' retention, oldest first, in the same
//! short steps.

use crate::store::{JobStore, Millis, PruneParams, StoreResult};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long ended jobs are kept; `None` keeps them for ever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Completed and cancelled jobs; also how long a component no task
    /// uses is kept after its upload.
    pub completed: Option<Duration>,
    pub failed: Option<Duration>,
}

/// Longest retention the server can be told to keep (ten years).
pub const MAX_RETENTION: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

impl Default for Retention {
    fn default() -> Self {
        Retention {
            completed: Some(Duration::from_secs(7 * 24 * 3600)),
            failed: Some(Duration::from_secs(30 * 24 * 3600)),
        }
    }
}

/// How often a pruning round runs.
pub const PRUNE_EVERY: Duration = Duration::from_secs(1);
/// Jobs looked at per step: one short write (a few milliseconds).
pub const STEP: u32 = 128;
/// Steps per round at most; the pass goes on at the next round.
pub const STEPS_PER_ROUND: u32 = 400;
/// Event rows or deliveries deleted per step.
const EVENT_STEP: u32 = 512;
/// Least time an uploaded component is kept while no task uses it,
/// however short the retention: a client uploads, then defines its task.
/// (With a retention of 1 ms, an upload collected before its task's PUT
/// made that PUT a 404, now and then, in `the_pruner_deletes_…`.)
pub const UNUSED_COMPONENT_GRACE: Duration = Duration::from_secs(3600);
/// Rounds between two collections of unused components.
const COLLECT_EVERY_ROUNDS: u32 = 3600;

pub struct Pruner {
    store: Arc<dyn JobStore>,
    retention: Retention,
    /// Whose compiled programs a collection forgets.
    sandbox: Option<crate::sandbox::Sandbox>,
    /// Where the pass goes on from: the last id looked at.
    cursor: Mutex<String>,
    rounds: AtomicU32,
}

/// What a round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Round {
    pub jobs: u64,
    pub attempts: u64,
    pub components: u64,
    /// The pass reached its end (the next round starts a new one).
    pub pass_over: bool,
}

impl Pruner {
    pub fn new(store: Arc<dyn JobStore>, retention: Retention) -> Self {
        Pruner {
            store,
            retention,
            sandbox: None,
            cursor: Mutex::new(String::new()),
            rounds: AtomicU32::new(0),
        }
    }

    /// A pruner that forgets the compiled programs of collected digests in
    /// `sandbox` (its disk cache and its memory).
    pub fn forgetting(mut self, sandbox: crate::sandbox::Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    fn cutoff(now: Millis, keep: Option<Duration>) -> Option<Millis> {
        keep.map(|d| now.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }

    /// Up to `steps` steps of the pass.
    pub async fn round(&self, steps: u32) -> StoreResult<Round> {
        let now = self.store.now();
        let completed_before = Self::cutoff(now, self.retention.completed);
        let failed_before = Self::cutoff(now, self.retention.failed);
        let mut round = Round::default();
        let Some(later) = completed_before.max(failed_before) else {
            round.pass_over = true;
            return Ok(round);
        };
        let below_id = PruneParams::id_floor(later);
        for _ in 0..steps {
            let after_id = self
                .cursor
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let started = std::time::Instant::now();
            let step = self
                .store
                .job_prune(PruneParams {
                    after_id,
                    below_id: below_id.clone(),
                    completed_before,
                    failed_before,
                    scan: STEP,
                })
                .await?;
            round.jobs += step.jobs;
            round.attempts += step.attempts;
            let over = step.last_id.is_none();
            *self.cursor.lock().unwrap_or_else(|p| p.into_inner()) =
                step.last_id.unwrap_or_default();
            if over {
                round.pass_over = true;
                break;
            }
            // Rest as long as the step took: pruning takes at most half of
            // the database's time, so that a backlog of a million ended
            // jobs does not crowd out the queue's own writes.
            tokio::time::sleep(started.elapsed()).await;
        }
        Ok(round)
    }

    /// Deletes events and delivered or dead deliveries older than the
    /// completed jobs' retention, up to `steps` steps of each; answers how
    /// many of each.
    pub async fn events(&self, steps: u32) -> StoreResult<(u64, u64)> {
        let Some(before) = Self::cutoff(self.store.now(), self.retention.completed) else {
            return Ok((0, 0));
        };
        let mut done = (0, 0);
        for which in [0, 1] {
            for _ in 0..steps {
                let started = std::time::Instant::now();
                let n = match which {
                    0 => self.store.event_prune(before, EVENT_STEP).await?,
                    _ => self.store.delivery_prune(before, EVENT_STEP).await?,
                };
                if which == 0 {
                    done.0 += n;
                } else {
                    done.1 += n;
                }
                if n < u64::from(EVENT_STEP) {
                    break;
                }
                tokio::time::sleep(started.elapsed()).await;
            }
        }
        Ok(done)
    }

    /// Collects components no task uses, uploaded longer ago than the
    /// completed jobs' retention (and at least `UNUSED_COMPONENT_GRACE`).
    pub async fn collect(&self) -> StoreResult<u64> {
        let keep = self
            .retention
            .completed
            .map(|r| r.max(UNUSED_COMPONENT_GRACE));
        let Some(before) = Self::cutoff(self.store.now(), keep) else {
            return Ok(0);
        };
        let collected = self.store.component_collect(before).await?;
        if let Some(sandbox) = &self.sandbox {
            for d in &collected.digests {
                match d.parse::<crate::digest::Digest>() {
                    Ok(digest) => sandbox.forget(&digest),
                    Err(_) => tracing::warn!(digest = %d, "a collected digest does not parse"),
                }
            }
        }
        Ok(collected.components)
    }
}

#[async_trait::async_trait]
impl super::Service for Pruner {
    fn name(&self) -> &'static str {
        "pruner"
    }

    fn interval(&self) -> Duration {
        PRUNE_EVERY
    }

    async fn run_once(&self) {
        match self.round(STEPS_PER_ROUND).await {
            Ok(r) if r.jobs > 0 => {
                tracing::debug!(jobs = r.jobs, attempts = r.attempts, "pruned ended jobs")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "pruning failed"),
        }
        match self.events(STEPS_PER_ROUND).await {
            Ok((0, 0)) => {}
            Ok((events, deliveries)) => {
                tracing::debug!(events, deliveries, "pruned old events and deliveries")
            }
            Err(e) => tracing::warn!(error = %e, "pruning events failed"),
        }
        if self
            .rounds
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(COLLECT_EVERY_ROUNDS)
        {
            match self.collect().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(components = n, "collected components no task uses"),
                Err(e) => tracing::warn!(error = %e, "collecting components failed"),
            }
        }
    }
}
