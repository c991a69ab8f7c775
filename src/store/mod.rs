//! The one storage seam: everything the queue keeps goes through `JobStore`,
//! whose methods are noun-first and take params structs. SQLite is the
//! embedded backend; PostgreSQL implements the same trait and runs the same
//! conformance suite.

pub mod attempt_sql;
pub mod begun;
pub mod call_rows;
pub mod clock;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod db_row;
pub mod debounce;
pub mod dialect;
pub mod ending;
pub mod ending_sql;
pub mod expire_sql;
pub mod fair;
pub mod fair_keys;
pub mod flow_key;
pub mod insert_sql;
pub mod job_sql;
pub mod lease_sql;
pub mod migrations;
mod open;
pub mod outbox;
pub mod postgres;
pub mod prune_sql;
pub mod queue_rows;
pub mod records;
pub mod registry_rows;
pub mod rows;
pub mod schedule_rows;
pub mod secret_rows;
pub mod series_sql;
pub mod sqlite;
pub mod step_rows;
pub mod tally;
pub mod tenants;
pub mod throttle;
pub mod token_rows;
pub mod transition;
pub mod usage_sql;
pub mod webhook_rows;
pub mod whose;
pub mod workflow_rows;

pub use call_rows::{CallKind, CallRecord};
pub use clock::{Clock, ManualClock, Millis, SystemClock};
pub use open::{open, Backend, Capabilities, Durability, OpenError, StoreOptions};
pub use records::*;
pub use schedule_rows::{SchedulePut, ScheduleRecord, ScheduleState, MAX_SCHEDULES};
pub use secret_rows::{NewSecret, SealedSecret, SecretRecord, MAX_SECRETS};
pub use step_rows::{StepConfig, StepKind, StepRecord, StepStatus, StepWrite, WorkflowStart};
pub use token_rows::{NewToken, Revocation, TokenInfo, TokenRecord};
pub use workflow_rows::{NewWorkflow, WorkflowRecord};

use async_trait::async_trait;

/// What a store call can fail with. Callers map these to their own errors;
/// `Internal` details are logged, never shown to users.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule refused the write; the message says which.
    #[error("{0}")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    /// A runner's write whose lease is gone (another holds the job, or it
    /// ended): nothing was written.
    #[error("the job's lease is no longer this runner's; nothing was written")]
    Fenced,
    /// A tenant's quota refused new work; nothing was written.
    #[error(transparent)]
    QuotaExceeded(#[from] crate::quota::Exceeded),
    /// The store is shutting down or its writer is gone.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// A database error: logged, and reported to users without its text.
    #[error("database error: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Most webhooks one tenant may have.
pub const MAX_WEBHOOKS: u64 = 32;

/// What a store that other processes share tells this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// Jobs may have become claimable (enqueued, due again, or freed by
    /// another's end): look.
    Jobs,
    /// A cancel was asked for this running job: stop it if it is held here.
    Cancel(String),
    /// The token of this id was revoked: forget it if it is remembered.
    TokenRevoked(String),
}

