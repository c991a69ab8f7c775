//! The embedded backend: one SQLite file in WAL mode, written by one
//! group-committing writer thread (rusqlite), read through a pool of read-only
//! connections (sqlx). All of its SQL lives in this directory.

mod apply;
mod calls;
mod checkpoint;
mod claim;
mod events;
mod expire;
mod finalize;
mod jobs;
mod leases;
mod prune;
mod queues;
mod redrive;
mod registry;
mod rows;
mod schedules;
mod secrets;
mod series;
mod steps;
mod syncer;
mod tally;
mod tenants;
mod tokens;
mod webhooks;
mod workflows;
mod writer;

use writer::Class;

use super::fair::Fairness;
use super::records::*;
use super::{
    CallRecord, Capabilities, Clock, Durability, JobStore, Millis, NewToken, NewWorkflow,
    OnClaimed, Revocation, StepRecord, StoreError, StoreResult, TokenInfo, TokenRecord,
    WorkflowRecord,
};
use crate::job::JobStatus;
use crate::quota::{window_start, Quotas};
use crate::store::dialect::Dialect;
use crate::store::job_sql;
use crate::store::registry_rows::{self, TaskRow};
use crate::store::rows::AttemptRow;
use crate::store::rows::{counts_from, page_push};
use crate::store::tenants::{last_window, usage_from, UsageRow, USAGE_COLUMNS};
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tenants::TenantRow;
use tokio::sync::Mutex;
use writer::Writer;

/// Read connections kept open.
const READERS: u32 = 4;
/// Most jobs claimed or finalized per write, and most inserted by a write
/// of the prompt class. A write holds the one writer while it runs, and a
/// request's write waits for the one running: a big claim or finalize is
/// made of small writes, sent together so that they still share a
/// transaction when nothing else waits.
const JOBS_PER_WRITE: usize = 64;
/// Jobs a bulk insert writes in one write, and so one transaction: a whole
/// batch of the API's (`enqueue::MAX_BATCH`), which the batch promises.
/// About 3 ms of the writer's time.
const BULK_JOBS_PER_WRITE: usize = 1_000;
const CLAIMS_PER_WRITE: usize = 32;
const FINALIZES_PER_WRITE: usize = 64;
/// The writer's page cache, in KiB.
const WRITER_CACHE_KIB: u32 = 16 * 1024;

/// A reader's database error; its text is logged, never answered.
pub(crate) fn db(e: sqlx::Error) -> StoreError {
    StoreError::Internal(e.to_string())
}

/// A database error on the writer's connection.
pub(crate) fn wdb(e: rusqlite::Error) -> StoreError {
    StoreError::Internal(e.to_string())
}

/// Prepares, on the writer's connection, a statement written once for both
/// backends (`$N` parameters, bound by position only when numbered in
/// order: `dialect::numbered_in_order`).
pub(crate) fn shared<'c>(
    conn: &'c rusqlite::Connection,
    sql: &str,
) -> StoreResult<rusqlite::CachedStatement<'c>> {
    debug_assert!(
        crate::store::dialect::numbered_in_order(sql),
        "parameters out of order for SQLite: {sql}"
    );
    conn.prepare_cached(sql).map_err(wdb)
}

/// The constraints whose violation means something to a caller.
pub(crate) enum Constraint {
    Unique,
    ForeignKey,
}

pub(crate) fn constraint(e: &rusqlite::Error) -> Option<Constraint> {
    use rusqlite::ffi;
    match e {
        rusqlite::Error::SqliteFailure(f, _) => match f.extended_code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                Some(Constraint::Unique)
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Some(Constraint::ForeignKey),
            _ => None,
        },
        _ => None,
    }
}

/// How to open the database.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// `sqlite://path` or `sqlite::memory:` is not allowed: the store needs a
    /// file that its readers share with its writer.
    pub url: String,
    pub durability: Durability,
    /// The quotas of tenants the admin set none for.
    pub quotas: Quotas,
}

pub struct SqliteStore {
    clock: Arc<dyn Clock>,
    defaults: Quotas,
    /// The claims' fair-share state: the writer thread's claims pick by
    /// it, and finalize charges it what each attempt took.
    fair: Arc<std::sync::Mutex<Fairness>>,
    readers: SqlitePool,
    /// `None` once closed. Each write holds a clone until it is answered,
    /// so the writer stops only after the last one.
    writer: std::sync::RwLock<Option<Writer>>,
    /// Answers once the writer thread has committed its last batch.
    writer_ended: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    /// Copies the WAL back off the writer's thread; stopped after it.
    checkpointer: std::sync::Mutex<Option<checkpoint::Checkpointer>>,
    /// Held until the store is closed: one process per database file.
    lock: std::sync::Mutex<Option<std::fs::File>>,
    /// The last event row readers may read (committed and durable), moved
    /// by the writer.
    readable: tokio::sync::watch::Receiver<i64>,
}

/// Why the database could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0:?} is not a SQLite database URL; use sqlite://PATH")]
    BadUrl(String),
    #[error("cannot open the database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot open the database {path} for writing: {source}")]
    OpenWriter {
        path: String,
        source: rusqlite::Error,
    },
    #[error(
        "another taskbox process has the database {path} open; stop it, or give this one a database of its own"
    )]
    Locked { path: String },
    #[error("cannot lock the database {path}: {source}")]
    Lock {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot start the database's writer thread: {0}")]
    Thread(std::io::Error),
    #[error("cannot start the database's checkpoint thread: {0}")]
    Checkpointer(std::io::Error),
    #[error("cannot migrate the database {path}: {source}")]
    Migrate {
        path: String,
        source: sqlx::migrate::MigrateError,
    },
}

