//! The one storage seam. `JobStore` is the driver each backend implements
//! (SQLite embedded, PostgreSQL shared): its clock, its write and read
//! connections as `exec::Exec`, the hot path's batch entry points and its
//! events' numbering. Every transaction is written once over `Exec`, as
//! `impl dyn JobStore` in its own file (insert.rs, finalize.rs, claim.rs,
//! apply.rs, the nouns' files), and both backends run the one conformance
//! suite.

pub mod apply;
pub mod attempt_sql;
pub mod call_rows;
pub mod claim;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod db_row;
pub mod debounce;
pub mod dialect;
pub mod ending;
pub mod ending_sql;
pub mod events;
pub mod exec;
pub mod expire_sql;
pub mod fair_keys;
pub mod finalize;
pub mod heartbeat;
pub mod insert;
pub mod insert_sql;
pub mod job_control;
pub mod job_reads;
pub mod job_sql;
pub mod leases;
pub mod migrations;
mod open;
pub mod outbox;
pub mod postgres;
pub mod prune_sql;
pub mod queues;
pub mod redrive;
pub mod registry;
pub mod rows;
pub mod schedule_rows;
pub mod secrets;
pub mod series_sql;
pub mod sqlite;
pub mod stages;
pub mod step_rows;
pub mod tally;
pub mod tenants;
pub mod throttle;
pub mod tokens;
pub mod usage_sql;
pub mod webhooks;
pub mod whose;
pub mod workflows;

pub use clock::{Clock, ManualClock, Millis, SystemClock};
// The store's vocabulary and its pure rules live in the core crate, below
// every backend (DESIGN §8); they keep their paths here.
pub use open::{open, Backend, Capabilities, Durability, OpenError, StoreOptions};
pub use records::*;
pub use secrets::{NewSecret, SealedSecret, SecretRecord, MAX_SECRETS};
pub use taskbox_core::store_error::{StoreError, StoreResult};
pub use taskbox_core::{begun, clock, fair, flow_key, records, transition};
pub use workflows::{NewWorkflow, WorkflowRecord};

use async_trait::async_trait;

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

impl dyn JobStore {
    /// Runs `f` as one write transaction, committed before this answers
    /// (on SQLite, in a coming group commit, `how` saying how soon).
    pub async fn write<T, F>(&self, how: exec::Commit, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(
                &'t mut dyn exec::Exec,
                Millis,
            ) -> futures_util::future::BoxFuture<'t, StoreResult<T>>
            + Send
            + 'static,
    {
        let work: exec::WriteWork = Box::new(move |tx, now| {
            Box::pin(async move {
                let t = f(tx, now).await?;
                Ok(Box::new(t) as Box<dyn std::any::Any + Send>)
            })
        });
        let any = self.exec_write(how, work).await?;
        any.downcast::<T>()
            .map(|t| *t)
            .map_err(|_| StoreError::Internal("a write answered another type".into()))
    }

    /// A connection for reads.
    pub async fn read(&self) -> StoreResult<Box<dyn exec::Exec + '_>> {
        self.exec_read().await
    }
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

    /// The quotas of tenants the admin set none for.
    fn defaults(&self) -> crate::quota::Quotas;

    /// Signals from other processes on the same database, for a store
    /// that others share; `None` where this process is alone (its own
    /// API tells its runner directly). Signals can be lost (a dropped
    /// connection); the runner's poll is the fallback.
    fn signals(&self) -> Option<tokio::sync::broadcast::Receiver<Signal>> {
        None
    }

    /// The last event row readers may read (`gseq`): on SQLite, the last
    /// committed and synced; on PostgreSQL every numbered row is.
    fn readable_events(&self) -> i64 {
        i64::MAX
    }

    /// Tells whoever claims that jobs may have become claimable (other
    /// processes on a shared database; nothing where this one is alone).
    fn jobs_changed(&self) {}

    /// Runs a write transaction written once over `Exec`, on the backend's
    /// write connection (`dyn JobStore::write` is the typed way in).
    async fn exec_write(
        &self,
        how: exec::Commit,
        work: exec::WriteWork,
    ) -> StoreResult<Box<dyn std::any::Any + Send>>;

    /// A connection for reads (`dyn JobStore::read`).
    async fn exec_read(&self) -> StoreResult<Box<dyn exec::Exec + '_>>;

    /// Inserts jobs in one transaction, each under its own uniqueness rules
    /// and within its tenant's `max_queued`; one failing does not fail the
    /// others. A `run_at` in the past is now.
    async fn job_insert(&self, jobs: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>>;

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
    /// Ends attempts, each fenced by its lease token; records the attempts
    /// and charges their usage. One attempt that cannot be recorded does not
    /// fail the others: it is recorded without its log, or left to rescue.
    async fn job_finalize(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>>;

    /// Makes the event rows committed so far readable, in order: where the
    /// backend numbers them after their writes (PostgreSQL, whose writers
    /// commit in no order it can see), a pass that gives each its
    /// store-wide place and its tenant's numbers, answering how many rows;
    /// where it numbers them as they are written (SQLite), a wait for the
    /// sync that makes them readable. Readers call it before they read.
    async fn event_sequence(&self) -> StoreResult<u64> {
        Ok(0)
    }
    /// Where the readable events end, store-wide and for `tenant`.
    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads>;
    /// Rung when events may have become readable, in a process that
    /// writes them all itself (SQLite: after the sync that makes them
    /// durable); `None`: readers poll.
    fn event_signal(&self) -> Option<tokio::sync::watch::Receiver<i64>> {
        None
    }

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
