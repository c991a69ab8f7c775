//! The runner: claims jobs in batches under a lease (the store shares each
//! claim among tenants by weight), and at once for a tenant that just got
//! a job and has none waiting here; starts their attempts as the dispatch
//! allows (tenants in turn, up to its slots, and one more for a tenant
//! with nothing running) on a runtime of its own, heartbeats while they
//! run, and finalizes them in batches, fenced by the lease token.
//!
//! No attempt belongs to a request: run-now marks a job to be claimed
//! first and waits for its end; a client that goes away leaves the
//! attempt, and the runner, as they were.

pub mod callbacks;
mod claims;
pub mod decision;
pub mod dispatch;
mod end;
pub mod executor;
pub mod held;
mod lane;
pub mod ledger;
mod marker;
pub mod share;
mod traced;
mod verify;
pub mod watch;

use crate::job::JobStatus;
use crate::parent_close::ParentClose;
use crate::registry::Registry;
use crate::store::{
    ClaimedJob, Finalize, Finalized, HeartbeatParams, Inserted, JobRecord, NewJob, OnClaimed,
    StoreError, StoreResult,
};
use claims::{claimer, sparse_claimer};
use decision::AttemptRules;
use dispatch::{Dispatch, Seat};
use futures_util::FutureExt;
use held::{Held, StopReason};
use ledger::Ledger;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use watch::{Watch, Watcher};

/// How long a claim holds a job before maintenance may rescue it, unless
/// the server is told otherwise (`--lease-ms`).
pub const LEASE_MS: u64 = 30_000;
/// Shortest and longest lease the server can be told to take: renewing a
/// shorter one would be most of a runner's writes, and a longer one keeps
/// a dead runner's jobs waiting for longer than anyone would wait.
pub const LEASE_MS_RANGE: std::ops::RangeInclusive<u64> = 1_000..=600_000;

/// How often every held lease is renewed: three times a lease, so that two
/// renewals may fail before it runs out.
pub fn heartbeat_every(lease_ms: u64) -> Duration {
    Duration::from_millis(lease_ms / 3)
}
/// How often progress reports are written (and their leases renewed).
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// Longest an idle runner waits before looking for due jobs again.
pub const POLL_EVERY: Duration = Duration::from_secs(1);
/// Most jobs held ahead of free slots when attempts are short.
const MAX_PREFETCH: usize = 2048;
/// Most jobs held ahead per slot: with 512 a slot, a runner of two slots
/// holds at most 1,024 no-op jobs, enough to keep it busy between claims.
const PREFETCH_PER_SLOT: usize = 512;
/// Most finalizations written in one call.
const FINALIZE_BATCH: usize = 2048;
/// Most tenants remembered for the sparse claimer between two claims.
const MAX_FRESH: usize = 64;
/// How often someone waiting for a job's end looks at the store besides
/// being told (an end this process did not write, a cancel while queued).
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// What the runner reports as it goes (for benchmarks and tests).
#[derive(Debug, Clone)]
pub enum RunnerEvent {
    /// A claim's jobs are held here, about to be handed to the dispatch.
    Claimed {
        ids: Vec<String>,
        tenant: Option<String>,
        at: Instant,
    },
    /// An attempt is about to start.
    Started {
        id: String,
        tenant: String,
        at: Instant,
    },
    /// An attempt ran for `ran_for` in its slot (before its end is written).
    Ran {
        id: String,
        tenant: String,
        ran_for: Duration,
    },
    /// An attempt's end was committed (or fenced out).
    Finalized { id: String, result: Finalized },
}

pub type EventHook = Arc<dyn Fn(RunnerEvent) + Send + Sync>;

/// An `EventHook` a server's settings can carry.
#[derive(Clone)]
pub struct Observer(pub EventHook);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

#[derive(Clone)]
pub struct RunnerConfig {
    /// Attempts run at once (plus one each, up to as many again, for
    /// tenants with nothing running); 0 runs nothing.
    pub slots: usize,
    /// Names this runner in leases.
    pub owner: String,
    /// Queues served; `None`: all.
    pub queues: Option<Vec<String>>,
    pub lease_ms: u64,
    pub on_event: Option<EventHook>,
    /// Snooze floor and cap.
    pub rules: AttemptRules,
    /// Threads of the runtime attempts run on, apart from the one serving
    /// requests; 0: the number of cores.
    pub guest_threads: usize,
    /// The runner time, per slot, of one tenant's jobs it may hold
    /// (`share::AHEAD_PER_SLOT` by default; `--claim-ahead-ms`).
    pub claim_ahead: Duration,
}