/// Turns off SQLite's count of its memory, before its first connection in
/// this process: the count takes a global mutex on every allocation, 6 %
/// of the writer's time in a batch insert. Nothing here reads it. Once
/// SQLite has started this is refused, harmlessly.
fn no_memory_statistics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called before any other SQLite call of
        // this crate's, with an int argument as SQLITE_CONFIG_MEMSTATUS
        // takes; if SQLite is already initialized it answers
        // SQLITE_MISUSE and changes nothing.
        unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::ffi::c_int,
            );
        }
    });
}

impl SqliteStore {
    /// Opens (creating it when missing) and migrates the database.
    pub async fn open(
        opts: &SqliteOptions,
        clock: Arc<dyn Clock>,
    ) -> Result<SqliteStore, OpenError> {
        let base = SqliteConnectOptions::from_str(&opts.url)
            .map_err(|_| OpenError::BadUrl(opts.url.clone()))?;
        let path = base.get_filename().display().to_string();
        if path.is_empty() || path == ":memory:" {
            return Err(OpenError::BadUrl(opts.url.clone()));
        }
        let lock = lock_file(&path)?;
        no_memory_statistics();
        let open_err = |source| OpenError::Open {
            path: path.clone(),
            source,
        };
        // Migrations run on a connection of their own, closed before the
        // writer opens the file.
        let migrate_opts = base
            .clone()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .disable_statement_logging();
        let mut conn = SqliteConnection::connect_with(&migrate_opts)
            .await
            .map_err(open_err)?;
        let migrate = async {
            crate::store::migrations::sqlite()
                .await?
                .run(&mut conn)
                .await
        };
        migrate.await.map_err(|source| OpenError::Migrate {
            path: path.clone(),
            source,
        })?;
        conn.close().await.map_err(open_err)?;
        let writer_conn = open_writer(&path).map_err(|source| OpenError::OpenWriter {
            path: path.clone(),
            source,
        })?;
        let readers = SqlitePoolOptions::new()
            .max_connections(READERS)
            .min_connections(1)
            .connect_with(
                base.read_only(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(10))
                    .statement_cache_capacity(256)
                    .disable_statement_logging(),
            )
            .await
            .map_err(open_err)?;
        // What is in the file when it opens survived: readable.
        let last =
            writer::last_event_row(&writer_conn).map_err(|source| OpenError::OpenWriter {
                path: path.clone(),
                source,
            })?;
        let (mark, readable) = tokio::sync::watch::channel(last);
        let (writer, ended) =
            Writer::spawn_marked(writer_conn, clock.clone(), opts.durability, mark)
                .map_err(OpenError::Thread)?;
        let checkpointer = checkpoint::Checkpointer::spawn(&path, opts.durability)
            .map_err(OpenError::Checkpointer)?;
        Ok(SqliteStore {
            clock,
            defaults: opts.quotas,
            fair: Arc::default(),
            readers,
            writer: std::sync::RwLock::new(Some(writer)),
            writer_ended: Mutex::new(Some(ended)),
            checkpointer: std::sync::Mutex::new(Some(checkpointer)),
            lock: std::sync::Mutex::new(Some(lock)),
            readable,
        })
    }

    fn readable(&self) -> i64 {
        *self.readable.borrow()
    }

    /// Runs a write in a coming group commit.
    async fn write<T, F>(&self, class: Class, durable: bool, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection, Millis) -> StoreResult<T> + Send + 'static,
    {
        self.writer()?.write(class, durable, f).await
    }

    fn writer(&self) -> StoreResult<Writer> {
        self.writer
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| StoreError::Unavailable("the store is closed".into()))
    }

    async fn reader(&self) -> StoreResult<sqlx::pool::PoolConnection<sqlx::Sqlite>> {
        self.readers.acquire().await.map_err(db)
    }
}

/// Takes the database file for this process alone (a lock file beside
/// it): a second process on the same file would take the first one's
/// running jobs for abandoned and rescue them.
fn lock_file(path: &str) -> Result<std::fs::File, OpenError> {
    let lock_path = format!("{path}-lock");
    let lock_err = |source| OpenError::Lock {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(lock_err)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(OpenError::Locked {
            path: path.to_owned(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(lock_err(e)),
    }
}

/// `items` in runs of at most `n`, in order.
fn chunks<T>(items: Vec<T>, n: usize) -> impl Iterator<Item = Vec<T>> {
    let mut items = items.into_iter().peekable();
    std::iter::from_fn(move || {
        items.peek()?;
        Some(items.by_ref().take(n).collect())
    })
}

/// The writer's connection: the one that writes, with a page cache big
/// enough for the queue's hot pages (queued rows and their indexes outgrow
/// SQLite's default 8 MB early).
fn open_writer(path: &str) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(64);
    // Never a sync inside COMMIT: under `Durability::Full` the writer's
    // syncing thread syncs the WAL before durable writes are answered.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
         PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; \
         PRAGMA cache_size = -{WRITER_CACHE_KIB}; \
         PRAGMA wal_autocheckpoint = {};",
        checkpoint::WRITER_FALLBACK_PAGES
    ))?;
    Ok(conn)
}

