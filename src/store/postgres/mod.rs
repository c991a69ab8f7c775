//! The shared backend: PostgreSQL through a pool of sqlx connections, for
//! any number of processes on any number of machines on one queue. Each
//! call is one transaction; times that decide anything come from the
//! database's clock. All of its SQL lives in this directory.

pub mod admin;
mod apply;
mod bulk;
mod calls;
mod claim;
mod db;
mod events;
mod expire;
mod finalize;
mod group;
mod jobs;
mod leases;
mod notify;
mod prune;
mod queues;
mod quick_claim;
mod redrive;
mod registry;
mod rows;
mod schedules;
mod secrets;
mod series;
mod steps;
mod tally;
mod tenants;
mod tokens;
mod webhooks;
mod workflows;

use super::fair::Fairness;
use super::records::*;
use super::{
    CallRecord, Capabilities, Clock, Durability, JobStore, Millis, NewToken, NewWorkflow,
    Revocation, Signal, StepRecord, StoreError, StoreResult, TokenInfo, TokenRecord,
    WorkflowRecord,
};
use crate::job::JobStatus;
use crate::quota::Quotas;
use crate::store::job_sql;
use crate::store::registry_rows::{self, TaskRow};
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

    async fn tenant_insert(&self, name: &str) -> StoreResult<Tenant> {
        let name = name.to_owned();
        self.tx(move |tx, now| Box::pin(tenants::tenant_insert(tx, now, name)))
            .await
    }

    async fn tenant_get(&self, name: &str) -> StoreResult<Option<Tenant>> {
        tenants::tenant_get(&self.db.pool, name).await
    }

    async fn tenant_put(&self, t: TenantSettings) -> StoreResult<(Tenant, bool)> {
        self.tx(move |tx, now| Box::pin(tenants::tenant_put(tx, now, t)))
            .await
    }

    async fn tenant_list(&self) -> StoreResult<Vec<Tenant>> {
        tenants::tenant_list(&self.db.pool).await
    }

    async fn tenant_usage(&self, tenant: &str) -> StoreResult<TenantUsage> {
        let now = match &self.db.clock {
            Some(c) => c.now(),
            None => self.db_now().await?,
        };
        tenants::tenant_usage(&self.db.pool, tenant, now).await
    }

    async fn usage_export(&self, q: UsageExportQuery) -> StoreResult<Vec<UsageLine>> {
        use crate::store::dialect::Dialect;
        use crate::store::usage_sql;
        let attempts: Vec<crate::store::tenants::AttemptUsageRow> =
            sqlx::query_as(&usage_sql::attempts(Dialect::Postgres, q.tenant.is_some()))
                .bind(q.from)
                .bind(q.to)
                .bind(q.bucket_ms)
                .bind(&q.tenant)
                .fetch_all(&self.db.pool)
                .await
                .map_err(pg)?;
        let hits: Vec<crate::store::tenants::CacheHitRow> = sqlx::query_as(&usage_sql::cache_hits(
            Dialect::Postgres,
            q.tenant.is_some(),
        ))
        .bind(q.from)
        .bind(q.to)
        .bind(q.bucket_ms)
        .bind(&q.tenant)
        .fetch_all(&self.db.pool)
        .await
        .map_err(pg)?;
        Ok(crate::store::tenants::usage_lines(attempts, hits))
    }

    async fn series(
        &self,
        q: UsageExportQuery,
    ) -> StoreResult<crate::store::series_sql::SeriesRows> {
        series::read(&self.db, &q).await
    }

    async fn queue_sample(&self, keep_ms: i64) -> StoreResult<u64> {
        series::sample(&self.db, keep_ms).await
    }

    async fn token_insert(&self, token: NewToken) -> StoreResult<()> {
        self.tx(move |tx, now| Box::pin(tokens::insert(tx, now, token)))
            .await
    }

    async fn token_get(&self, hash: &str) -> StoreResult<Option<TokenRecord>> {
        tokens::get(&self.db.pool, hash).await
    }

    async fn token_admin_exists(&self) -> StoreResult<bool> {
        tokens::admin_exists(&self.db.pool).await
    }

    async fn token_list(&self) -> StoreResult<Vec<TokenInfo>> {
        tokens::list(&self.db.pool).await
    }

    async fn token_revoke(&self, id: &str) -> StoreResult<Revocation> {
        let id = id.to_owned();
        self.tx(move |tx, _| Box::pin(async move { tokens::revoke(tx, &id).await }))
            .await
    }

    async fn token_touch(&self, id: &str) -> StoreResult<()> {
        // This machine's clock, corrected to the database's: a time that
        // decides nothing is not worth a round trip.
        tokens::touch(&self.db.pool, self.now(), id).await
    }

    async fn component_insert(&self, c: NewComponent) -> StoreResult<(ComponentRecord, bool)> {
        let defaults = self.db.defaults;
        self.tx(move |tx, now| Box::pin(registry::component_insert(tx, now, c, defaults)))
            .await
    }

    async fn component_get(
        &self,
        tenant: &str,
        digest: &str,
    ) -> StoreResult<Option<ComponentRecord>> {
        registry::component_get(&self.db.pool, tenant, digest).await
    }

    async fn component_bytes(&self, digest: &str) -> StoreResult<Option<Vec<u8>>> {
        registry::component_bytes(&self.db.pool, digest).await
    }

    async fn component_usage(&self, tenant: &str) -> StoreResult<(u64, u64)> {
        let (count, bytes): (i64, i64) = sqlx::query_as(registry_rows::USAGE)
            .bind(tenant)
            .fetch_one(&self.db.pool)
            .await
            .map_err(pg)?;
        Ok((count.max(0) as u64, bytes.max(0) as u64))
    }

    async fn task_insert(&self, t: NewTask) -> StoreResult<TaskRecord> {
        let defaults = self.db.defaults;
        self.tx(move |tx, now| Box::pin(registry::task_insert(tx, now, t, defaults)))
            .await
    }

    async fn task_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<TaskRecord>> {
        registry::task_get(&self.db.pool, tenant, name, version).await
    }

    async fn task_head(&self, tenant: &str, name: &str) -> StoreResult<Option<TaskHead>> {
        let rows: Vec<TaskRow> = sqlx::query_as(registry_rows::HEAD.as_str())
            .bind(tenant)
            .bind(name)
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)?;
        Ok(registry_rows::head(rows))
    }

    async fn task_rollout(
        &self,
        tenant: &str,
        name: &str,
        change: RolloutChange,
    ) -> StoreResult<TaskRecord> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.tx(move |tx, now| {
            Box::pin(async move { registry::task_rollout(tx, now, &tenant, &name, change).await })
        })
        .await
    }

    async fn tasks_staged(&self, tenant: Option<&str>, limit: u32) -> StoreResult<Vec<TaskRecord>> {
        let rows: Vec<TaskRow> = sqlx::query_as(&registry_rows::staged(tenant.is_some()))
            .bind(tenant)
            .bind(i64::from(limit))
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)?;
        Ok(rows.into_iter().map(registry_rows::task).collect())
    }

    async fn version_figures(
        &self,
        tenant: &str,
        name: &str,
        versions: [u32; 2],
        since: Millis,
    ) -> StoreResult<Vec<VersionFigures>> {
        let rows = sqlx::query_as(registry_rows::VERSION_FIGURES)
            .bind(tenant)
            .bind(name)
            .bind(registry_rows::first_id_at(since))
            .bind(i64::from(versions[0]))
            .bind(i64::from(versions[1]))
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)?;
        Ok(registry_rows::figures(versions, rows))
    }

    async fn task_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<TaskRecord>> {
        registry::task_versions(&self.db.pool, tenant, name).await
    }

    async fn workflow_insert(&self, w: NewWorkflow) -> StoreResult<WorkflowRecord> {
        let defaults = self.db.defaults;
        self.tx(move |tx, now| Box::pin(workflows::insert(tx, now, w, defaults)))
            .await
    }

    async fn workflow_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<WorkflowRecord>> {
        workflows::get(&self.db.pool, tenant, name, version).await
    }

    async fn workflow_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WorkflowRecord>> {
        workflows::list(&self.db.pool, tenant).await
    }

    async fn workflow_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<(u32, Millis)>> {
        workflows::versions(&self.db.pool, tenant, name).await
    }

    async fn job_steps(&self, id: &str) -> StoreResult<Vec<StepRecord>> {
        steps::list(&self.db.pool, id).await
    }

    async fn job_call(&self, id: &str, call: &str) -> StoreResult<Option<CallRecord>> {
        calls::get(&self.db.pool, id, call).await
    }

    async fn job_calls(&self, id: &str) -> StoreResult<Vec<CallRecord>> {
        calls::list(&self.db.pool, id).await
    }

    async fn ended_sample(&self, tenant: &str, task: &str, limit: u32) -> StoreResult<Vec<String>> {
        sqlx::query_scalar(job_sql::ENDED_SAMPLE)
            .bind(tenant)
            .bind(task)
            .bind(i64::from(limit))
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)
    }

    async fn recorded_run(&self, tenant: &str, id: &str) -> StoreResult<Option<RecordedRun>> {
        let row: Option<job_sql::RecordedRow> = sqlx::query_as(job_sql::RECORDED_RUN)
            .bind(tenant)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(pg)?;
        row.map(|r| job_sql::recorded_run(id, r)).transpose()
    }

    async fn job_parent(&self, id: &str) -> StoreResult<Option<String>> {
        calls::parent(&self.db.pool, id).await
    }

    async fn job_callback_of(&self, id: &str) -> StoreResult<Option<CallRecord>> {
        calls::callback_of(&self.db.pool, id).await
    }

    async fn task_list(&self, tenant: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        registry::task_list(&self.db.pool, tenant).await
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
                self.tx(move |tx, now| Box::pin(jobs::insert_alone(tx, now, job, defaults)))
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

    async fn job_get(&self, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>> {
        jobs::get(&self.db.pool, tenant, id).await
    }

    async fn job_list(&self, q: JobQuery) -> StoreResult<JobPage> {
        jobs::list(&self.db.pool, q).await
    }

    async fn queue_list(&self, tenant: Option<&str>) -> StoreResult<Vec<QueueDepth>> {
        let one = tenant.is_some();
        let rows: Vec<crate::store::rows::QueueDepthRow> =
            sqlx::query_as(&crate::store::queue_rows::depths(one))
                .bind(tenant)
                .bind(self.now())
                .fetch_all(&self.db.pool)
                .await
                .map_err(pg)?;
        let paused: Vec<(String, String)> = sqlx::query_as(&crate::store::queue_rows::paused(one))
            .bind(tenant)
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)?;
        crate::store::rows::queues_from(rows, paused)
    }

    async fn job_depths(&self) -> StoreResult<Vec<(String, JobStatus, u64)>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(crate::store::rows::DEPTHS_SQL)
            .fetch_all(&self.db.pool)
            .await
            .map_err(pg)?;
        crate::store::rows::depths_from(rows)
    }

    async fn queue_pause(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        queues::pause(&self.db, tenant, queue).await
    }

    async fn queue_resume(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        let was = queues::resume(&self.db, tenant, queue).await?;
        self.poke();
        Ok(was)
    }

    async fn queue_tidy(&self) -> StoreResult<u64> {
        let n = queues::tidy(&self.db).await?;
        if n > 0 {
            self.poke();
        }
        Ok(n)
    }

    async fn throttle_tidy(&self) -> StoreResult<u64> {
        queues::throttle_tidy(&self.db).await
    }

    async fn job_expire(&self, jobs: Vec<Expire>) -> StoreResult<u64> {
        if jobs.is_empty() {
            return Ok(0);
        }
        expire::expire(&self.db, jobs).await
    }

    async fn job_expiring(&self, limit: u32) -> StoreResult<Vec<ExpiringJob>> {
        expire::expiring(&self.db, limit).await
    }

    async fn job_prune(&self, p: PruneParams) -> StoreResult<Pruned> {
        prune::prune(&self.db, p).await
    }

    async fn component_collect(&self, uploaded_before: Millis) -> StoreResult<Collected> {
        prune::collect(&self.db, uploaded_before).await
    }

    async fn job_counts(&self) -> StoreResult<Vec<(JobStatus, u64)>> {
        jobs::counts(&self.db.pool).await
    }

    async fn job_claim(&self, p: ClaimParams) -> StoreResult<Claim> {
        if let Some(claimed) = quick_claim::claim(&self.db, &self.claims, &p, &self.fair).await? {
            return Ok(claimed);
        }
        let (fair, defaults) = (self.fair.clone(), self.db.defaults);
        self.tx(move |tx, now| Box::pin(claim::claim(tx, now, p, fair, defaults)))
            .await
    }

    async fn job_run_now(&self, tenant: &str, id: &str) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        let r = self
            .tx(move |tx, now| Box::pin(async move { jobs::run_now(tx, now, &tenant, &id).await }))
            .await;
        self.poke();
        r
    }

    async fn job_begin(&self, begun: Vec<(String, String)>) -> StoreResult<()> {
        if begun.is_empty() {
            return Ok(());
        }
        // On the claims' connections: committed without waiting for its
        // WAL flush, as a claim is.
        jobs::begin(&self.claims, begun).await
    }

    async fn job_heartbeat(&self, p: HeartbeatParams) -> StoreResult<HeartbeatReply> {
        self.tx(move |tx, now| Box::pin(jobs::heartbeat(tx, now, p)))
            .await
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

    async fn job_cancel(&self, tenant: &str, id: &str) -> StoreResult<CancelOutcome> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.tx(move |tx, now| Box::pin(async move { jobs::cancel(tx, now, &tenant, &id).await }))
            .await
    }

    async fn job_redrive(
        &self,
        tenant: &str,
        jobs: Vec<Redrive>,
    ) -> StoreResult<Vec<StoreResult<JobRecord>>> {
        let (tenant, defaults) = (tenant.to_owned(), self.db.defaults);
        let r = self
            .tx(move |tx, now| {
                Box::pin(async move { redrive::redrive(tx, now, &tenant, jobs, defaults).await })
            })
            .await;
        self.poke();
        r
    }

    async fn job_resume(
        &self,
        tenant: &str,
        id: &str,
        input: Option<NewInput>,
    ) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        let r = self
            .tx(move |tx, now| {
                Box::pin(async move { jobs::resume(tx, now, &tenant, &id, input).await })
            })
            .await;
        self.poke();
        r
    }

    async fn job_rescue(&self, p: RescueParams) -> StoreResult<Vec<ClaimedJob>> {
        self.tx(move |tx, now| Box::pin(jobs::rescue(tx, now, p)))
            .await
    }

    async fn job_next_run_at(&self, passed: Millis) -> StoreResult<Option<Millis>> {
        jobs::next_run_at(&self.db.pool, passed).await
    }

    async fn attempt_list(&self, q: AttemptQuery) -> StoreResult<Vec<AttemptRecord>> {
        jobs::attempt_list(&self.db.pool, q).await
    }

    async fn event_sequence(&self) -> StoreResult<u64> {
        events::sequence(&self.db.pool).await
    }

    async fn event_read(&self, after_gseq: i64, limit: u32) -> StoreResult<Vec<EventRow>> {
        events::read(&self.db.pool, after_gseq, limit).await
    }

    async fn event_read_tenant(
        &self,
        tenant: &str,
        after: u64,
        limit: u32,
    ) -> StoreResult<Vec<EventRow>> {
        events::read_tenant(&self.db.pool, tenant, after, limit).await
    }

    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads> {
        events::heads(&self.db.pool, tenant).await
    }

    async fn event_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        events::prune(&self.db.pool, before, limit).await
    }

    async fn webhook_insert(&self, w: NewWebhook) -> StoreResult<WebhookRecord> {
        webhooks::insert(&self.db, w).await
    }

    async fn webhook_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>> {
        webhooks::list(&self.db.pool, tenant).await
    }

    async fn webhook_delete(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        webhooks::delete(&self.db.pool, tenant, id).await
    }

    async fn event_cursor(&self, name: &str) -> StoreResult<Option<i64>> {
        webhooks::cursor(&self.db.pool, name).await
    }

    async fn delivery_insert(
        &self,
        name: &str,
        from: Option<i64>,
        to: i64,
        deliveries: Vec<NewDelivery>,
    ) -> StoreResult<bool> {
        webhooks::insert_deliveries(&self.db, name, from, to, deliveries).await
    }

    async fn delivery_due_webhooks(&self, limit: u32) -> StoreResult<Vec<String>> {
        webhooks::due_webhooks(&self.db, limit).await
    }

    async fn delivery_take(
        &self,
        webhook: &str,
        limit: u32,
        hold_ms: u64,
    ) -> StoreResult<Vec<Delivery>> {
        webhooks::take(&self.db, webhook, limit, hold_ms).await
    }

    async fn delivery_record(&self, tries: Vec<DeliveryTry>) -> StoreResult<()> {
        webhooks::record(&self.db.pool, tries).await
    }

    async fn delivery_list(
        &self,
        tenant: &str,
        webhook: &str,
        before: Option<i64>,
        limit: u32,
    ) -> StoreResult<Vec<Delivery>> {
        webhooks::list_deliveries(&self.db.pool, tenant, webhook, before, limit).await
    }

    async fn delivery_next_at(&self) -> StoreResult<Option<Millis>> {
        webhooks::next_at(&self.db.pool).await
    }

    async fn delivery_redeliver(&self, tenant: &str, webhook: &str, id: i64) -> StoreResult<bool> {
        webhooks::redeliver(&self.db.pool, tenant, webhook, id, self.now()).await
    }

    async fn delivery_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        webhooks::prune(&self.db.pool, before, limit).await
    }

    async fn apply(&self, writes: Vec<Write>) -> StoreResult<Vec<Written>> {
        let defaults = self.db.defaults;
        let r = self
            .tx(move |tx, now| Box::pin(apply::apply(tx, now, writes, defaults)))
            .await;
        self.poke();
        r
    }

    async fn secret_put(
        &self,
        s: crate::store::NewSecret,
    ) -> StoreResult<(crate::store::SecretRecord, bool)> {
        secrets::put(&self.db, s).await
    }

    async fn secret_list(
        &self,
        tenant: Option<&str>,
    ) -> StoreResult<Vec<crate::store::SecretRecord>> {
        secrets::list(&self.db.pool, tenant).await
    }

    async fn secret_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        secrets::delete(&self.db.pool, tenant, name).await
    }

    async fn secret_get_many(
        &self,
        tenant: &str,
        names: &[String],
    ) -> StoreResult<Vec<crate::store::SealedSecret>> {
        secrets::get_many(&self.db.pool, tenant, names).await
    }

    async fn schedule_get(
        &self,
        tenant: &str,
        name: &str,
    ) -> StoreResult<Option<crate::store::ScheduleRecord>> {
        schedules::get(&self.db.pool, tenant, name).await
    }

    async fn schedule_list(
        &self,
        tenant: Option<&str>,
    ) -> StoreResult<Vec<crate::store::ScheduleRecord>> {
        schedules::list(&self.db.pool, tenant).await
    }

    async fn schedule_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        schedules::delete(&self.db.pool, tenant, name).await
    }

    async fn schedule_due(
        &self,
        at: Millis,
        limit: u32,
    ) -> StoreResult<Vec<crate::store::ScheduleRecord>> {
        schedules::due(&self.db.pool, at, limit).await
    }

    async fn schedule_next_due(&self) -> StoreResult<Option<Millis>> {
        schedules::next_due(&self.db.pool).await
    }

    async fn lease_take(
        &self,
        name: &str,
        holder: &str,
        ttl_ms: u64,
    ) -> StoreResult<Option<Lease>> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        self.tx(move |tx, now| {
            Box::pin(
                async move { leases::take(tx, now, &n, &h, crate::time::after(now, ttl_ms)).await },
            )
        })
        .await
    }

    async fn lease_drop(&self, name: &str, holder: &str) -> StoreResult<bool> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        self.tx(move |tx, now| Box::pin(async move { leases::drop(tx, now, &n, &h).await }))
            .await
    }

    async fn lease_get(&self, name: &str) -> StoreResult<Option<Lease>> {
        leases::get(&self.db.pool, name).await
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
                .tx(move |tx, now| Box::pin(finalize::finalize_one(tx, now, one, with_log)))
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
