//! Group commit: one task owns the SQLite write connection and drains a
//! channel of writes into one transaction per batch, answering each caller
//! only after COMMIT (DESIGN §5). Each write runs inside its own SAVEPOINT,
//! so one that fails is rolled back alone.
//!
//! A batch of only non-durable writes (claims, heartbeats: losing one to a
//! power cut only makes a job run again) commits with `synchronous=NORMAL`;
//! the next durable commit syncs the WAL, and those frames with it.

use crate::store::{Clock, Millis, StoreError, StoreResult};
use sqlx::{Connection, SqliteConnection};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Most writes in one transaction.
const MAX_BATCH: usize = 512;
/// Writes waiting for the writer before callers wait to send.
const CHANNEL_DEPTH: usize = 8192;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Hands a write's result to its caller once the batch's fate is known.
type Deliver = Box<dyn FnOnce(Result<(), String>) + Send>;

/// One write: runs against the connection inside the batch's transaction,
/// says whether it succeeded, and keeps its answer until COMMIT.
/// Given no connection (the transaction could not begin), it fails unrun.
type Work = Box<
    dyn for<'c> FnOnce(Option<&'c mut SqliteConnection>, Millis) -> BoxFuture<'c, (bool, Deliver)>
        + Send,
>;

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
    /// Starts the writer task on `conn`. It ends when every `Writer` is
    /// dropped, after committing what it has.
    pub fn spawn(
        conn: SqliteConnection,
        clock: Arc<dyn Clock>,
        durability: Durability,
    ) -> (Writer, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let handle = tokio::spawn(run(conn, rx, clock, durability));
        (Writer { tx }, handle)
    }

    /// Runs `f` in the next batch and answers its result after COMMIT.
    /// `durable: false` marks writes whose loss in a power cut is harmless.
    pub async fn write<T, F>(&self, durable: bool, atomic: bool, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection, Millis) -> BoxFuture<'c, StoreResult<T>>
            + Send
            + 'static,
    {
        let (reply, answer) = oneshot::channel::<StoreResult<T>>();
        let work: Work = Box::new(move |conn, now| {
            Box::pin(async move {
                let result = match conn {
                    Some(conn) => f(conn, now).await,
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
            })
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

/// Runs one statement; boxed, so that the writer's future is provably
/// `Send` (sqlx's executor lifetimes defeat the inference otherwise).
fn exec<'c>(
    conn: &'c mut SqliteConnection,
    sql: &'static str,
) -> BoxFuture<'c, Result<(), sqlx::Error>> {
    Box::pin(async move { sqlx::query(sql).execute(conn).await.map(|_| ()) })
}

async fn run(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<Pending>,
    clock: Arc<dyn Clock>,
    durability: Durability,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut synchronous_full = durability == Durability::Full;
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let want_full = durability == Durability::Full && batch.iter().any(|p: &Pending| p.durable);
        if want_full != synchronous_full {
            let pragma = if want_full {
                "PRAGMA synchronous = FULL"
            } else {
                "PRAGMA synchronous = NORMAL"
            };
            if let Err(e) = exec(&mut conn, pragma).await {
                tracing::error!(error = %e, "could not set the sync mode");
            } else {
                synchronous_full = want_full;
            }
        }
        let delivers = run_batch(&mut conn, &mut batch, clock.now()).await;
        let commit = match exec(&mut conn, "COMMIT").await {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, "commit failed; the batch is rolled back");
                let _ = exec(&mut conn, "ROLLBACK").await;
                Err(format!("commit failed: {e}"))
            }
        };
        for d in delivers {
            d(commit.clone());
        }
    }
    let _ = conn.close().await;
}

/// Opens the transaction and runs each write in its own savepoint.
async fn run_batch(
    conn: &mut SqliteConnection,
    batch: &mut Vec<Pending>,
    now: Millis,
) -> Vec<Deliver> {
    let mut delivers = Vec::with_capacity(batch.len());
    if let Err(e) = exec(&mut *conn, "BEGIN IMMEDIATE").await {
        tracing::error!(error = %e, "could not begin a write transaction");
        for p in batch.drain(..) {
            let (_, d) = (p.work)(None, now).await;
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
            if let Err(e) = exec(&mut *conn, "SAVEPOINT w").await {
                tracing::error!(error = %e, "savepoint failed");
            }
        }
        let (ok, d) = (p.work)(Some(&mut *conn), now).await;
        if !ok && !p.atomic {
            let undone = if single {
                match exec(&mut *conn, "ROLLBACK").await {
                    Ok(()) => exec(&mut *conn, "BEGIN IMMEDIATE").await,
                    Err(e) => Err(e),
                }
            } else {
                exec(&mut *conn, "ROLLBACK TO w").await
            };
            if let Err(e) = undone {
                tracing::error!(error = %e, "rollback of a failed write failed");
            }
        }
        if savepoint {
            if let Err(e) = exec(&mut *conn, "RELEASE w").await {
                tracing::error!(error = %e, "release of a savepoint failed");
            }
        }
        delivers.push(d);
    }
    delivers
}