#[async_trait]
impl JobStore for SqliteStore {
    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn capabilities(&self) -> Capabilities {
        // The file is locked for this store alone (`lock_file`).
        Capabilities {
            owns_database: true,
        }
    }

    async fn tenant_insert(&self, name: &str) -> StoreResult<Tenant> {
        let name = name.to_owned();
        self.write(Class::Prompt, true, move |c, now| {
            tenants::tenant_insert(c, now, name)
        })
        .await
    }

    async fn tenant_get(&self, name: &str) -> StoreResult<Option<Tenant>> {
        let row: Option<TenantRow> = sqlx::query_as(tenants::TENANT_GET)
            .bind(name)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        row.map(tenants::tenant_from).transpose()
    }

    async fn tenant_put(&self, t: TenantSettings) -> StoreResult<(Tenant, bool)> {
        self.write(Class::Prompt, true, move |c, now| {
            tenants::tenant_put(c, now, t)
        })
        .await
    }

    async fn tenant_list(&self) -> StoreResult<Vec<Tenant>> {
        let rows: Vec<TenantRow> = sqlx::query_as(tenants::TENANT_LIST)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        rows.into_iter().map(tenants::tenant_from).collect()
    }

    async fn tenant_usage(&self, tenant: &str) -> StoreResult<TenantUsage> {
        let mut conn = self.reader().await?;
        let jobs: Option<(i64, i64, i64)> =
            sqlx::query_as("SELECT queued, running, waiting FROM tenant_jobs WHERE tenant = ?1")
                .bind(tenant)
                .fetch_optional(&mut *conn)
                .await
                .map_err(db)?;
        let now = self.now();
        let windows: Vec<UsageRow> = sqlx::query_as(&format!(
            "SELECT {USAGE_COLUMNS} FROM tenant_usage WHERE tenant = ?1 AND window_start IN (?2, ?3)"
        ))
        .bind(tenant)
        .bind(window_start(now))
        .bind(last_window(now))
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
        Ok(usage_from(jobs, &windows, now))
    }

    async fn usage_export(&self, q: UsageExportQuery) -> StoreResult<Vec<UsageLine>> {
        let mut conn = self.reader().await?;
        let attempts: Vec<crate::store::tenants::AttemptUsageRow> = sqlx::query_as(
            &crate::store::usage_sql::attempts(Dialect::Sqlite, q.tenant.is_some()),
        )
        .bind(q.from)
        .bind(q.to)
        .bind(q.bucket_ms)
        .bind(&q.tenant)
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
        let hits: Vec<crate::store::tenants::CacheHitRow> = sqlx::query_as(
            &crate::store::usage_sql::cache_hits(Dialect::Sqlite, q.tenant.is_some()),
        )
        .bind(q.from)
        .bind(q.to)
        .bind(q.bucket_ms)
        .bind(&q.tenant)
        .fetch_all(&mut *conn)
        .await
        .map_err(db)?;
        Ok(crate::store::tenants::usage_lines(attempts, hits))
    }

    async fn series(
        &self,
        q: UsageExportQuery,
    ) -> StoreResult<crate::store::series_sql::SeriesRows> {
        series::read(&mut *self.reader().await?, &q).await
    }

    async fn queue_sample(&self, keep_ms: i64) -> StoreResult<u64> {
        self.write(Class::Bulk, false, move |c, now| {
            series::sample(c, now, keep_ms)
        })
        .await
    }

    async fn token_insert(&self, token: NewToken) -> StoreResult<()> {
        self.write(Class::Prompt, true, move |c, now| {
            tokens::insert(c, now, token)
        })
        .await
    }

    async fn token_get(&self, hash: &str) -> StoreResult<Option<TokenRecord>> {
        tokens::get(&mut *self.reader().await?, hash).await
    }

    async fn token_admin_exists(&self) -> StoreResult<bool> {
        tokens::admin_exists(&mut *self.reader().await?).await
    }

    async fn token_list(&self) -> StoreResult<Vec<TokenInfo>> {
        tokens::list(&mut *self.reader().await?).await
    }

    async fn token_revoke(&self, id: &str) -> StoreResult<Revocation> {
        let id = id.to_owned();
        self.write(Class::Prompt, true, move |c, _| tokens::revoke(c, &id))
            .await
    }

    async fn token_touch(&self, id: &str) -> StoreResult<()> {
        let id = id.to_owned();
        // Nobody waits for it, and a use lost in a crash costs nothing.
        self.write(Class::Bulk, false, move |c, now| tokens::touch(c, now, &id))
            .await
    }

    async fn component_insert(&self, comp: NewComponent) -> StoreResult<(ComponentRecord, bool)> {
        let defaults = self.defaults;
        self.write(Class::Prompt, true, move |c, now| {
            registry::component_insert(c, now, comp, &defaults)
        })
        .await
    }

    async fn component_usage(&self, tenant: &str) -> StoreResult<(u64, u64)> {
        let (count, bytes): (i64, i64) = sqlx::query_as(registry_rows::USAGE)
            .bind(tenant)
            .fetch_one(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok((count.max(0) as u64, bytes.max(0) as u64))
    }

    async fn component_get(
        &self,
        tenant: &str,
        digest: &str,
    ) -> StoreResult<Option<ComponentRecord>> {
        let row = sqlx::query_as(registry_rows::COMPONENT)
            .bind(tenant)
            .bind(digest)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(row.map(|r| registry_rows::component(digest.to_owned(), r)))
    }

    async fn component_bytes(&self, digest: &str) -> StoreResult<Option<Vec<u8>>> {
        sqlx::query_scalar(registry_rows::BYTES)
            .bind(digest)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)
    }

