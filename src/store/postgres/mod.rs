//! The shared backend: PostgreSQL through a pool of sqlx connections, for
//! any number of processes on any number of machines on one queue. Each
//! call is one transaction; times that decide anything come from the
//! database's clock. All of its SQL lives in this directory.

pub mod admin;
mod bulk;
mod claim;
mod db;
mod events;
mod exec;
mod finalize;
mod group;
mod jobs;
mod notify;
mod quick_claim;
mod rows;
mod tally;

use super::fair::Fairness;
use super::insert;
use super::records::*;
use super::{Capabilities, Clock, Durability, JobStore, Millis, Signal, StoreError, StoreResult};
use crate::quota::Quotas;
use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Postgres, Transaction};
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connections kept open by default.
pub const DEFAULT_POOL: u32 = 16;
/// Connections for claims (a process's claim loop and sparse claimer).
const CLAIM_POOL: u32 = 4;
/// Connections for plain enqueues' statements: two batches in flight
/// (`group.rs`), and bulk inserts beside them.
const ENQUEUE_POOL: u32 = 4;
/// How the claims' connections plan their two statements, the read of the
/// contending tenants and the take (`quick_claim.rs`): once, as a generic
/// plan, which for the take can only be the one that takes each tenant's
/// jobs in its index's order and finds them by id, and for the read is
/// one lookup by key for each tenant. Planned with its values on every run, as before, the take spent
/// ~0.35 ms of the server's CPU planning, twice what running it costs
/// (one job; ~0.9 against ~0.5 ms for 32). Left to choose from the
/// statistics, a generic plan read a lateral `LIMIT` as a tenth of the
/// tenant's jobs: it sorted all of them, or hashed the whole table to find
/// the picked ids (30 ms a claim at 100,000 jobs queued). Sorts, hashes,
/// merges and full scans are therefore off on these connections, where
/// nothing else runs; the sort that orders the counters' update has no
/// other way and is kept. (JIT is off on every connection: `session`.)
const TAKE_PLAN: [(&str, &str); 6] = [
    ("plan_cache_mode", "force_generic_plan"),
    ("enable_sort", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
    ("enable_seqscan", "off"),
    ("enable_bitmapscan", "off"),
];
/// Longest a session may sit idle inside a transaction before the server
/// ends it: a process that stalls mid-transaction (SIGSTOP, a hung
/// network) must not hold its rows' locks for ever.
const IDLE_IN_TRANSACTION_MS: u64 = 10_000;
/// Longest one statement may run.
const STATEMENT_TIMEOUT_MS: u64 = 30_000;

/// A database error; its text is logged, never answered.
pub(crate) fn pg(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
            StoreError::Unavailable(e.to_string())
        }
        // Connection exceptions, a server shutting down or starting
        // (operator intervention), out of connections or memory: the
        // database is there again soon, and the caller may try again.
        _ if e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57") || c.starts_with("53")) =>
        {
            StoreError::Unavailable(e.to_string())
        }
        sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => {
            StoreError::Unavailable(e.to_string())
        }
        _ => StoreError::Internal(e.to_string()),
    }
}

/// The constraint a database error broke, if it broke one that means
/// something to a caller.
pub(crate) fn violated(e: &sqlx::Error) -> Option<(Violation, String)> {
    let db = e.as_database_error()?;
    let constraint = db.constraint().unwrap_or_default().to_owned();
    match db.code().as_deref() {
        Some("23505") => Some((Violation::Unique, constraint)),
        Some("23503") => Some((Violation::ForeignKey, constraint)),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    Unique,
    ForeignKey,
}

/// How to open the database.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// `postgres://…`
    pub url: String,
    pub durability: Durability,
    /// The quotas of tenants the admin set none for.
    pub quotas: Quotas,
    /// Connections in the pool.
    pub pool: u32,
    /// Migrate the schema at open (`taskbox migrate` does it on its own).
    pub migrate: bool,
}