impl RunnerConfig {
    pub fn new(slots: usize) -> Self {
        RunnerConfig {
            slots,
            owner: format!("runner-{}", std::process::id()),
            queues: None,
            lease_ms: LEASE_MS,
            on_event: None,
            rules: AttemptRules::default(),
            guest_threads: 0,
            claim_ahead: share::AHEAD_PER_SLOT,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunNowError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the runner is stopping")]
    Stopping,
    #[error("this server runs no attempts (it was started with --runners 0)")]
    NoSlots,
}

/// What waiting for a job came to.
#[derive(Debug, Clone)]
pub enum Waited {
    /// What was waited for happened; the job as it is now.
    Ended(JobRecord),
    /// The time ran out first; the job as it is now.
    StillGoing(JobRecord),
}

struct Inner {
    registry: Arc<Registry>,
    config: RunnerConfig,
    held: Held,
    dispatch: Dispatch,
    ledger: Ledger,
    watch: Watch,
    /// Rung after an enqueue (or anything else that may make a job due).
    wake: Arc<Notify>,
    /// The runtime the runner was started on (the server's): store calls
    /// made for an attempt run there, since a database connection opened
    /// on the guests' runtime dies with it when the runner stops.
    home: tokio::runtime::Handle,
    /// Rung when a held job is let go: there may be room to claim.
    space: Notify,
    /// Tenants this process gave a job to (an enqueue, a run-now, a
    /// resume) with none waiting or running here then: the sparse
    /// claimer's to claim for at once.
    fresh: std::sync::Mutex<Vec<String>>,
    /// Rung with each tenant put in `fresh`.
    sparse: Notify,
    stopping: CancellationToken,
    finalize_tx: mpsc::Sender<Finalize>,
    /// Where attempts run (those of the prompt lane after their slice).
    guests: tokio::runtime::Handle,
}

/// A running runner; `stop` ends it.
pub struct Runner {
    inner: Arc<Inner>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
    /// The runtimes attempts run on (the guests' and the prompt lane's),
    /// so that a guest burning its fuel never holds up a request; shut
    /// down when the runner stops.
    runtimes: std::sync::Mutex<Vec<tokio::runtime::Runtime>>,
}

fn guest_runtime(threads: usize) -> Option<tokio::runtime::Runtime> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("taskbox-guest")
        .on_thread_start(crate::priority::lower_this_thread)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            tracing::warn!(error = %e, "cannot start the attempts' runtime; attempts share the server's");
            None
        }
    }
}

impl Runner {
    /// Starts the claim loop, the dispatcher, the finalizer and the
    /// heartbeat. `wake` is rung by whoever makes jobs due.
    pub fn start(registry: Arc<Registry>, config: RunnerConfig, wake: Arc<Notify>) -> Runner {
        let (finalize_tx, finalize_rx) = mpsc::channel(MAX_PREFETCH * 4);
        let runtime = (config.slots > 0)
            .then(|| guest_runtime(config.guest_threads))
            .flatten();
        let guests = runtime
            .as_ref()
            .map_or_else(tokio::runtime::Handle::current, |rt| rt.handle().clone());
        // Without a runtime of lower priority for the guests, a lane of
        // normal priority would gain nothing.
        let lane_runtime = runtime.as_ref().and_then(|_| lane::runtime());
        let dispatch = match lane_runtime {
            Some(_) => Dispatch::with_lane(config.slots),
            None => Dispatch::new(config.slots),
        }
        .holding(config.claim_ahead);
        let inner = Arc::new(Inner {
            registry,
            dispatch,
            config,
            held: Held::default(),
            ledger: Ledger::default(),
            watch: Watch::default(),
            wake,
            home: tokio::runtime::Handle::current(),
            space: Notify::new(),
            fresh: std::sync::Mutex::default(),
            sparse: Notify::new(),
            stopping: CancellationToken::new(),
            finalize_tx,
            guests,
        });
        let mut tasks = vec![
            tokio::spawn(finalizer(inner.clone(), finalize_rx)),
            tokio::spawn(heartbeat(inner.clone())),
        ];
        if inner.config.slots > 0 {
            // A worker per slot and per start beyond the slots, on the
            // attempts' runtime: each takes the next job the dispatch lets
            // start and runs it there, with no hand-off per job.
            for _ in 0..2 * inner.config.slots {
                tasks.push(inner.guests.spawn(worker(inner.clone())));
            }
            if let Some(rt) = &lane_runtime {
                tasks.push(rt.spawn(lane::run(inner.clone())));
            }
            tasks.push(tokio::spawn(claimer(inner.clone())));
            tasks.push(tokio::spawn(sparse_claimer(inner.clone())));
            tasks.push(tokio::spawn(marker::marker(inner.clone())));
        }
        Runner {
            inner,
            tasks: std::sync::Mutex::new(tasks),
            runtimes: std::sync::Mutex::new(runtime.into_iter().chain(lane_runtime).collect()),
        }
    }