    async fn task_insert(&self, t: NewTask) -> StoreResult<TaskRecord> {
        let defaults = self.defaults;
        self.write(Class::Prompt, true, move |c, now| {
            registry::task_insert(c, now, t, &defaults)
        })
        .await
    }

    async fn task_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<TaskRecord>> {
        let row = sqlx::query_as(registry_rows::TASK.as_str())
            .bind(tenant)
            .bind(name)
            .bind(version.map(i64::from))
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(row.map(registry_rows::task))
    }

    async fn task_head(&self, tenant: &str, name: &str) -> StoreResult<Option<TaskHead>> {
        let rows: Vec<TaskRow> = sqlx::query_as(registry_rows::HEAD.as_str())
            .bind(tenant)
            .bind(name)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(registry_rows::head(rows))
    }

    async fn task_rollout(
        &self,
        tenant: &str,
        name: &str,
        change: RolloutChange,
    ) -> StoreResult<TaskRecord> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Class::Prompt, true, move |c, now| {
            registry::task_rollout(c, now, &tenant, &name, change)
        })
        .await
    }

    async fn tasks_staged(&self, tenant: Option<&str>, limit: u32) -> StoreResult<Vec<TaskRecord>> {
        let rows: Vec<TaskRow> = sqlx::query_as(&registry_rows::staged(tenant.is_some()))
            .bind(tenant)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
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
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(registry_rows::figures(versions, rows))
    }

    async fn task_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<TaskRecord>> {
        let rows: Vec<TaskRow> = sqlx::query_as(registry_rows::VERSIONS.as_str())
            .bind(tenant)
            .bind(name)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(rows.into_iter().map(registry_rows::task).collect())
    }

    async fn workflow_insert(&self, w: NewWorkflow) -> StoreResult<WorkflowRecord> {
        let defaults = self.defaults;
        self.write(Class::Prompt, true, move |c, now| {
            workflows::insert(c, now, w, &defaults)
        })
        .await
    }

    async fn workflow_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<WorkflowRecord>> {
        workflows::get(&mut *self.reader().await?, tenant, name, version).await
    }

    async fn workflow_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WorkflowRecord>> {
        workflows::list(&mut *self.reader().await?, tenant).await
    }

    async fn workflow_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<(u32, Millis)>> {
        workflows::versions(&mut *self.reader().await?, tenant, name).await
    }

    async fn job_steps(&self, id: &str) -> StoreResult<Vec<StepRecord>> {
        steps::list(&mut *self.reader().await?, id).await
    }

    async fn job_call(&self, id: &str, call: &str) -> StoreResult<Option<CallRecord>> {
        calls::get(&mut *self.reader().await?, id, call).await
    }

    async fn job_calls(&self, id: &str) -> StoreResult<Vec<CallRecord>> {
        calls::list(&mut *self.reader().await?, id).await
    }

    async fn ended_sample(&self, tenant: &str, task: &str, limit: u32) -> StoreResult<Vec<String>> {
        sqlx::query_scalar(job_sql::ENDED_SAMPLE)
            .bind(tenant)
            .bind(task)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)
    }

    async fn recorded_run(&self, tenant: &str, id: &str) -> StoreResult<Option<RecordedRun>> {
        let row: Option<job_sql::RecordedRow> = sqlx::query_as(job_sql::RECORDED_RUN)
            .bind(tenant)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        row.map(|r| job_sql::recorded_run(id, r)).transpose()
    }

    async fn job_parent(&self, id: &str) -> StoreResult<Option<String>> {
        calls::parent(&mut *self.reader().await?, id).await
    }

    async fn job_callback_of(&self, id: &str) -> StoreResult<Option<CallRecord>> {
        calls::callback_of(&mut *self.reader().await?, id).await
    }

    async fn task_list(&self, tenant: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        let rows: Vec<TaskRow> = sqlx::query_as(&registry_rows::list(tenant.is_some()))
            .bind(tenant)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(rows.into_iter().map(registry_rows::task).collect())
    }

    async fn job_insert(&self, new: Vec<NewJob>) -> StoreResult<Vec<StoreResult<Inserted>>> {
        let defaults = self.defaults;
        // A few jobs are a request's; many are a bulk load, which must not
        // cut ahead of every other request.
        let class = if new.len() <= JOBS_PER_WRITE {
            Class::Prompt
        } else {
            Class::Bulk
        };
        // A batch (up to `BULK_JOBS_PER_WRITE`) is one write, and so one
        // transaction; a write that fails undoes itself whole: its counts
        // change with the jobs, so none makes only one change.
        let writes = chunks(new, BULK_JOBS_PER_WRITE).map(|chunk| {
            self.write(class, true, move |c, now| {
                jobs::insert(c, now, chunk, &defaults)
            })
        });
        let mut out = Vec::new();
        for r in futures_util::future::join_all(writes).await {
            out.extend(r?);
        }
        Ok(out)
    }

    async fn job_get(&self, tenant: &str, id: &str) -> StoreResult<Option<JobRecord>> {
        let row: Option<rows::JobRow> = sqlx::query_as(&job_sql::get(Dialect::Sqlite, false))
            .bind(id)
            .bind(tenant)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        row.map(JobRecord::try_from).transpose()
    }

    async fn job_list(&self, q: JobQuery) -> StoreResult<JobPage> {
        use futures_util::TryStreamExt;
        let sql = job_sql::list(Dialect::Sqlite, q.tenant.is_some());
        let mut conn = self.reader().await?;
        let mut rows = sqlx::query_as::<_, rows::JobRow>(&sql)
            .bind(&q.tenant)
            .bind(q.status.map(|s| s.as_str()))
            .bind(&q.task)
            .bind(&q.queue)
            .bind(&q.before)
            .bind(q.limit)
            .fetch(&mut *conn);
        // Rows one at a time, until the page's byte budget is spent.
        let mut page = JobPage::default();
        let mut bytes = 0usize;
        while let Some(row) = rows.try_next().await.map_err(db)? {
            if !page_push(&mut page, &mut bytes, row, q.max_bytes)? {
                break;
            }
        }
        Ok(page)
    }

    async fn queue_list(&self, tenant: Option<&str>) -> StoreResult<Vec<QueueDepth>> {
        let one = tenant.is_some();
        let rows: Vec<crate::store::rows::QueueDepthRow> =
            sqlx::query_as(&crate::store::queue_rows::depths(one))
                .bind(tenant)
                .bind(self.now())
                .fetch_all(&mut *self.reader().await?)
                .await
                .map_err(db)?;
        let paused: Vec<(String, String)> = sqlx::query_as(&crate::store::queue_rows::paused(one))
            .bind(tenant)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        crate::store::rows::queues_from(rows, paused)
    }

    async fn job_depths(&self) -> StoreResult<Vec<(String, JobStatus, u64)>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(crate::store::rows::DEPTHS_SQL)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        crate::store::rows::depths_from(rows)
    }

    async fn queue_pause(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        let (t, q) = (tenant.to_owned(), queue.to_owned());
        let newly = self
            .write(Class::Prompt, true, move |c, now| {
                queues::pause(c, now, &t, &q)
            })
            .await?;
        // In chunks, each its own write; not durable: a park lost to a
        // crash is made by the claim that meets the job.
        loop {
            let (t, q) = (tenant.to_owned(), queue.to_owned());
            let n = self
                .write(Class::Bulk, false, move |c, _| queues::park(c, &t, &q))
                .await?;
            if (n as i64) < queues::CHUNK {
                return Ok(newly);
            }
        }
    }

    async fn queue_resume(&self, tenant: &str, queue: &str) -> StoreResult<bool> {
        let (t, q) = (tenant.to_owned(), queue.to_owned());
        let was = self
            .write(Class::Prompt, true, move |c, _| queues::resume(c, &t, &q))
            .await?;
        // Durable chunks; what a crash leaves parked, `queue_tidy` unparks.
        loop {
            let (t, q) = (tenant.to_owned(), queue.to_owned());
            let n = self
                .write(Class::Bulk, true, move |c, now| {
                    queues::unpark(c, now, &t, &q)
                })
                .await?;
            if (n as i64) < queues::CHUNK {
                return Ok(was);
            }
        }
    }

    async fn queue_tidy(&self) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let n = self.write(Class::Bulk, true, queues::tidy).await?;
            total += n as u64;
            if (n as i64) < queues::CHUNK {
                return Ok(total);
            }
        }
    }

    async fn throttle_tidy(&self) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let n = self
                .write(Class::Bulk, false, |c, now| {
                    shared(c, crate::store::throttle::PRUNE_KEYS)?
                        .execute(rusqlite::params![now, queues::CHUNK])
                        .map_err(wdb)
                })
                .await?;
            total += n as u64;
            if (n as i64) < queues::CHUNK {
                return Ok(total);
            }
        }
    }

    async fn job_expire(&self, jobs: Vec<Expire>) -> StoreResult<u64> {
        if jobs.is_empty() {
            return Ok(0);
        }
        self.write(Class::Bulk, true, move |c, now| {
            expire::expire(c, now, jobs)
        })
        .await
    }

    async fn job_expiring(&self, limit: u32) -> StoreResult<Vec<ExpiringJob>> {
        let rows: Vec<(String, String, String, i64, String, i64)> =
            sqlx::query_as(&crate::store::expire_sql::expiring(Dialect::Sqlite))
                .bind(self.now())
                .bind(limit)
                .fetch_all(&mut *self.reader().await?)
                .await
                .map_err(db)?;
        Ok(rows.into_iter().map(ExpiringJob::from_row).collect())
    }

    async fn job_prune(&self, p: PruneParams) -> StoreResult<Pruned> {
        // Read on a reader, so that the writer only deletes.
        let rows = prune::candidates(&mut *self.reader().await?, &p).await?;
        let last_id = rows.last().map(|r| r.0.clone());
        let ids: Vec<String> = rows.into_iter().filter(|r| r.1).map(|r| r.0).collect();
        if ids.is_empty() {
            return Ok(Pruned {
                last_id,
                ..Pruned::default()
            });
        }
        let (c, f) = (p.completed_before, p.failed_before);
        // Not durable: a prune lost to a crash is made again.
        let (jobs, attempts) = self
            .write(Class::Bulk, false, move |conn, _| {
                prune::delete(conn, &ids, c, f)
            })
            .await?;
        Ok(Pruned {
            jobs,
            attempts,
            last_id,
        })
    }

    async fn component_collect(&self, uploaded_before: Millis) -> StoreResult<Collected> {
        self.write(Class::Bulk, true, move |c, _| {
            prune::collect(c, uploaded_before)
        })
        .await
    }

    async fn job_counts(&self) -> StoreResult<Vec<(JobStatus, u64)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(crate::store::rows::COUNTS_SQL)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        counts_from(rows)
    }

    async fn job_claim(&self, p: ClaimParams) -> StoreResult<Claim> {
        if p.limit == 0 {
            return Ok(Claim {
                jobs: Vec::new(),
                passed_over: true,
            });
        }
        // A claim for named tenants is for those with nothing waiting,
        // whose job should start at once.
        let class = if p.only_tenants.is_some() {
            Class::Prompt
        } else {
            Class::Bulk
        };
        let limits = chunks(vec![(); p.limit as usize], CLAIMS_PER_WRITE).map(|c| c.len());
        // The writes run in order: once one finds fewer jobs than it asked
        // for, the rest have nothing to find, and skip their queries.
        let exhausted = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The tenants' caps are the claim's, not each write's: what one
        // write takes, the next may not.
        let caps = Arc::new(std::sync::Mutex::new(p.caps.clone()));
        let writes = limits.enumerate().map(|(i, limit)| {
            let (fair, defaults, exhausted) = (self.fair.clone(), self.defaults, exhausted.clone());
            let caps = caps.clone();
            let mut p = ClaimParams {
                limit: u32::try_from(limit).unwrap_or(u32::MAX),
                // Which tenants the first write began is not known to the
                // next: their jobs are left for the runner to mark.
                begin_each: match p.begin_each {
                    u32::MAX => u32::MAX,
                    n if i == 0 => n,
                    _ => 0,
                },
                ..p.clone()
            };
            self.write(class, false, move |c, now| {
                use std::sync::atomic::Ordering::Relaxed;
                if exhausted.load(Relaxed) {
                    return Ok(None);
                }
                let mut fair = fair.lock().unwrap_or_else(|p| p.into_inner());
                let mut caps = caps.lock().unwrap_or_else(|p| p.into_inner());
                p.caps = caps.clone();
                let got = claim::claim(c, now, p, &mut fair, &defaults)?;
                caps.took(&got.jobs);
                if got.jobs.len() < limit {
                    exhausted.store(true, Relaxed);
                }
                Ok(Some(got))
            })
        });
        // What passed over is the last write's word: every one before it
        // was full.
        let mut out = Claim::default();
        for r in futures_util::future::join_all(writes).await {
            if let Some(got) = r? {
                out.jobs.extend(got.jobs);
                out.passed_over = got.passed_over;
            }
        }
        Ok(out)
    }

    async fn job_insert_claim(
        &self,
        new: Vec<NewJob>,
        p: ClaimParams,
        on_claimed: OnClaimed,
    ) -> StoreResult<Vec<StoreResult<Inserted>>> {
        if new.len() > JOBS_PER_WRITE || p.limit as usize > CLAIMS_PER_WRITE {
            return super::insert_then_claim(self, new, p, on_claimed).await;
        }
        let (fair, defaults) = (self.fair.clone(), self.defaults);
        let writer = self.writer()?;
        writer
            .write_early(
                Class::Prompt,
                true,
                move |c, now| {
                    let inserted = jobs::insert(c, now, new, &defaults)?;
                    // The claim in a savepoint of its own: one that fails is
                    // undone alone, and the jobs stay inserted for the claim
                    // loop.
                    writer::exec(c, "SAVEPOINT insert_claim").map_err(wdb)?;
                    let mut fair = fair.lock().unwrap_or_else(|p| p.into_inner());
                    let claimed = match claim::claim(c, now, p, &mut fair, &defaults) {
                        Ok(claimed) => {
                            writer::exec(c, "RELEASE insert_claim").map_err(wdb)?;
                            claimed.jobs
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "claim after an insert failed; the claim loop will take them");
                            writer::exec(c, "ROLLBACK TO insert_claim")
                                .and_then(|()| writer::exec(c, "RELEASE insert_claim"))
                                .map_err(wdb)?;
                            Vec::new()
                        }
                    };
                    Ok((inserted, claimed))
                },
                Some(on_claimed),
            )
            .await
    }

    async fn job_run_now(&self, tenant: &str, id: &str) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Class::Prompt, false, move |c, now| {
            jobs::run_now(c, now, &tenant, &id)
        })
        .await
    }

    async fn job_begin(&self, begun: Vec<(String, String)>) -> StoreResult<()> {
        if begun.is_empty() {
            return Ok(());
        }
        // Prompt: it cuts the runner's long transactions short, but the
        // marker marks hundreds at once while attempts are short (the
        // burn-down ran 60,000/s with it, 53,000/s with it a bulk write,
        // whose round trip made the window wider).
        self.write(Class::Prompt, false, move |c, _| jobs::begin(c, &begun))
            .await
    }

    async fn job_heartbeat(&self, p: HeartbeatParams) -> StoreResult<HeartbeatReply> {
        self.write(Class::Bulk, false, move |c, now| jobs::heartbeat(c, now, p))
            .await
    }

    async fn job_finalize(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>> {
        super::fair::charge_ends(&self.fair, &batch);
        let writes = chunks(batch, FINALIZES_PER_WRITE).map(|chunk| {
            self.write(Class::Bulk, true, move |c, now| {
                finalize::finalize(c, now, chunk)
            })
        });
        let mut out = Vec::new();
        for r in futures_util::future::join_all(writes).await {
            out.extend(r?);
        }
        Ok(out)
    }

    async fn job_cancel(&self, tenant: &str, id: &str) -> StoreResult<CancelOutcome> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Class::Prompt, true, move |c, now| {
            jobs::cancel(c, now, &tenant, &id)
        })
        .await
    }

    async fn job_redrive(
        &self,
        tenant: &str,
        jobs: Vec<Redrive>,
    ) -> StoreResult<Vec<StoreResult<JobRecord>>> {
        let defaults = self.defaults;
        let tenant = tenant.to_owned();
        let class = if jobs.len() <= JOBS_PER_WRITE {
            Class::Prompt
        } else {
            Class::Bulk
        };
        self.write(class, true, move |c, now| {
            redrive::redrive(c, now, &tenant, jobs, &defaults)
        })
        .await
    }

    async fn job_resume(
        &self,
        tenant: &str,
        id: &str,
        input: Option<NewInput>,
    ) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Class::Prompt, true, move |c, now| {
            jobs::resume(c, now, &tenant, &id, input)
        })
        .await
    }

    async fn job_rescue(&self, p: RescueParams) -> StoreResult<Vec<ClaimedJob>> {
        // Not durable: a take-over lost to a power cut is taken over again.
        self.write(Class::Bulk, false, move |c, now| jobs::rescue(c, now, p))
            .await
    }

    async fn job_next_run_at(&self, _passed: Millis) -> StoreResult<Option<Millis>> {
        // One seek: the first of jobs_scheduled. Those due are not staged
        // yet (the next claim stages them), so none is left out.
        let row: (Option<i64>,) = sqlx::query_as(
            "SELECT MIN(run_at) FROM jobs WHERE status = 'queued' AND available = 0",
        )
        .fetch_one(&mut *self.reader().await?)
        .await
        .map_err(db)?;
        Ok(row.0)
    }

    async fn apply(&self, writes: Vec<Write>) -> StoreResult<Vec<Written>> {
        let defaults = self.defaults;
        // One write of the writer's: its savepoint undoes all of it when
        // any part fails.
        self.write(Class::Prompt, true, move |c, now| {
            apply::apply(c, now, writes, &defaults)
        })
        .await
    }

    async fn attempt_list(&self, q: AttemptQuery) -> StoreResult<Vec<AttemptRecord>> {
        let rows: Vec<AttemptRow> = sqlx::query_as(&crate::store::attempt_sql::PAGE)
            .bind(&q.job_id)
            .bind(&q.tenant)
            .bind(q.after.unwrap_or(0))
            .bind(q.limit)
            .fetch_all(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        rows.into_iter().map(AttemptRecord::try_from).collect()
    }

    /// Rows are numbered as they are written; this waits until every row
    /// committed now is readable (the sync that makes it durable is done),
    /// a few milliseconds, so that a reader that asks reads its own writes.
    async fn event_sequence(&self) -> StoreResult<u64> {
        let written = events::last_written(&mut *self.reader().await?).await?;
        let mut readable = self.readable.clone();
        let caught_up = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            readable.wait_for(|r| *r >= written),
        )
        .await;
        if caught_up.is_err() {
            tracing::warn!(
                written,
                "event rows are not readable 5 s after their commit"
            );
        }
        Ok(0)
    }

    async fn event_read(&self, after_gseq: i64, limit: u32) -> StoreResult<Vec<EventRow>> {
        let readable = self.readable();
        events::read(&mut *self.reader().await?, readable, after_gseq, limit).await
    }

    async fn event_read_tenant(
        &self,
        tenant: &str,
        after: u64,
        limit: u32,
    ) -> StoreResult<Vec<EventRow>> {
        let readable = self.readable();
        events::read_tenant(&mut *self.reader().await?, readable, tenant, after, limit).await
    }

    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads> {
        let readable = self.readable();
        events::heads(&mut *self.reader().await?, readable, tenant).await
    }

    async fn event_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        // Not durable: a prune lost to a crash is made again.
        self.write(Class::Bulk, false, move |c, _| {
            events::prune(c, before, limit)
        })
        .await
    }

    fn event_signal(&self) -> Option<tokio::sync::watch::Receiver<i64>> {
        Some(self.readable.clone())
    }

    async fn webhook_insert(&self, w: NewWebhook) -> StoreResult<WebhookRecord> {
        self.write(Class::Prompt, true, move |c, now| {
            webhooks::insert(c, now, w)
        })
        .await
    }

    async fn webhook_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WebhookRecord>> {
        webhooks::list(&mut *self.reader().await?, tenant).await
    }

    async fn webhook_delete(&self, tenant: &str, id: &str) -> StoreResult<bool> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Class::Prompt, true, move |c, _| {
            webhooks::delete(c, &tenant, &id)
        })
        .await
    }

    async fn event_cursor(&self, name: &str) -> StoreResult<Option<i64>> {
        // Read apart from the writer: the move that follows checks it again.
        webhooks::read_cursor(&mut *self.reader().await?, name).await
    }

    async fn delivery_insert(
        &self,
        name: &str,
        from: Option<i64>,
        to: i64,
        deliveries: Vec<NewDelivery>,
    ) -> StoreResult<bool> {
        let name = name.to_owned();
        // Not durable: lost to a power cut with the cursor's move, the
        // deliveries are made again from the outbox (each is sent at least
        // once anyway).
        self.write(Class::Bulk, false, move |c, now| {
            webhooks::insert_deliveries(c, now, &name, from, to, deliveries)
        })
        .await
    }

    async fn delivery_due_webhooks(&self, limit: u32) -> StoreResult<Vec<String>> {
        let now = self.clock.now();
        webhooks::due_webhooks(&mut *self.reader().await?, now, limit).await
    }

    async fn delivery_take(
        &self,
        webhook: &str,
        limit: u32,
        hold_ms: u64,
    ) -> StoreResult<Vec<Delivery>> {
        let webhook = webhook.to_owned();
        // Not durable: a take lost to a crash is taken again.
        self.write(Class::Bulk, false, move |c, now| {
            webhooks::take(c, now, &webhook, limit, hold_ms)
        })
        .await
    }

    async fn delivery_record(&self, tries: Vec<DeliveryTry>) -> StoreResult<()> {
        // Not durable: a try lost to a power cut is made again (a delivery
        // is sent at least once).
        self.write(Class::Bulk, false, move |c, _| webhooks::record(c, tries))
            .await
    }

    async fn delivery_list(
        &self,
        tenant: &str,
        webhook: &str,
        before: Option<i64>,
        limit: u32,
    ) -> StoreResult<Vec<Delivery>> {
        webhooks::list_deliveries(&mut *self.reader().await?, tenant, webhook, before, limit).await
    }

    async fn delivery_next_at(&self) -> StoreResult<Option<Millis>> {
        webhooks::next_at(&mut *self.reader().await?).await
    }

    async fn delivery_redeliver(&self, tenant: &str, webhook: &str, id: i64) -> StoreResult<bool> {
        let (tenant, webhook) = (tenant.to_owned(), webhook.to_owned());
        self.write(Class::Bulk, true, move |c, now| {
            webhooks::redeliver(c, &tenant, &webhook, id, now)
        })
        .await
    }

    async fn delivery_prune(&self, before: Millis, limit: u32) -> StoreResult<u64> {
        self.write(Class::Bulk, false, move |c, _| {
            webhooks::prune(c, before, limit)
        })
        .await
    }

    async fn secret_put(
        &self,
        s: crate::store::NewSecret,
    ) -> StoreResult<(crate::store::SecretRecord, bool)> {
        self.write(Class::Prompt, true, move |c, now| secrets::put(c, now, s))
            .await
    }

    async fn secret_list(
        &self,
        tenant: Option<&str>,
    ) -> StoreResult<Vec<crate::store::SecretRecord>> {
        secrets::list(&mut *self.reader().await?, tenant).await
    }

    async fn secret_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Class::Prompt, true, move |c, _| {
            secrets::delete(c, &tenant, &name)
        })
        .await
    }

    async fn secret_get_many(
        &self,
        tenant: &str,
        names: &[String],
    ) -> StoreResult<Vec<crate::store::SealedSecret>> {
        secrets::get_many(&mut *self.reader().await?, tenant, names).await
    }

    async fn schedule_get(
        &self,
        tenant: &str,
        name: &str,
    ) -> StoreResult<Option<crate::store::ScheduleRecord>> {
        schedules::get(&mut *self.reader().await?, tenant, name).await
    }

    async fn schedule_list(
        &self,
        tenant: Option<&str>,
    ) -> StoreResult<Vec<crate::store::ScheduleRecord>> {
        schedules::list(&mut *self.reader().await?, tenant).await
    }

    async fn schedule_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Class::Prompt, true, move |c, _| {
            schedules::delete(c, &tenant, &name)
        })
        .await
    }

    async fn schedule_due(
        &self,
        at: Millis,
        limit: u32,
    ) -> StoreResult<Vec<crate::store::ScheduleRecord>> {
        schedules::due(&mut *self.reader().await?, at, limit).await
    }

    async fn schedule_next_due(&self) -> StoreResult<Option<Millis>> {
        schedules::next_due(&mut *self.reader().await?).await
    }

    async fn lease_take(
        &self,
        name: &str,
        holder: &str,
        ttl_ms: u64,
    ) -> StoreResult<Option<Lease>> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        // Not durable: a renewal lost to a power cut only shortens a lease
        // that this process, the database's only one, takes again.
        self.write(Class::Prompt, false, move |c, now| {
            leases::take(c, now, &n, &h, crate::time::after(now, ttl_ms))
        })
        .await
    }

    async fn lease_drop(&self, name: &str, holder: &str) -> StoreResult<bool> {
        let (n, h) = (name.to_owned(), holder.to_owned());
        self.write(Class::Prompt, true, move |c, now| {
            leases::drop(c, now, &n, &h)
        })
        .await
    }

    async fn lease_get(&self, name: &str) -> StoreResult<Option<Lease>> {
        let row: Option<LeaseRow> = sqlx::query_as(&crate::store::lease_sql::get("?1"))
            .bind(name)
            .fetch_optional(&mut *self.reader().await?)
            .await
            .map_err(db)?;
        Ok(row.map(Lease::from))
    }

    async fn close(&self) {
        // Dropping the last sender lets the writer commit what it has and stop.
        self.writer
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(ended) = self.writer_ended.lock().await.take() {
            let _ = ended.await;
        }
        let checkpointer = self
            .checkpointer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(c) = checkpointer {
            // Joining waits for at most one checkpoint.
            let _ = tokio::task::spawn_blocking(move || drop(c)).await;
        }
        self.readers.close().await;
        // Closed, it owns the file no more, however long this value lives
        // on (a restart in one process opens it again before then).
        self.lock.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}
