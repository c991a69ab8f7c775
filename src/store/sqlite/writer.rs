//! Group commit: one OS thread owns the SQLite write connection and drains a
//! channel of writes into one transaction per batch, answering each caller
//! only after COMMIT (DESIGN §5). Each write runs inside its own SAVEPOINT,
//! so one that fails is rolled back alone.
//!
//! The thread calls SQLite directly: a batch of hundreds of claims or
//! completions runs without a single thread hand-off or await between its
//! statements, which is what makes the one writer fast enough to be the
//! only one.
//!
//! A batch of only non-durable writes (claims, heartbeats: losing one to a
//! power cut only makes a job run again) commits with `synchronous=NORMAL`;
//! the next durable commit syncs the WAL, and those frames with it.

use crate::store::{Clock, Millis, StoreError, StoreResult};
use rusqlite::Connection;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Most writes in one transaction.
const MAX_BATCH: usize = 512;
/// Writes waiting for the writer before callers wait to send.
const CHANNEL_DEPTH: usize = 8192;

/// Hands a write's result to its caller once the batch's fate is known.
type Deliver = Box<dyn FnOnce(Result<(), String>) + Send>;

/// One write: runs against the connection inside the batch's transaction,
/// says whether it succeeded, and keeps its answer until COMMIT.
/// Given no connection (the transaction could not begin), it fails unrun.
type Work = Box<dyn FnOnce(Option<&Connection>, Millis) -> (bool, Deliver) + Send>;

struct Pending {
    durable: bool,
    /// Makes at most one change (one statement): a failure undoes itself,
    /// so it needs no savepoint.
    atomic: bool,
    work: Work,
}

/// The sending side; cloned by every caller.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Pending>,
}

/// How the database syncs when a durable batch commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a commit is on disk before it is answered.
    Full,
    /// `synchronous=NORMAL`: a power cut may lose the last commits.
    Normal,
}

impl Writer {
    /// Starts the writer thread on `conn`. It ends when every `Writer` is
    /// dropped, after committing what it has; the handle says when.
    pub fn spawn(
        conn: Connection,
        clock: Arc<dyn Clock>,
        durability: Durability,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let (ended_tx, ended) = oneshot::channel();
        std::thread::Builder::new()
            .name("taskbox-writer".into())
            .spawn(move || {
                run(conn, rx, clock, durability);
                let _ = ended_tx.send(());
            })?;
        Ok((Writer { tx }, ended))
    }

    /// Runs `f` in the next batch and answers its result after COMMIT.
    /// `durable: false` marks writes whose loss in a power cut is harmless.
    pub async fn write<T, F>(&self, durable: bool, atomic: bool, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, Millis) -> StoreResult<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel::<StoreResult<T>>();
        let work: Work = Box::new(move |conn, now| {
            let result = match conn {
                Some(conn) => f(conn, now),
                None => Err(StoreError::Unavailable(
                    "the database could not begin a transaction".into(),
                )),
            };
            let ok = result.is_ok();
            let deliver: Deliver = Box::new(move |commit: Result<(), String>| {
                let _ = reply.send(match commit {
                    Ok(()) => result,
                    Err(e) => Err(StoreError::Internal(e)),
                });
            });
            (ok, deliver)
        });
        self.tx
            .send(Pending {
                durable,
                atomic,
                work,
            })
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Unavailable("the store's writer stopped".into()))?
    }
}

/// Runs one statement that takes no parameters (transaction control).
pub(super) fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run(
    conn: Connection,
    mut rx: mpsc::Receiver<Pending>,
    clock: Arc<dyn Clock>,
    durability: Durability,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut synchronous_full = durability == Durability::Full;
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let want_full = durability == Durability::Full && batch.iter().any(|p| p.durable);
        if want_full != synchronous_full {
            let pragma = if want_full {
                "PRAGMA synchronous = FULL"
            } else {
                "PRAGMA synchronous = NORMAL"
            };
            if let Err(e) = conn.execute_batch(pragma) {
                tracing::error!(error = %e, "could not set the sync mode");
            } else {
                synchronous_full = want_full;
            }
        }
        let delivers = run_batch(&conn, &mut batch, clock.now());
        let commit = match exec(&conn, "COMMIT") {
            Ok(()) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, "commit failed; the batch is rolled back");
                let _ = exec(&conn, "ROLLBACK");
                Err(format!("commit failed: {e}"))
            }
        };
        for d in delivers {
            d(commit.clone());
        }
    }
    if let Err((_, e)) = conn.close() {
        tracing::warn!(error = %e, "the database did not close cleanly");
    }
}