/// The storage seam. Every time that decides anything (run_at, leases,
/// backoff) comes from the store's clock, so that many processes sharing
/// one database agree on it.
#[async_trait]
pub trait JobStore: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch by the store's clock.
    fn now(&self) -> Millis;

    /// What this store can do beyond the seam's common ground.
    fn capabilities(&self) -> Capabilities;

    /// Signals from other processes on the same database, for a store
    /// that others share; `None` where this process is alone (its own
    /// API tells its runner directly). Signals can be lost (a dropped
    /// connection); the runner's poll is the fallback.
    fn signals(&self) -> Option<tokio::sync::broadcast::Receiver<Signal>> {
        None
    }

    async fn tenant_insert(&self, name: &str) -> StoreResult<Tenant>;
    async fn tenant_get(&self, name: &str) -> StoreResult<Option<Tenant>>;
    /// Sets a tenant's weight and quotas (replacing what was set), creating
    /// the tenant if it is new; `created` says which.
    async fn tenant_put(&self, t: TenantSettings) -> StoreResult<(Tenant, bool)>;
    /// Every tenant, by name.
    async fn tenant_list(&self) -> StoreResult<Vec<Tenant>>;
    /// A tenant's jobs now and its usage in the current and the last window.
    async fn tenant_usage(&self, tenant: &str) -> StoreResult<TenantUsage>;
    /// What attempts cost, by tenant, bucket, task and version, summed
    /// from the attempt records, with the jobs the result cache completed.
    async fn usage_export(&self, q: UsageExportQuery) -> StoreResult<Vec<UsageLine>>;
    /// What the dashboard's charts read for the export's range and buckets:
    /// jobs started (by how long they waited) and ended, and queue samples.
    async fn series(&self, q: UsageExportQuery) -> StoreResult<series_sql::SeriesRows>;
    /// Samples every queue's depth and oldest wait into this minute's row
    /// (a later sample in the minute replaces it) and deletes samples older
    /// than `keep_ms`; answers how many queues had jobs waiting.
    async fn queue_sample(&self, keep_ms: i64) -> StoreResult<u64>;

    /// Stores a token's hash; `tenant: None` with `admin` is the admin token,
    /// which replaces any earlier one.
    async fn token_insert(&self, token: NewToken) -> StoreResult<()>;
    /// The token of this hash, expired or not (the caller decides by its
    /// `expires_at`).
    async fn token_get(&self, hash: &str) -> StoreResult<Option<TokenRecord>>;
    /// Whether an admin token exists.
    async fn token_admin_exists(&self) -> StoreResult<bool>;
    /// Every token, expired ones too: the admin's first, then by tenant
    /// (as bytes), when made and id. Never a hash.
    async fn token_list(&self) -> StoreResult<Vec<TokenInfo>>;
    /// Deletes a tenant's token by id. The admin token is never deleted
    /// here (`Revocation::Admin`). Where other processes share the store
    /// (PostgreSQL), they are told (`Signal::TokenRevoked`) when it commits.
    async fn token_revoke(&self, id: &str) -> StoreResult<Revocation>;
    /// Records that the token was used now (by the store's clock); a later
    /// time already recorded is kept. Nothing when no token has that id.
    async fn token_touch(&self, id: &str) -> StoreResult<()>;

    /// Records a component for a tenant; the bytes are kept once per digest.
    /// `created` is false when the tenant had it already. A new one counts
    /// against `max_components` and `max_component_bytes`.
    async fn component_insert(&self, c: NewComponent) -> StoreResult<(ComponentRecord, bool)>;
    async fn component_get(
        &self,
        tenant: &str,
        digest: &str,
    ) -> StoreResult<Option<ComponentRecord>>;
    /// The bytes of a component, for the runner; not scoped to a tenant.
    async fn component_bytes(&self, digest: &str) -> StoreResult<Option<Vec<u8>>>;
    /// How many components the tenant keeps, and their bytes in all: what
    /// an upload is held to before it is compiled
    /// (`tenants::component_room`).
    async fn component_usage(&self, tenant: &str) -> StoreResult<(u64, u64)>;

    /// Adds the next version of a task (1 for a new task), within the
    /// tenant's `max_task_versions`; staged when `t.rollout` says so
    /// (`registry_rows::may_define` says when a define is refused).
    async fn task_insert(&self, t: NewTask) -> StoreResult<TaskRecord>;
    /// A version of a task; `version: None` is the live one (the newest
    /// neither staged nor rolled back).
    async fn task_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<TaskRecord>>;
    /// What new jobs of a task pin: its live version and a staged one.
    async fn task_head(&self, tenant: &str, name: &str) -> StoreResult<Option<TaskHead>>;
    /// Changes the rollout of a task's staged version, answering its row
    /// as it is after; `NotFound` when none is staged.
    async fn task_rollout(
        &self,
        tenant: &str,
        name: &str,
        change: RolloutChange,
    ) -> StoreResult<TaskRecord>;
    /// The versions being rolled out (at most one a task), one tenant's
    /// or (`None`) every tenant's, newest rollouts first, at most `limit`.
    async fn tasks_staged(&self, tenant: Option<&str>, limit: u32) -> StoreResult<Vec<TaskRecord>>;
    /// What each of two versions of a task did in the jobs made since
    /// `since`, in the order given.
    async fn version_figures(
        &self,
        tenant: &str,
        name: &str,
        versions: [u32; 2],
        since: Millis,
    ) -> StoreResult<Vec<VersionFigures>>;
    /// Every version of a task, oldest first.
    async fn task_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<TaskRecord>>;
    /// The live version of each task: one tenant's, or (`None`) every
    /// tenant's; by tenant and name.
    async fn task_list(&self, tenant: Option<&str>) -> StoreResult<Vec<TaskRecord>>;

    /// Adds the next version of a workflow (1 for a new one); task and
    /// workflow versions count together against `max_task_versions`.
    async fn workflow_insert(&self, w: NewWorkflow) -> StoreResult<WorkflowRecord>;
    /// A version of a workflow; `version: None` is the newest.
    async fn workflow_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<WorkflowRecord>>;
    /// The newest version of each of a tenant's workflows, by name.
    /// The newest version of each workflow: one tenant's, or (`None`)
    /// every tenant's.
    async fn workflow_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WorkflowRecord>>;
    /// Every version of a workflow, oldest first, and when each was made.
    async fn workflow_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<(u32, Millis)>>;

    /// Inserts jobs in one transaction, each under its own uniqueness rules
    /// and within its tenant's `max_queued`; one failing does not fail the
    /// others. A `run_at` in the past is now.
    async fn job_insert(&self, jobs: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>>;
    async fn job_get(&self, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>>;
    /// A job's stages, in order: a workflow job's steps, fallbacks and
    /// chains; none for a job of one task. The caller has checked whose
    /// job it is.
    async fn job_steps(&self, id: &str) -> StoreResult<Vec<StepRecord>>;
    /// One orchestration call a job recorded, by its place.
    async fn job_call(&self, id: &str, call: &str) -> StoreResult<Option<CallRecord>>;
    /// Every orchestration call a job recorded (its children are its
    /// spawns).
    async fn job_calls(&self, id: &str) -> StoreResult<Vec<CallRecord>>;
    /// The job whose spawn made this one, if one did.
    async fn job_parent(&self, id: &str) -> StoreResult<Option<String>>;
    /// The call of the job whose end made this one as its callback, if
    /// one did (`CallKind::Callback`).
    async fn job_callback_of(&self, id: &str) -> StoreResult<Option<CallRecord>>;
    /// The ended jobs of a task whose last attempt ran it, newest first,
    /// at most `limit` (`job_sql::ENDED_SAMPLE`): what a verification
    /// runs again.
    async fn ended_sample(&self, tenant: &str, task: &str, limit: u32) -> StoreResult<Vec<String>>;
    /// What a job recorded of its end, for a verification; `None` when it
    /// is gone (pruned).
    async fn recorded_run(&self, tenant: &str, id: &str) -> StoreResult<Option<RecordedRun>>;
    async fn job_list(&self, q: JobQuery) -> StoreResult<JobPage>;
    /// A tenant's queues (those it has jobs on or paused; `None`: every
    /// tenant's), by tenant and name: their jobs by status and the oldest
    /// due queued job. Reads the tenant's jobs (every job, for `None`).
    async fn queue_list(&self, tenant: Option<&str>) -> StoreResult<Vec<QueueDepth>>;
    /// Jobs not ended, of every tenant, by queue and status (queued,
    /// running, waiting), what a metrics scrape shows. Reads every
    /// unfinished job.
    async fn job_depths(&self) -> StoreResult<Vec<(String, crate::job::JobStatus, u64)>>;
    /// Pauses a tenant's queue: from when this answers, none of its jobs
    /// is claimed (those running go on) until it is resumed; enqueue
    /// still works. `false`: it was paused already.
    async fn queue_pause(&self, tenant: &str, queue: &str) -> StoreResult<bool>;
    /// Resumes a paused queue: its jobs are claimed again. `false`: it was
    /// not paused.
    async fn queue_resume(&self, tenant: &str, queue: &str) -> StoreResult<bool>;
    /// Puts back in line the jobs of queues no longer paused that a resume
    /// cut short (by a crash) left parked; answers how many. Reads every
    /// parked job: for maintenance, now and then.
    async fn queue_tidy(&self) -> StoreResult<u64>;
    /// Deletes the throttle keys that hold nothing any more (every slot
    /// free, no job waiting on one); answers how many.
    async fn throttle_tidy(&self) -> StoreResult<u64>;
    /// Fails these jobs, each only if it is still queued `expire_after_ms`
    /// after it came due, with kind `expired`, in one write; the `on_fail`
    /// job of each that fails is inserted with it, so exactly once.
    /// Answers how many failed.
    async fn job_expire(&self, jobs: Vec<Expire>) -> StoreResult<u64>;
    /// Up to `limit` queued jobs past their `expire_after_ms`, for
    /// `job_expire` (whose caller builds their `on_fail` jobs first).
    async fn job_expiring(&self, limit: u32) -> StoreResult<Vec<ExpiringJob>>;
    /// One step of a pruning pass: deletes, with their attempts, the ended
    /// jobs among the next `scan` (by id) that ended before their status's
    /// cutoff. Each step is one short write.
    async fn job_prune(&self, p: PruneParams) -> StoreResult<Pruned>;
    /// Deletes components uploaded before `uploaded_before` that no task
    /// version uses (a job pins a task version's digest, and versions are
    /// never deleted, so no job uses them either), and bytes no component
    /// names any longer; answers how many components, and the digests
    /// whose bytes went (no tenant has them: their compiled artifacts may
    /// go too).
    async fn component_collect(&self, uploaded_before: Millis) -> StoreResult<Collected>;
    /// Counts of jobs by status (all tenants), for benchmarks and metrics.
    async fn job_counts(&self) -> StoreResult<Vec<(crate::job::JobStatus, u64)>>;

    /// Claims up to `limit` due jobs under a new lease, sharing them among
    /// tenants by weight (a tenant's own jobs in its order: run-now first,
    /// then priority, run_at, id), skipping tenants at their `max_running`
    /// or out of fuel for the window; says whether it passed any over.
    async fn job_claim(&self, p: ClaimParams) -> StoreResult<Claim>;
    /// Marks claimed jobs begun (`ClaimedJob::begun`): their runner starts
    /// their guests once this answers. Each is fenced by its lease token;
    /// one no longer under it is left as it is. Committed, not waited on
    /// to be durable: a runner that dies keeps the mark; a crash of the
    /// store that loses it gives the job back uncounted, as it loses a
    /// claim.
    async fn job_begin(&self, jobs: Vec<(String, String)>) -> StoreResult<()>;
    /// Inserts jobs as `job_insert` does, then claims as `job_claim` does,
    /// in one write where the backend can: a runner with room for the
    /// jobs' tenant takes them as they are sent, so that one starts one
    /// round trip after its enqueue, not two. A claim that fails leaves the
    /// inserts standing, with nothing claimed. The claimed jobs (maybe
    /// none) go to `on_claimed` once, as soon as their claim is committed:
    /// that may be before the inserts are durable and this answers (the
    /// jobs may start while the enqueue's sync runs; whatever their
    /// attempts write is durable only after it). It is not called when
    /// the write fails, and must not block.
    async fn job_insert_claim(
        &self,
        jobs: Vec<NewJob>,
        claim: ClaimParams,
        on_claimed: OnClaimed,
    ) -> StoreResult<Vec<StoreResult<Inserted>>> {
        insert_then_claim(self, jobs, claim, on_claimed).await
    }
    /// Puts a queued job first in its tenant's line, due now (run now); a
    /// runner claims it like any other.
    async fn job_run_now(&self, tenant: &str, id: &str) -> StoreResult<JobRecord>;
    /// Extends the leases this owner holds and records progress; answers the
    /// jobs whose lease is gone or whose cancellation was asked for.
    async fn job_heartbeat(&self, p: HeartbeatParams) -> StoreResult<HeartbeatReply>;
    /// Ends attempts, each fenced by its lease token; records the attempts
    /// and charges their usage. One attempt that cannot be recorded does not
    /// fail the others: it is recorded without its log, or left to rescue.
    async fn job_finalize(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>>;
    /// Cancels a queued or waiting job now, or asks a running one to stop.
    async fn job_cancel(&self, tenant: &str, id: &str) -> StoreResult<CancelOutcome>;
    /// Queues a waiting job again, with a new input if one is given (and
    /// its result cache key on it).
    async fn job_resume(
        &self,
        tenant: &str,
        id: &str,
        input: Option<NewInput>,
    ) -> StoreResult<JobRecord>;
    /// Re-drives failed jobs of a tenant's, each under its own guard: back
    /// to the queue, due now, for a new series of attempts after those
    /// made (`max_attempts` = attempts + `Redrive::attempts`), with the
    /// error, output, deadline's clock and fallback of the last series
    /// cleared, within the tenant's `max_queued`. A job that is not failed
    /// answers `Conflict`, one that is not the tenant's `NotFound`; a
    /// unique key another unfinished job holds, `Conflict`.
    async fn job_redrive(
        &self,
        tenant: &str,
        jobs: Vec<Redrive>,
    ) -> StoreResult<Vec<StoreResult<JobRecord>>>;
    /// Takes over the leases of running jobs whose lease expired (their
    /// runner died), without counting a new attempt: the caller decides the
    /// lost attempt like any failed one and finalizes it under the new
    /// lease, so the dead runner's token is fenced out.
    async fn job_rescue(&self, p: RescueParams) -> StoreResult<Vec<ClaimedJob>>;
    /// When the next queued job becomes due, if any is waiting for its time.
    /// Jobs due at or before `passed` may be left out: a claim begun then
    /// passed them over (their concurrency key runs, their tenant is at a
    /// quota), and what frees them wakes the claimers. So may jobs that
    /// were due when they were enqueued: their enqueue woke the claimers.
    async fn job_next_run_at(&self, passed: Millis) -> StoreResult<Option<Millis>>;

    async fn attempt_list(&self, q: AttemptQuery) -> StoreResult<Vec<AttemptRecord>>;

    /// Makes the event rows committed so far readable, in order: where the
    /// backend numbers them after their writes (PostgreSQL, whose writers
    /// commit in no order it can see), a pass that gives each its
    /// store-wide place and its tenant's numbers, answering how many rows;
    /// where it numbers them as they are written (SQLite), a wait for the
    /// sync that makes them readable. Readers call it before they read.
    async fn event_sequence(&self) -> StoreResult<u64> {
        Ok(0)
    }
    /// Event rows after `after_gseq`, every tenant's, in order, up to
    /// `limit`: only rows that are in order and durable (a reader never
    /// sees an event that a crash could take back).
    async fn event_read(&self, after_gseq: i64, limit: u32) -> StoreResult<Vec<EventRow>>;
    /// A tenant's event rows holding events after its sequence number
    /// `after` (the first may hold some up to it), in order, up to `limit`;
    /// readable ones only, as `event_read`.
    async fn event_read_tenant(
        &self,
        tenant: &str,
        after: u64,
        limit: u32,
    ) -> StoreResult<Vec<EventRow>>;
    /// Where the readable events end, store-wide and for `tenant`.
    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads>;
    /// Deletes up to `limit` event rows recorded before `before`, oldest
    /// first; answers how many.
    async fn event_prune(&self, before: Millis, limit: u32) -> StoreResult<u64>;
    /// Rung when events may have become readable, in a process that
    /// writes them all itself (SQLite: after the sync that makes them
    /// durable); `None`: readers poll.
    fn event_signal(&self) -> Option<tokio::sync::watch::Receiver<i64>> {
        None
    }

    /// Records a webhook, within the tenant's `MAX_WEBHOOKS`.
    async fn webhook_insert(&self, w: NewWebhook) -> StoreResult<WebhookRecord>;
    /// A tenant's webhooks, oldest first; `None`: every tenant's.
    async fn webhook_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>>;
    /// Deletes a tenant's webhook and its deliveries not yet made;
    /// `false` when it has no such webhook.
    async fn webhook_delete(&self, tenant: &str, id: &str) -> StoreResult<bool>;
    /// Where the outbox reader `name` stands (`None`: it never read).
    async fn event_cursor(&self, name: &str) -> StoreResult<Option<i64>>;
    /// Moves the reader `name` from `from` (`None`: it never read) to
    /// `to` and records the deliveries it made of the rows between, in
    /// one transaction; `false`, writing nothing, when another moved it
    /// first: so each event is made into deliveries once.
    async fn delivery_insert(
        &self,
        name: &str,
        from: Option<i64>,
        to: i64,
        deliveries: Vec<NewDelivery>,
    ) -> StoreResult<bool>;
    /// The webhooks that have pending deliveries due now, up to `limit`,
    /// by id (one index seek each, whatever their backlogs).
    async fn delivery_due_webhooks(&self, limit: u32) -> StoreResult<Vec<String>>;
    /// Takes up to `limit` of a webhook's pending deliveries that are due,
    /// oldest due first, and holds each for `hold_ms` (its `next_at`), so
    /// that no other sender takes it meanwhile.
    async fn delivery_take(
        &self,
        webhook: &str,
        limit: u32,
        hold_ms: u64,
    ) -> StoreResult<Vec<Delivery>>;
    /// Records a try of each delivery: delivered, failed and due again,
    /// or dead.
    async fn delivery_record(&self, tries: Vec<DeliveryTry>) -> StoreResult<()>;
    /// A webhook's deliveries, newest first, before `before` (an id).
    async fn delivery_list(
        &self,
        tenant: &str,
        webhook: &str,
        before: Option<i64>,
        limit: u32,
    ) -> StoreResult<Vec<Delivery>>;
    /// When the next pending delivery is due, if any.
    async fn delivery_next_at(&self) -> StoreResult<Option<Millis>>;
    /// Makes a tenant's delivery due now again, pending, delivered or
    /// dead: another try, and retries while its window lasts. `false`:
    /// the tenant has no such delivery of that webhook.
    async fn delivery_redeliver(&self, tenant: &str, webhook: &str, id: i64) -> StoreResult<bool>;
    /// Deletes up to `limit` delivered or dead deliveries made before
    /// `before`, oldest first; answers how many.
    async fn delivery_prune(&self, before: Millis, limit: u32) -> StoreResult<u64>;

    /// Puts a tenant's secret, sealed: replaces the one of that name (its
    /// version one more, `created_at` kept) or makes it at version 1,
    /// within the tenant's `MAX_SECRETS`; `true` when it is new.
    async fn secret_put(&self, s: NewSecret) -> StoreResult<(SecretRecord, bool)>;
    /// A tenant's secrets (`None`: every tenant's), by tenant and name (as
    /// bytes): never their sealed values.
    async fn secret_list(&self, tenant: Option<&str>) -> StoreResult<Vec<SecretRecord>>;
    /// Deletes a tenant's secret; `false` when it has none of that name.
    async fn secret_delete(&self, tenant: &str, name: &str) -> StoreResult<bool>;
    /// The sealed values of those of `names` the tenant has, by name;
    /// names it has not are left out.
    async fn secret_get_many(
        &self,
        tenant: &str,
        names: &[String],
    ) -> StoreResult<Vec<SealedSecret>>;

    /// Takes or renews the lease `name` for `holder` until `ttl_ms` from
    /// now: answers it when `holder` holds it now (renewed, its term kept)
    /// or took it (free or expired: the term goes up), and `None` while
    /// another holds it unexpired.
    async fn lease_take(&self, name: &str, holder: &str, ttl_ms: u64)
        -> StoreResult<Option<Lease>>;
    /// Lets the lease go at once if `holder` holds it (a process that
    /// stops), so another takes it without waiting for it to expire;
    /// answers whether it did.
    async fn lease_drop(&self, name: &str, holder: &str) -> StoreResult<bool>;
    /// The lease as it stands, expired or not; `None` when never taken.
    async fn lease_get(&self, name: &str) -> StoreResult<Option<Lease>>;

    /// Creates or replaces a schedule (`SchedulePut`, against its rev),
    /// within the tenant's `MAX_SCHEDULES`; a slot's job goes with the
    /// put through `apply`.
    async fn schedule_put(&self, w: SchedulePut) -> StoreResult<ScheduleRecord> {
        match self.apply(vec![Write::SchedulePut(w)]).await?.pop() {
            Some(Written::SchedulePut(r)) => Ok(r),
            _ => Err(StoreError::Internal(
                "a schedule put answered no schedule".into(),
            )),
        }
    }
    async fn schedule_get(&self, tenant: &str, name: &str) -> StoreResult<Option<ScheduleRecord>>;
    /// A tenant's schedules (`None`: every tenant's), by tenant and name.
    async fn schedule_list(&self, tenant: Option<&str>) -> StoreResult<Vec<ScheduleRecord>>;
    /// Deletes a schedule (its jobs stay); `false` when there was none.
    async fn schedule_delete(&self, tenant: &str, name: &str) -> StoreResult<bool>;
    /// Up to `limit` schedules (every tenant's) due for the firer at `at`,
    /// the longest due first.
    async fn schedule_due(&self, at: Millis, limit: u32) -> StoreResult<Vec<ScheduleRecord>>;
    /// When the next schedule is due for the firer, if any is.
    async fn schedule_next_due(&self) -> StoreResult<Option<Millis>>;

    /// Applies the writes in order, in one transaction: all of them, or
    /// none when one fails (its error is the answer). What needs "these
    /// changes together" (a callback enqueued with the state it reports, a
    /// workflow step's result with its child jobs) is a list of writes.
    /// Unlike the batch calls above, nothing here is partial: an insert
    /// refused, or a finalize fenced out (`StoreError::Fenced`), undoes
    /// every write before it.
    async fn apply(&self, writes: Vec<Write>) -> StoreResult<Vec<Written>>;

    /// Flushes and stops the writer; later writes answer `Unavailable`.
    async fn close(&self);
}

/// `job_insert_claim` as two writes: the insert, then the claim, whose
/// failure leaves the inserts standing with nothing claimed.
pub(crate) async fn insert_then_claim<S: JobStore + ?Sized>(
    store: &S,
    jobs: Vec<NewJob>,
    claim: ClaimParams,
    on_claimed: OnClaimed,
) -> StoreResult<Vec<StoreResult<Inserted>>> {
    let inserted = store.job_insert(jobs).await?;
    let claimed = match store.job_claim(claim).await {
        Ok(c) => c.jobs,
        Err(e) => {
            tracing::warn!(error = %e, "claim after an insert failed; the claim loop will take them");
            Vec::new()
        }
    };
    on_claimed(claimed);
    Ok(inserted)
}

/// Where `job_insert_claim` hands the jobs its claim took.
pub type OnClaimed = Box<dyn FnOnce(Vec<ClaimedJob>) + Send>;
