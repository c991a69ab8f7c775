//! The runner: claims jobs in batches under a lease, runs their attempts in
//! the sandbox on a fixed number of slots, heartbeats while they run, and
//! finalizes them in batches, fenced by the lease token.

pub mod executor;
pub mod held;
pub mod retry;

use crate::registry::Registry;
use crate::store::{
    ClaimOneParams, ClaimParams, Finalize, Finalized, HeartbeatParams, JobRecord, StoreError,
};
use held::{Held, StopReason};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a claim holds a job before maintenance may rescue it.
pub const LEASE_MS: u64 = 30_000;
/// How often every held lease is renewed.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);
/// How often progress reports are written (and their leases renewed).
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// Longest an idle runner waits before looking for due jobs again.
pub const POLL_EVERY: Duration = Duration::from_secs(1);
/// Most jobs held ahead of free slots when attempts are short.
const MAX_PREFETCH: usize = 2048;
/// Attempts shorter than this (on average) make the runner claim ahead.
const SHORT_ATTEMPT: Duration = Duration::from_millis(20);
/// Most finalizations written in one call.
const FINALIZE_BATCH: usize = 2048;

/// What the runner reports as it goes (for benchmarks and tests).
#[derive(Debug, Clone)]
pub enum RunnerEvent {
    /// An attempt is about to start.
    Started { id: String, at: Instant },
    /// An attempt's end was committed (or fenced out).
    Finalized { id: String, result: Finalized },
}

pub type EventHook = Arc<dyn Fn(RunnerEvent) + Send + Sync>;

#[derive(Clone)]
pub struct RunnerConfig {
    /// Attempts run at once; 0 runs only what `run_now` asks for.
    pub slots: usize,
    /// Names this runner in leases.
    pub owner: String,
    /// Queues served; `None`: all.
    pub queues: Option<Vec<String>>,
    pub lease_ms: u64,
    pub on_event: Option<EventHook>,
}