    /// Inserts jobs, all of one tenant's (an enqueue). When this runner has
    /// room for that tenant and none of its jobs waiting, the same write
    /// claims for it, so that a job of a tenant that sends one now and then
    /// starts one round trip after it was sent. The claim's jobs are handed
    /// to the runner by a task of its own, never by the caller, which may be
    /// a request whose client goes away.
    pub async fn enqueue(&self, jobs: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>> {
        let store = self.inner.registry.store().clone();
        let tenant = match jobs.first() {
            Some(j) if jobs.iter().all(|o| o.tenant == j.tenant) => j.tenant.clone(),
            _ => {
                let inserted = store.job_insert(jobs).await?;
                crate::figures::inserted(inserted.iter().flatten());
                return Ok(inserted);
            }
        };
        let Some(limit) = self.inner.room_for(&tenant) else {
            let inserted = store.job_insert(jobs).await?;
            self.inserted(&tenant, &inserted, &[]);
            return Ok(inserted);
        };
        let inner = self.inner.clone();
        let params = inner.claim_params(limit, Some(vec![tenant.clone()]));
        let claimed_ids: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let ids = claimed_ids.clone();
        let runtime = tokio::runtime::Handle::current();
        // The claimed jobs are taken in as soon as their claim commits
        // (on SQLite, on the writer's thread, while the enqueue's sync
        // runs), never by the caller: it may be a request whose client
        // goes away.
        let on_claimed: OnClaimed = Box::new(move |claimed| {
            *ids.lock().unwrap_or_else(|p| p.into_inner()) =
                claimed.iter().map(|j| j.id.clone()).collect();
            let left = claims::take_in(&inner, claimed);
            if !left.is_empty() {
                runtime.spawn(async move {
                    for job in &left {
                        give_back(&inner, job, 0).await;
                    }
                });
            }
        });
        let took =
            tokio::spawn(async move { store.job_insert_claim(jobs, params, on_claimed).await });
        let inserted = took
            .await
            .map_err(|e| StoreError::Internal(format!("the enqueue's task failed: {e}")))??;
        let claimed = std::mem::take(&mut *claimed_ids.lock().unwrap_or_else(|p| p.into_inner()));
        self.inserted(&tenant, &inserted, &claimed);
        Ok(inserted)
    }

    /// After jobs were inserted, for those not claimed with the insert: any
    /// may change when the claim loop should look next, and a due one is
    /// the sparse claimer's if its tenant has none waiting here.
    fn inserted(&self, tenant: &str, inserted: &[StoreResult<Inserted>], claimed: &[String]) {
        crate::figures::inserted(inserted.iter().flatten());
        let now = self.inner.registry.store().now();
        let mut due = false;
        let mut created = false;
        for j in inserted {
            if let Ok(Inserted::Created(j)) = j {
                if claimed.contains(&j.id) {
                    continue;
                }
                created = true;
                due |= j.status == JobStatus::Queued && j.run_at <= now;
            }
        }
        if created {
            self.inner.wake.notify_one();
        }
        if due {
            self.enqueued(tenant);
        }
    }

    /// Tells the runner that jobs of `tenant` were queued again by another
    /// path than `enqueue` (a resume, a redrive): the claim loop looks,
    /// and the tenant's first is claimed at once if there is room.
    pub fn queued_again(&self, tenant: &str) {
        self.inner.wake.notify_one();
        self.enqueued(tenant);
    }

    /// Tells the runner that `tenant` has a job due: if it has none of
    /// that tenant's waiting, it claims for it at once, beside the batch it
    /// may be claiming, so that the job does not wait for a batch of other
    /// tenants' jobs to be claimed first.
    pub fn enqueued(&self, tenant: &str) {
        let inner = &self.inner;
        if inner.room_for(tenant).is_none() {
            return;
        }
        {
            let mut fresh = inner.fresh.lock().unwrap_or_else(|p| p.into_inner());
            // Bounded: past it, a tenant's job comes in the claim loop's
            // next batch, as it would without this.
            if fresh.len() < MAX_FRESH && !fresh.iter().any(|t| t == tenant) {
                fresh.push(tenant.to_owned());
            }
        }
        inner.sparse.notify_one();
    }

    /// Stops a held job's attempt because it was cancelled. Returns whether
    /// this runner held it.
    pub fn interrupt(&self, id: &str) -> bool {
        self.inner.held.stop(id, StopReason::Cancel)
    }

    /// Puts a queued job first in its tenant's line (a runner claims it
    /// like any other, within the tenant's share and quotas) and, with
    /// `wait`, waits up to that long for the attempt to end.
    pub async fn run_now(
        &self,
        tenant: &str,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Waited, RunNowError> {
        if self.inner.config.slots == 0 {
            return Err(RunNowError::NoSlots);
        }
        if self.inner.stopping.is_cancelled() {
            return Err(RunNowError::Stopping);
        }
        // Watching before marking, so that no end is missed.
        let watcher = self.inner.watch.watch(id);
        let marked = self.inner.registry.store().job_run_now(tenant, id).await?;
        self.inner.wake.notify_one();
        self.enqueued(tenant);
        let Some(limit) = wait else {
            return Ok(Waited::StillGoing(marked));
        };
        let before = marked.attempts;
        Ok(self
            .wait(tenant, id, &watcher, limit, |j| {
                j.status.is_terminal() || (j.attempts > before && j.status != JobStatus::Running)
            })
            .await?)
    }

    /// Waits up to `limit` for a job to stop running (a cancel's answer).
    pub async fn wait_stopped(
        &self,
        tenant: &str,
        id: &str,
        limit: Duration,
    ) -> Result<Waited, StoreError> {
        let watcher = self.inner.watch.watch(id);
        self.wait(tenant, id, &watcher, limit, |j| {
            j.status != JobStatus::Running
        })
        .await
    }

    /// Waits until `done` holds of the job, rung by the finalizer, looking
    /// at the store every `LOOK_EVERY` besides.
    async fn wait(
        &self,
        tenant: &str,
        id: &str,
        watcher: &Watcher,
        limit: Duration,
        done: impl Fn(&JobRecord) -> bool,
    ) -> Result<Waited, StoreError> {
        let deadline = tokio::time::Instant::now() + limit;
        let store = self.inner.registry.store();
        loop {
            let rung = watcher.notified();
            tokio::pin!(rung);
            rung.as_mut().enable();
            let job = store
                .job_get(tenant, id)
                .await?
                .ok_or(StoreError::NotFound)?;
            if done(&job) {
                return Ok(Waited::Ended(job));
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(Waited::StillGoing(job));
            }
            tokio::select! {
                () = rung => {}
                () = tokio::time::sleep_until(deadline.min(now + LOOK_EVERY)) => {}
            }
        }
    }

    /// Stops claiming, gives back what has not started, lets running
    /// attempts finish within `grace`, then interrupts the rest and gives
    /// their leases back.
    pub async fn stop(&self, grace: Duration) {
        let inner = &self.inner;
        inner.stopping.cancel();
        for job in inner.dispatch.close() {
            give_back(inner, &job, 0).await;
        }
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
        self.shut_guests();
    }

    fn shut_guests(&self) {
        let runtimes =
            std::mem::take(&mut *self.runtimes.lock().unwrap_or_else(|p| p.into_inner()));
        for rt in runtimes {
            rt.shutdown_background();
        }
    }

    /// How many jobs this runner holds.
    pub fn held(&self) -> usize {
        self.inner.held.len()
    }
}

/// The enqueue path's way in: its inserts are the runner's, claiming with
/// the insert where it can.
#[async_trait::async_trait]
impl crate::enqueue::Intake for Runner {
    async fn insert(&self, jobs: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>> {
        self.enqueue(jobs).await
    }

    fn queued(&self, tenant: &str) {
        self.queued_again(tenant);
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // A runtime may not be dropped where blocking is not allowed.
        self.shut_guests();
    }
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

/// Gives a claimed job back without an attempt, to be claimed again after
/// `delay_ms`.
async fn give_back(inner: &Inner, job: &ClaimedJob, delay_ms: u64) {
    let _ = inner
        .finalize_tx
        .send(Finalize::release(job, delay_ms))
        .await;
}

impl Inner {
    fn emit(&self, e: impl FnOnce() -> RunnerEvent) {
        if let Some(hook) = &self.config.on_event {
            hook(e());
        }
    }

    /// An attempt's seat is free again (`ran`: how long its attempt ran;
    /// `None`, it did not). Jobs of its tenant held beyond what the
    /// tenant's own cost allows go back to the queue unbegun
    /// (`Dispatch::finished`).
    async fn seat_free(&self, tenant: &str, seat: Seat, ran: Option<Duration>) {
        let back = self.dispatch.finished(tenant, seat, ran);
        if !back.is_empty() {
            tracing::debug!(
                tenant,
                jobs = back.len(),
                "jobs held beyond the tenant's cost given back"
            );
            for job in &back {
                give_back(self, job, 0).await;
            }
        }
    }
}

/// Runs each job the dispatch lets start, one at a time.
async fn worker(inner: Arc<Inner>) {
    while let Some((job, seat)) = inner.dispatch.next().await {
        if inner.stopping.is_cancelled() {
            give_back(&inner, &job, 0).await;
            inner.seat_free(&job.tenant, seat, None).await;
            continue;
        }
        attempt(inner.clone(), job, seat).await;
    }
}

/// One started job, in a span that names it: every line logged while it
/// runs says whose job, which attempt and which task.
async fn attempt(inner: Arc<Inner>, job: ClaimedJob, seat: Seat) {
    use tracing::Instrument;
    let span = tracing::info_span!(
        "attempt",
        tenant = %job.tenant,
        job = %job.id,
        attempt = job.attempts,
        task = %job.task.name,
    );
    run_attempt(inner, job, seat).instrument(span).await
}

/// One started job: its fuel checked, its attempt run and decided, its
/// end handed to the finalizer.
async fn run_attempt(inner: Arc<Inner>, job: ClaimedJob, seat: Seat) {
    let store = inner.registry.store().clone();
    if let Some(seen) = job.fuel {
        inner.ledger.saw(&job.tenant, seen);
    }
    let now = store.now();
    let lost = inner.held.stop_reason(&job.id, &job.lease_token) == Some(StopReason::Lost);
    // Its lease ran out before it started: there is nothing to run or
    // write under it.
    let admitted = if lost {
        Ok(false)
    } else {
        inner.ledger.admit(&job.tenant, now).map(|()| true)
    };
    let mut ran = None;
    let finalize = match admitted {
        Ok(false) => None,
        Err(next_window) => {
            // Its tenant's fuel for this window is spent: back to the
            // queue until the next one, uncounted.
            Some(Finalize::release(
                &job,
                u64::try_from(next_window - now).unwrap_or(0),
            ))
        }
        Ok(true) => {
            crate::metrics::get().started(
                &job.queue,
                Duration::from_millis(u64::try_from(now - job.due_at).unwrap_or(0)),
            );
            inner.emit(|| RunnerEvent::Started {
                id: job.id.clone(),
                tenant: job.tenant.clone(),
                at: Instant::now(),
            });
            let executed = std::panic::AssertUnwindSafe(executor::execute(
                &inner.registry,
                &inner.held,
                &job,
                &inner.config.rules,
                (&inner.wake, &inner.home),
            ))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| {
                // A bug of the host's, not the guest's: the worker lives on,
                // and the job, let go, is decided by the rescuer once its
                // lease runs out (as `runner_lost`, within its attempts).
                tracing::error!(
                    job = %job.id,
                    panic = %crate::text::panic_message(panic.as_ref()),
                    "an attempt's host code panicked; the job is let go to the rescuer"
                );
                end::Executed {
                    finalize: None,
                    ran_for: Duration::ZERO,
                }
            });
            ran = Some(executed.ran_for);
            inner.emit(|| RunnerEvent::Ran {
                id: job.id.clone(),
                tenant: job.tenant.clone(),
                ran_for: executed.ran_for,
            });
            if let Some(u) = executed.finalize.as_ref().and_then(|f| f.usage.as_ref()) {
                inner.ledger.spend(&job.tenant, store.now(), u.fuel);
            }
            executed.finalize
        }
    };
    inner.seat_free(&job.tenant, seat, ran).await;
    match finalize {
        Some(f) => {
            inner.held.ended(&job.id, &job.lease_token);
            let _ = inner.finalize_tx.send(f).await;
        }
        None => {
            inner.held.remove(&job.id, &job.lease_token);
            inner.space.notify_one();
            inner.watch.ended(&job.id);
        }
    }
}

/// Writes finished attempts in batches; a failed write is tried again a
/// few times, after which the lease runs out and maintenance rescues them.
async fn finalizer(inner: Arc<Inner>, mut rx: mpsc::Receiver<Finalize>) {
    let store = inner.registry.store().clone();
    let mut items = Vec::with_capacity(FINALIZE_BATCH);
    while rx.recv_many(&mut items, FINALIZE_BATCH).await > 0 {
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
        if results.is_none() {
            // Not written: the jobs stay running until their leases run
            // out, and a rescue decides them as lost.
            tracing::warn!(
                jobs = items.len(),
                "attempt ends not written; the jobs will be rescued when their leases expire"
            );
        }
        let mut requeued = false;
        for (i, f) in items.drain(..).enumerate() {
            let result = results
                .as_ref()
                .and_then(|r| r.get(i).cloned())
                .unwrap_or(Finalized::Fenced);
            crate::figures::finalized(&f, &result);
            if results.is_some() && result == Finalized::Fenced {
                tracing::warn!(job = %f.id, "attempt end refused: the job's lease is no longer this runner's (fenced)");
            }
            // Queued again (a retry, a snooze, a fallback, a job given
            // back): a new due time the claim loop may not know of.
            requeued |= result == Finalized::Done(JobStatus::Queued);
            // A callback enqueued with the end: a new job.
            if let (Finalized::Done(s), Some(c)) = (&result, &f.callbacks) {
                if let Some(new) = c.landing(*s) {
                    requeued = true;
                    traced::callback(inner.registry.traces(), new, c.made_under.as_ref());
                }
            }
            // An ended parent's children, as its task's parent_close says.
            if let (Finalized::Done(s), Some(policy)) = (&result, f.close_children) {
                if s.is_terminal() {
                    close_children(inner.clone(), f.tenant.clone(), f.id.clone(), policy);
                }
            }
            inner.held.remove(&f.id, &f.lease_token);
            inner.watch.ended(&f.id);
            inner.emit(|| RunnerEvent::Finalized { id: f.id, result });
        }
        if requeued {
            inner.wake.notify_one();
        }
        inner.space.notify_one();
    }
}

/// Cancels an ended parent's unfinished children, off the finalizer's
/// path; those running here are stopped at once. Not written with the
/// parent's end: if this process dies first, the children go on (as with
/// `abandon`).
fn close_children(inner: Arc<Inner>, tenant: String, parent: String, policy: ParentClose) {
    tokio::spawn(async move {
        let store = inner.registry.store().clone();
        match crate::workflow::cancel::close_children(store.as_ref(), &tenant, &parent, policy)
            .await
        {
            Ok(running) => {
                for id in running {
                    inner.held.stop(&id, StopReason::Cancel);
                }
                inner.wake.notify_one();
            }
            Err(e) => {
                tracing::warn!(job = %parent, error = %e, "the ended job's children could not be cancelled")
            }
        }
    });
}

/// Renews held leases every `heartbeat_every`, writes progress every
/// `PROGRESS_EVERY`, and stops attempts whose lease is gone or whose job was
/// cancelled elsewhere.
async fn heartbeat(inner: Arc<Inner>) {
    let store = inner.registry.store().clone();
    let mut last_full = Instant::now();
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let full = last_full.elapsed() >= heartbeat_every(inner.config.lease_ms);
        if !full && !inner.held.has_progress() {
            continue;
        }
        let held::Snapshot { leases, progress } = inner.held.snapshot();
        if leases.is_empty() {
            last_full = Instant::now();
            continue;
        }
        // Kept to know which lease a refusal was of (a job may have been
        // claimed again under a new one since the snapshot).
        let sent = leases.clone();
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
                let tokens: std::collections::HashMap<&str, &str> = match reply.lost.is_empty() {
                    true => Default::default(),
                    false => sent.iter().map(|(i, t)| (i.as_str(), t.as_str())).collect(),
                };
                for id in reply.lost {
                    if inner.held.has_ended(&id) {
                        // Its end committed before this renewal ran, and
                        // its answer is on the way (after the sync).
                        tracing::debug!(job = %id, "lease renewal refused after the attempt's end was written");
                        continue;
                    }
                    let Some(token) = tokens.get(id.as_str()) else {
                        continue;
                    };
                    if inner.held.lose(&id, token) {
                        tracing::warn!(job = %id, "lease renewal refused: the job's lease is no longer this runner's (fenced); stopping the attempt");
                    }
                }
                for id in reply.cancel {
                    inner.held.stop(&id, StopReason::Cancel);
                }
            }
            Err(e) => tracing::warn!(error = %e, "heartbeat failed"),
        }
    }
}