/// Opens the transaction and runs each write in its own savepoint.
fn run_batch(conn: &Connection, batch: &mut Vec<Pending>, now: Millis) -> Vec<Deliver> {
    let mut delivers = Vec::with_capacity(batch.len());
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "could not begin a write transaction");
        for p in batch.drain(..) {
            let (_, d) = (p.work)(None, now);
            delivers.push(d);
        }
        return delivers;
    }
    let single = batch.len() == 1;
    for p in batch.drain(..) {
        // A batch of one needs no savepoint: a failed write rolls back the
        // whole transaction, which holds nothing else.
        let savepoint = !single && !p.atomic;
        if savepoint {
            if let Err(e) = exec(conn, "SAVEPOINT w") {
                tracing::error!(error = %e, "savepoint failed");
            }
        }
        // A write that panics is a bug; it must not take the writer, and
        // every caller behind it, down. Its caller is answered that the
        // writer stopped (its reply is dropped), and its changes are undone.
        let work = p.work;
        let (ok, d) = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            work(Some(conn), now)
        })) {
            Ok(done) => done,
            Err(_) => {
                tracing::error!("a write panicked; it is rolled back");
                (false, Box::new(|_| {}) as Deliver)
            }
        };
        if !ok && !p.atomic {
            let undone = if single {
                exec(conn, "ROLLBACK").and_then(|()| exec(conn, "BEGIN IMMEDIATE"))
            } else {
                exec(conn, "ROLLBACK TO w")
            };
            if let Err(e) = undone {
                tracing::error!(error = %e, "rollback of a failed write failed");
            }
        }
        if savepoint {
            if let Err(e) = exec(conn, "RELEASE w") {
                tracing::error!(error = %e, "release of a savepoint failed");
            }
        }
        delivers.push(d);
    }
    delivers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SystemClock;

    fn count(conn: &Connection) -> StoreResult<i64> {
        conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .map_err(|e| StoreError::Internal(e.to_string()))
    }

    fn insert(conn: &Connection, v: i64) -> StoreResult<()> {
        conn.execute("INSERT INTO t (v) VALUES (?1)", [v])
            .map(|_| ())
            .map_err(|e| StoreError::Internal(e.to_string()))
    }

    #[tokio::test]
    async fn a_failed_or_panicking_write_is_undone_alone() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        conn.execute_batch("CREATE TABLE t (v INTEGER)")?;
        let (w, ended) = Writer::spawn(conn, Arc::new(SystemClock), Durability::Normal)?;
        // Sent together, so that they share batches.
        let ok = w.write(true, false, |c, _| insert(c, 1));
        let failed = w.write(true, false, |c, _| {
            insert(c, 2)?;
            Err::<(), _>(StoreError::Conflict("no".into()))
        });
        let panicked = w.write(true, false, |c, _| -> StoreResult<()> {
            insert(c, 3)?;
            panic!("a bug in a write")
        });
        let after = w.write(true, false, |c, _| insert(c, 4));
        let (ok, failed, panicked, after) = tokio::join!(ok, failed, panicked, after);
        assert!(ok.is_ok() && after.is_ok());
        assert!(matches!(failed, Err(StoreError::Conflict(_))));
        assert!(matches!(panicked, Err(StoreError::Unavailable(_))));
        let values = w
            .write(false, true, |c, _| {
                let mut s = c
                    .prepare("SELECT v FROM t ORDER BY v")
                    .map_err(|e| StoreError::Internal(e.to_string()))?;
                let v: Vec<i64> = s
                    .query_map([], |r| r.get(0))
                    .and_then(|rows| rows.collect())
                    .map_err(|e| StoreError::Internal(e.to_string()))?;
                Ok(v)
            })
            .await?;
        assert_eq!(values, vec![1, 4]);
        assert_eq!(w.write(false, true, |c, _| count(c)).await?, 2);
        drop(w);
        ended.await?;
        Ok(())
    }
}