impl RunnerConfig {
    pub fn new(slots: usize) -> Self {
        RunnerConfig {
            slots,
            owner: format!("runner-{}", std::process::id()),
            queues: None,
            lease_ms: LEASE_MS,
            on_event: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunNowError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the runner is stopping")]
    Stopping,
}

struct FinalizeMsg {
    finalize: Finalize,
    done: Option<oneshot::Sender<Finalized>>,
}

struct Inner {
    registry: Arc<Registry>,
    config: RunnerConfig,
    held: Held,
    /// Rung after an enqueue (or anything else that may make a job due).
    wake: Arc<Notify>,
    /// Rung when a held job is let go: there may be room to claim.
    space: Notify,
    stopping: CancellationToken,
    finalize_tx: mpsc::Sender<FinalizeMsg>,
    /// Moving average of attempt durations, in µs.
    avg_attempt_us: AtomicU64,
}

/// A running runner; `stop` ends it.
pub struct Runner {
    inner: Arc<Inner>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl Runner {
    /// Starts the claim loop, `slots` attempt workers, the finalizer and the
    /// heartbeat. `wake` is rung by whoever makes jobs due.
    pub fn start(registry: Arc<Registry>, config: RunnerConfig, wake: Arc<Notify>) -> Runner {
        let (finalize_tx, finalize_rx) = mpsc::channel(MAX_PREFETCH * 4);
        let inner = Arc::new(Inner {
            registry,
            config,
            held: Held::default(),
            wake,
            space: Notify::new(),
            stopping: CancellationToken::new(),
            finalize_tx,
            avg_attempt_us: AtomicU64::new(SHORT_ATTEMPT.as_micros() as u64 * 10),
        });
        let mut tasks = vec![
            tokio::spawn(finalizer(inner.clone(), finalize_rx)),
            tokio::spawn(heartbeat(inner.clone())),
        ];
        if inner.config.slots > 0 {
            let (local_tx, local_rx) = mpsc::channel(MAX_PREFETCH + 1);
            let local_rx = Arc::new(tokio::sync::Mutex::new(local_rx));
            for _ in 0..inner.config.slots {
                tasks.push(tokio::spawn(worker(inner.clone(), local_rx.clone())));
            }
            tasks.push(tokio::spawn(claimer(inner.clone(), local_tx)));
        }
        Runner {
            inner,
            tasks: std::sync::Mutex::new(tasks),
        }
    }

    /// Stops a held job's attempt because it was cancelled. Returns whether
    /// this runner held it.
    pub fn interrupt(&self, id: &str) -> bool {
        self.inner.held.stop(id, StopReason::Cancel)
    }

    /// Claims one queued job now, ahead of queue order, and runs its attempt
    /// outside the slots. Returns the job once the attempt is finalized.
    pub async fn run_now(&self, tenant: &str, id: &str) -> Result<JobRecord, RunNowError> {
        let claimed = self.claim_one(tenant, id).await?;
        run_claimed(&self.inner, claimed).await?;
        self.job(tenant, id).await
    }

    /// Claims one queued job and runs it in the background; answers the job
    /// as it is once claimed (running).
    pub async fn start_now(&self, tenant: &str, id: &str) -> Result<JobRecord, RunNowError> {
        let claimed = self.claim_one(tenant, id).await?;
        let inner = self.inner.clone();
        tokio::spawn(async move {
            if let Err(e) = run_claimed(&inner, claimed).await {
                tracing::warn!(error = %e, "a job run now could not be finalized");
            }
        });
        self.job(tenant, id).await
    }

    async fn job(&self, tenant: &str, id: &str) -> Result<JobRecord, RunNowError> {
        self.inner
            .registry
            .store()
            .job_get(tenant, id)
            .await?
            .ok_or(RunNowError::Store(StoreError::NotFound))
    }

    async fn claim_one(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<crate::store::ClaimedJob, RunNowError> {
        if self.inner.stopping.is_cancelled() {
            return Err(RunNowError::Stopping);
        }
        let claimed = self
            .inner
            .registry
            .store()
            .job_claim_one(ClaimOneParams {
                tenant: tenant.to_owned(),
                id: id.to_owned(),
                owner: self.inner.config.owner.clone(),
                lease_ms: self.inner.config.lease_ms,
            })
            .await?;
        self.inner.held.insert(&claimed.id, &claimed.lease_token);
        Ok(claimed)
    }

    /// Stops claiming, lets running attempts finish within `grace`, then
    /// interrupts the rest and gives their leases back.
    pub async fn stop(&self, grace: Duration) {
        let inner = &self.inner;
        inner.stopping.cancel();
        if !wait_until_empty(inner, grace).await {
            tracing::info!(
                jobs = inner.held.len(),
                "grace period over: giving the remaining jobs back"
            );
            inner.held.stop_all(StopReason::Shutdown);
            wait_until_empty(inner, Duration::from_secs(5)).await;
        }
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        for t in tasks {
            t.abort();
            let _ = t.await;
        }
    }

    /// How many jobs this runner holds.
    pub fn held(&self) -> usize {
        self.inner.held.len()
    }
}

/// Runs a job claimed outside the slots and waits for its finalization.
async fn run_claimed(
    inner: &Arc<Inner>,
    claimed: crate::store::ClaimedJob,
) -> Result<(), RunNowError> {
    let executed = executor::execute(&inner.registry, &inner.held, &claimed).await;
    match executed.finalize {
        Some(f) => {
            let (tx, rx) = oneshot::channel();
            inner
                .finalize_tx
                .send(FinalizeMsg {
                    finalize: f,
                    done: Some(tx),
                })
                .await
                .map_err(|_| RunNowError::Stopping)?;
            rx.await.map_err(|_| RunNowError::Stopping)?;
        }
        None => inner.held.remove(&claimed.id),
    }
    Ok(())
}

async fn wait_until_empty(inner: &Inner, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while !inner.held.is_empty() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::select! {
            _ = inner.space.notified() => {}
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    true
}

impl Inner {
    fn emit(&self, e: impl FnOnce() -> RunnerEvent) {
        if let Some(hook) = &self.config.on_event {
            hook(e());
        }
    }

    /// How many jobs to hold: the slots, plus claims ahead when attempts
    /// are short enough that a claim round trip would leave slots idle.
    fn hold_target(&self) -> usize {
        let slots = self.config.slots;
        if self.avg_attempt_us.load(Ordering::Relaxed) < SHORT_ATTEMPT.as_micros() as u64 {
            (slots * 512).clamp(slots, MAX_PREFETCH)
        } else {
            slots
        }
    }

    fn record_duration(&self, d: Duration) {
        let us = d.as_micros().min(u128::from(u32::MAX)) as u64;
        let old = self.avg_attempt_us.load(Ordering::Relaxed);
        self.avg_attempt_us
            .store(old - old / 8 + us / 8, Ordering::Relaxed);
    }
}

/// Claims jobs whenever there is room, waking on enqueues, on due times and
/// on a slow poll.
async fn claimer(inner: Arc<Inner>, local: mpsc::Sender<crate::store::ClaimedJob>) {
    let store = inner.registry.store().clone();
    while !inner.stopping.is_cancelled() {
        let want = inner.hold_target().saturating_sub(inner.held.len());
        if want == 0 {
            tokio::select! {
                _ = inner.space.notified() => {}
                _ = inner.stopping.cancelled() => break,
            }
            continue;
        }
        let t0 = Instant::now();
        let claimed = match store
            .job_claim(ClaimParams {
                owner: inner.config.owner.clone(),
                queues: inner.config.queues.clone(),
                limit: u32::try_from(want).unwrap_or(u32::MAX),
                lease_ms: inner.config.lease_ms,
            })
            .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "claim failed; retrying shortly");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = inner.stopping.cancelled() => break,
                }
                continue;
            }
        };
        tracing::debug!(
            want,
            got = claimed.len(),
            took_us = t0.elapsed().as_micros() as u64,
            "claimed"
        );
        let short = claimed.len() < want;
        for job in claimed {
            inner.held.insert(&job.id, &job.lease_token);
            if local.send(job).await.is_err() {
                return;
            }
        }
        if short {
            let idle = match store.job_next_run_at().await {
                Ok(Some(t)) => Duration::from_millis(u64::try_from(t - store.now()).unwrap_or(0))
                    .min(POLL_EVERY),
                _ => POLL_EVERY,
            };
            if idle.is_zero() {
                // Due, but not claimable (its concurrency key is running).
                tokio::select! {
                    _ = inner.wake.notified() => {}
                    _ = inner.space.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = inner.stopping.cancelled() => break,
                }
                continue;
            }
            tokio::select! {
                _ = inner.wake.notified() => {}
                _ = tokio::time::sleep(idle) => {}
                _ = inner.stopping.cancelled() => break,
            }
        }
    }
}

/// One slot: takes claimed jobs one at a time and runs their attempts.
async fn worker(
    inner: Arc<Inner>,
    local: Arc<tokio::sync::Mutex<mpsc::Receiver<crate::store::ClaimedJob>>>,
) {
    loop {
        let job = {
            let mut rx = local.lock().await;
            tokio::select! {
                j = rx.recv() => j,
                _ = inner.stopping.cancelled() => rx.try_recv().ok(),
            }
        };
        let Some(job) = job else { return };
        if inner.stopping.is_cancelled() {
            // Claimed ahead but not started: give it back untouched.
            let f = Finalize {
                id: job.id.clone(),
                lease_token: job.lease_token.clone(),
                action: crate::store::Action::Release { delay_ms: 0 },
                attempt: None,
            };
            let _ = inner
                .finalize_tx
                .send(FinalizeMsg {
                    finalize: f,
                    done: None,
                })
                .await;
            continue;
        }
        inner.emit(|| RunnerEvent::Started {
            id: job.id.clone(),
            at: Instant::now(),
        });
        let executed = executor::execute(&inner.registry, &inner.held, &job).await;
        inner.record_duration(executed.ran_for);
        match executed.finalize {
            Some(f) => {
                if inner
                    .finalize_tx
                    .send(FinalizeMsg {
                        finalize: f,
                        done: None,
                    })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            None => {
                inner.held.remove(&job.id);
                inner.space.notify_one();
            }
        }
    }
}

/// Writes finished attempts in batches; a failed write is tried again a
/// few times, after which the lease runs out and maintenance rescues them.
async fn finalizer(inner: Arc<Inner>, mut rx: mpsc::Receiver<FinalizeMsg>) {
    let store = inner.registry.store().clone();
    let mut batch = Vec::with_capacity(FINALIZE_BATCH);
    while rx.recv_many(&mut batch, FINALIZE_BATCH).await > 0 {
        let items: Vec<Finalize> = batch.iter().map(|m| m.finalize.clone()).collect();
        let t0 = Instant::now();
        let mut results = None;
        for delay_ms in [0u64, 100, 500, 2000] {
            if delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            }
            match store.job_finalize(items.clone()).await {
                Ok(r) => {
                    results = Some(r);
                    break;
                }
                Err(e) => tracing::warn!(error = %e, jobs = items.len(), "finalize failed"),
            }
        }
        tracing::debug!(
            jobs = items.len(),
            took_us = t0.elapsed().as_micros() as u64,
            "finalized"
        );
        for (i, msg) in batch.drain(..).enumerate() {
            let result = results
                .as_ref()
                .and_then(|r| r.get(i).cloned())
                .unwrap_or(Finalized::Fenced);
            inner.held.remove(&msg.finalize.id);
            inner.emit(|| RunnerEvent::Finalized {
                id: msg.finalize.id.clone(),
                result: result.clone(),
            });
            if let Some(done) = msg.done {
                let _ = done.send(result);
            }
        }
        inner.space.notify_one();
    }
}

/// Renews held leases every `HEARTBEAT_EVERY`, writes progress every
/// `PROGRESS_EVERY`, and stops attempts whose lease is gone or whose job was
/// cancelled elsewhere.
async fn heartbeat(inner: Arc<Inner>) {
    let store = inner.registry.store().clone();
    let mut last_full = Instant::now();
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let full = last_full.elapsed() >= HEARTBEAT_EVERY;
        if !full && !inner.held.has_progress() {
            continue;
        }
        let held::Snapshot { leases, progress } = inner.held.snapshot();
        if leases.is_empty() {
            last_full = Instant::now();
            continue;
        }
        match store
            .job_heartbeat(HeartbeatParams {
                owner: inner.config.owner.clone(),
                leases,
                lease_ms: inner.config.lease_ms,
                progress,
            })
            .await
        {
            Ok(reply) => {
                if full {
                    last_full = Instant::now();
                }
                for id in reply.lost {
                    tracing::warn!(job = %id, "lease lost; stopping the attempt");
                    inner.held.stop(&id, StopReason::Lost);
                }
                for id in reply.cancel {
                    inner.held.stop(&id, StopReason::Cancel);
                }
            }
            Err(e) => tracing::warn!(error = %e, "heartbeat failed"),
        }
    }
}
