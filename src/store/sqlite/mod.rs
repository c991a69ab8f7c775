//! The embedded backend: one SQLite file in WAL mode, written by one
//! group-committing writer thread (rusqlite), read through a pool of read-only
//! connections (sqlx). All of its SQL lives in this directory.

mod checkpoint;
mod claim;
mod events;
mod exec;
mod jobs;
mod queues;
mod rows;
mod syncer;
mod tally;
mod writer;

use writer::Class;

use super::fair::Fairness;
use super::insert;
use super::records::*;
use super::{
    Capabilities, Clock, Durability, JobStore, Millis, OnClaimed, StoreError, StoreResult,
};
use crate::quota::Quotas;
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
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
        F: FnOnce(&mut rusqlite::Connection, Millis) -> StoreResult<T> + Send + 'static,
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

    async fn exec_write(
        &self,
        how: crate::store::exec::Commit,
        work: crate::store::exec::WriteWork,
    ) -> StoreResult<Box<dyn std::any::Any + Send>> {
        use futures_util::FutureExt;
        let class = if how.prompt {
            Class::Prompt
        } else {
            Class::Bulk
        };
        self.write(class, how.durable, move |conn, now| {
            // Nothing on the writer's connection waits: the write runs to
            // its end in this one poll.
            work(&mut exec::WriterExec { conn }, now)
                .now_or_never()
                .unwrap_or_else(|| Err(StoreError::Internal("a write on SQLite waited".into())))
        })
        .await
    }

    fn defaults(&self) -> Quotas {
        self.defaults
    }

    fn readable_events(&self) -> i64 {
        self.readable()
    }

    async fn exec_read(&self) -> StoreResult<Box<dyn crate::store::exec::Exec + '_>> {
        Ok(Box::new(exec::ReaderExec(self.reader().await?)))
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
                exec::block(insert::insert(
                    &mut exec::WriterExec { conn: c },
                    now,
                    chunk,
                    &defaults,
                ))
            })
        });
        let mut out = Vec::new();
        for r in futures_util::future::join_all(writes).await {
            out.extend(r?);
        }
        Ok(out)
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
                let mut caps = caps.lock().unwrap_or_else(|p| p.into_inner());
                p.caps = caps.clone();
                let tx = &mut exec::WriterExec { conn: c };
                let got = exec::block(super::claim::claim(tx, now, p, &fair, &defaults))?;
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
                    let inserted = exec::block(insert::insert(
                        &mut exec::WriterExec { conn: &mut *c },
                        now,
                        new,
                        &defaults,
                    ))?;
                    // The claim in a savepoint of its own: one that fails is
                    // undone alone, and the jobs stay inserted for the claim
                    // loop.
                    writer::exec(c, "SAVEPOINT insert_claim").map_err(wdb)?;
                    let tx = &mut exec::WriterExec { conn: &mut *c };
                    let claimed = match exec::block(super::claim::claim(tx, now, p, &fair, &defaults)) {
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

    async fn job_finalize(&self, batch: Vec<Finalize>) -> StoreResult<Vec<Finalized>> {
        super::fair::charge_ends(&self.fair, &batch);
        let writes = chunks(batch, FINALIZES_PER_WRITE).map(|chunk| {
            self.write(Class::Bulk, true, move |c, now| {
                let tx = &mut exec::WriterExec { conn: c };
                exec::block(super::finalize::in_savepoints(tx, now, &chunk))
            })
        });
        let mut out = Vec::new();
        for r in futures_util::future::join_all(writes).await {
            out.extend(r?);
        }
        Ok(out)
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

    async fn event_heads(&self, tenant: Option<&str>) -> StoreResult<EventHeads> {
        let readable = self.readable();
        events::heads(&mut *self.reader().await?, readable, tenant).await
    }

    fn event_signal(&self) -> Option<tokio::sync::watch::Receiver<i64>> {
        Some(self.readable.clone())
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