/// Why the database could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0:?} is not a PostgreSQL URL; use postgres://USER@HOST:PORT/DATABASE")]
    BadUrl(String),
    #[error("cannot connect to the database {url}: {source}")]
    Connect { url: String, source: sqlx::Error },
    #[error("cannot migrate the database {url}: {source}")]
    Migrate {
        url: String,
        source: sqlx::migrate::MigrateError,
    },
}

pub struct PgStore {
    /// The pool, the test's clock (if any) and the quota defaults.
    db: db::Db,
    /// The database's clock less this machine's, in ms, as last measured:
    /// `now()` for what decides nothing (an attempt's recorded times).
    skew: AtomicI64,
    /// This process's fair-share state of claims (each claimer keeps its
    /// own, which is fair per claimer).
    fair: Arc<std::sync::Mutex<Fairness>>,
    /// LISTEN and batched NOTIFY between the processes on this database.
    notifier: notify::Notifier,
    /// The enqueues committed together.
    group: group::Group,
    /// Connections for claims' takes: each commits without waiting for
    /// its WAL flush, and is planned with its values (`quick_claim`).
    claims: sqlx::PgPool,
}

/// The URL without its password, for messages.
fn redacted(url: &str) -> String {
    match url.split_once('@') {
        Some((head, tail)) => match head.rsplit_once(':') {
            Some((user, _)) if user.contains("//") && !user.ends_with('/') => {
                format!("{user}:***@{tail}")
            }
            _ => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A session's settings: `synchronous_commit` as given, and bounds on what
/// a stalled process can hold.
fn session(base: &PgConnectOptions, synchronous_commit: &str) -> PgConnectOptions {
    base.clone()
        .options([
            (
                "idle_in_transaction_session_timeout",
                IDLE_IN_TRANSACTION_MS.to_string(),
            ),
            ("statement_timeout", STATEMENT_TIMEOUT_MS.to_string()),
            ("synchronous_commit", synchronous_commit.to_string()),
            // A statement whose estimated cost passes `jit_above_cost`
            // (a claim's, once the queue is large) is compiled first:
            // ~200 ms here, for statements that run in a millisecond.
            ("jit", "off".to_string()),
        ])
        .application_name("taskbox")
        .disable_statement_logging()
}

/// A pool of up to `max` connections for one kind of statement, opened
/// when first wanted, lent without a ping (as the main pool's).
fn lazy_pool(max: u32, connect: PgConnectOptions) -> sqlx::PgPool {
    PgPoolOptions::new()
        .max_connections(max)
        .min_connections(0)
        .test_before_acquire(false)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(connect)
}

impl PgStore {
    /// Connects, and migrates unless told not to. `clock: None` takes every
    /// time from the database's clock; tests pass one they move.
    pub async fn open(
        opts: &PostgresOptions,
        clock: Option<Arc<dyn Clock>>,
    ) -> Result<PgStore, OpenError> {
        let shown = redacted(&opts.url);
        let base =
            PgConnectOptions::from_str(&opts.url).map_err(|_| OpenError::BadUrl(shown.clone()))?;
        let synchronous = match opts.durability {
            Durability::Full => "on",
            Durability::Normal => "off",
        };
        let connect = session(&base, synchronous);
        let claims = lazy_pool(CLAIM_POOL, session(&base, "off").options(TAKE_PLAN));
        // The plain enqueue's statement (`bulk::insert_now`) on connections
        // that plan it once. Left to choose, PostgreSQL planned it with its
        // values on every run (~0.35 ms, as long as running it for one
        // job); its plan does not depend on them (arrays, lookups by key).
        let enqueues = lazy_pool(
            ENQUEUE_POOL,
            connect
                .clone()
                .options([("plan_cache_mode", "force_generic_plan")]),
        );
        let pool = PgPoolOptions::new()
            .max_connections(opts.pool.max(2))
            .min_connections(1)
            // sqlx pings a connection before lending it by default: a round
            // trip more for every claim, batch of ends and enqueue. A broken
            // connection fails its statement instead, which callers take
            // as `Unavailable` and try again.
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(connect)
            .await
            .map_err(|source| OpenError::Connect {
                url: shown.clone(),
                source,
            })?;
        if opts.migrate {
            let migrate = async { crate::store::migrations::postgres().await?.run(&pool).await };
            migrate.await.map_err(|source| OpenError::Migrate {
                url: shown.clone(),
                source,
            })?;
        }
        let store = PgStore {
            notifier: notify::Notifier::start(pool.clone()),
            db: db::Db {
                pool,
                enqueues,
                clock,
                defaults: opts.quotas,
            },
            group: group::Group::default(),
            claims,
            skew: AtomicI64::new(0),
            fair: Arc::default(),
        };
        if store.db.clock.is_none() {
            let local = super::SystemClock.now();
            if let Ok(db) = store.db_now().await {
                store.skew.store(db - local, Ordering::Relaxed);
            }
        }
        Ok(store)
    }

    /// The database's clock, read once.
    async fn db_now(&self) -> StoreResult<Millis> {
        sqlx::query_scalar(db::DB_NOW)
            .fetch_one(&self.db.pool)
            .await
            .map_err(pg)
    }

    /// A transaction and the time it decides by.
    async fn begin(&self) -> StoreResult<(Transaction<'static, Postgres>, Millis)> {
        self.db.begin().await
    }

    /// Runs `f` in one transaction, committed when it answers Ok and
    /// rolled back when it answers an error.
    async fn tx<T, F>(&self, f: F) -> StoreResult<T>
    where
        F: for<'c> FnOnce(
            &'c mut Transaction<'static, Postgres>,
            Millis,
        ) -> futures_util::future::BoxFuture<'c, StoreResult<T>>,
    {
        let (mut tx, now) = self.begin().await?;
        match f(&mut tx, now).await {
            Ok(v) => {
                tx.commit().await.map_err(pg)?;
                Ok(v)
            }
            Err(e) => {
                // Dropped, the transaction rolls back; say so at once.
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }
}

#[async_trait]
impl JobStore for PgStore {
    fn now(&self) -> Millis {
        match &self.db.clock {
            Some(c) => c.now(),
            None => super::SystemClock.now() + self.skew.load(Ordering::Relaxed),
        }
    }

    fn signals(&self) -> Option<tokio::sync::broadcast::Receiver<Signal>> {
        Some(self.notifier.subscribe())
    }

    fn capabilities(&self) -> Capabilities {
        // Other processes may share the database: a running job is
        // rescued only once its lease has expired.
        Capabilities {
            owns_database: false,
        }
    }

    async fn exec_write(
        &self,
        _how: crate::store::exec::Commit,
        work: crate::store::exec::WriteWork,
    ) -> StoreResult<Box<dyn std::any::Any + Send>> {
        self.tx(move |tx, now| Box::pin(async move { work(&mut exec::PgExec(tx), now).await }))
            .await
    }

    fn defaults(&self) -> Quotas {
        self.db.defaults
    }

    fn jobs_changed(&self) {
        self.poke();
    }

    async fn exec_read(&self) -> StoreResult<Box<dyn crate::store::exec::Exec + '_>> {
        let conn = self.db.pool.acquire().await.map_err(pg)?;
        Ok(Box::new(exec::PgExec(conn)))
    }

    async fn job_insert(&self, mut new: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>> {
        let defaults = self.db.defaults;
        if new.len() == 1 {
            // One plain job (an API enqueue): committed with whatever
            // other requests' jobs wait at the same moment (`group`).
            let job = new.pop().ok_or(StoreError::NotFound)?;
            // A job with a key takes a lock on it (or waits on a unique
            // index) in its transaction: batched, two batches could take
            // two keys in opposite orders. Such a job commits alone.
            // A key's limit is written by that path alone.
            let keyed = job.idempotency.is_some()
                || job.unique_key.is_some()
                || job.supersedes
                || job.debounce.is_some()
                || job.concurrency_limit.is_some();
            let r = if keyed {
                self.tx(move |tx, now| {
                    Box::pin(async move {
                        insert::alone(&mut exec::PgExec(tx), now, job, &defaults).await
                    })
                })
                .await
            } else {
                self.group.insert(&self.db, job).await
            };
            self.poke();
            return Ok(vec![r]);
        }
        // One round trip, when they are plain and no id is taken.
        let r = match bulk::insert_now(&self.db, &new).await {
            Ok(Some(answers)) => Ok(answers),
            Ok(None) => {
                self.tx(move |tx, now| Box::pin(jobs::insert(tx, now, new, defaults)))
                    .await
            }
            Err(e) => Err(e),
        };
        self.poke();
        r
    }

    async fn job_claim(&self, p: ClaimParams) -> StoreResult<Claim> {
        if let Some(claimed) = quick_claim::claim(&self.db, &self.claims, &p, &self.fair).await? {
            return Ok(claimed);
        }
        let (fair, defaults) = (self.fair.clone(), self.db.defaults);
        self.tx(move |tx, now| {
            Box::pin(async move {
                super::claim::claim(&mut exec::PgExec(tx), now, p, &fair, &defaults).await
            })
        })
        .await
    }

    async fn job_begin(&self, begun: Vec<(String, String)>) -> StoreResult<()> {
        if begun.is_empty() {
            return Ok(());
        }
        // On the claims' connections: committed without waiting for its
        // WAL flush, as a claim is.
        jobs::begin(&self.claims, begun).await
    }

    async fn job_finalize(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>> {
        // An end may free a concurrency key or a tenant's room, or queue
        // the job again: others look (batched, at most one NOTIFY per
        // few ms from this process).
        super::fair::charge_ends(&self.fair, &batch);
        let r = self.finalize_batch(batch).await;
        self.poke();
        r
    }

    async fn event_sequence(&self) -> StoreResult<u64> {
        events::sequence(&self.db.pool).await
    }

    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads> {
        events::heads(&self.db.pool, tenant).await
    }

    async fn close(&self) {
        self.notifier.stop();
        self.claims.close().await;
        self.db.enqueues.close().await;
        self.db.pool.close().await;
    }
}

impl PgStore {
    /// Tells the other processes, batched, that jobs may be claimable.
    fn poke(&self) {
        self.notifier.poke();
    }

    /// A batch of ends in one transaction; if it fails as a whole, each on
    /// its own.
    async fn finalize_batch(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>> {
        let all = Arc::new(batch);
        let shared = all.clone();
        let t0 = std::time::Instant::now();
        match self
            .tx(move |tx, now| Box::pin(async move { finalize::finalize(tx, now, &shared).await }))
            .await
        {
            Ok(out) => {
                crate::metrics::get().committed("postgres", "finalize", all.len(), t0.elapsed());
                Ok(out)
            }
            Err(e) => {
                // One attempt that cannot be recorded must not take the
                // others with it: each on its own, then without its log.
                let batch = Arc::try_unwrap(all).unwrap_or_else(|a| (*a).clone());
                tracing::warn!(error = %e, jobs = batch.len(), "a finalize batch failed; writing its jobs one by one");
                let mut out = Vec::with_capacity(batch.len());
                for f in batch {
                    out.push(self.finalize_alone(f).await?);
                }
                Ok(out)
            }
        }
    }

    /// One attempt's end in a transaction of its own: as it is, else
    /// without its log; if even that fails, nothing is written (the lease
    /// runs out and the rescuer decides the attempt).
    async fn finalize_alone(&self, f: Finalize) -> StoreResult<Finalized> {
        for with_log in [true, false] {
            let one = f.clone();
            let r = self
                .tx(move |tx, now| {
                    Box::pin(async move {
                        super::finalize::alone(&mut exec::PgExec(tx), now, &one, with_log).await
                    })
                })
                .await;
            match r {
                Ok(r) => return Ok(r),
                Err(e) => {
                    tracing::warn!(job = %f.id, with_log, error = %e, "an attempt's end could not be written")
                }
            }
        }
        Ok(Finalized::Fenced)
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            redacted("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redacted("postgres://h/db"), "postgres://h/db");
    }
}
