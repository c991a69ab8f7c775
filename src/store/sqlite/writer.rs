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
//! Writes come in two classes. A request's writes (an enqueue, a cancel)
//! are `Prompt`: each batch runs those waiting first, and one that arrives
//! while a batch runs ends the batch at the next write, so it waits for one
//! write, not for a whole batch. The runners' writes (claims, completions,
//! heartbeats) are `Bulk`: while no prompt write waits they share one
//! transaction for up to `BULK_BUDGET`, so commits, and the pages each
//! writes to the WAL, are few per job. Callers keep each write small.
//!
//! A batch of only non-durable writes (claims, heartbeats: losing one to a
//! power cut only makes a job run again) commits with `synchronous=NORMAL`;
//! the next durable commit syncs the WAL, and those frames with it.

use crate::store::{Clock, Millis, StoreError, StoreResult};
use rusqlite::Connection;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// Most writes taken off the channel at once.
const MAX_BATCH: usize = 512;
/// Longest a transaction takes more bulk writes for while no prompt write
/// waits.
const BULK_BUDGET: Duration = Duration::from_millis(8);
/// Writes waiting for the writer before callers wait to send.
const CHANNEL_DEPTH: usize = 8192;

/// Hands a write's result to its caller once the batch's fate is known.
type Deliver = Box<dyn FnOnce(Result<(), String>) + Send>;

/// One write: runs against the connection inside the batch's transaction,
/// says whether it succeeded, and keeps its answer until COMMIT.
/// Given no connection (the transaction could not begin), it fails unrun.
type Work = Box<dyn FnOnce(Option<&Connection>, Millis) -> (bool, Deliver) + Send>;

/// Who waits for a write, and so how soon it must be committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A request waits for it: it goes first, and cuts a batch short.
    Prompt,
    /// A runner's write: it may share a longer transaction.
    Bulk,
}

struct Pending {
    class: Class,
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

    /// Runs `f` in a coming batch and answers its result after COMMIT.
    /// `durable: false` marks writes whose loss in a power cut is harmless.
    pub async fn write<T, F>(
        &self,
        class: Class,
        durable: bool,
        atomic: bool,
        f: F,
    ) -> StoreResult<T>
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
                class,
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

/// Writes taken off the channel, by class, each in arrival order.
#[derive(Default)]
struct Queues {
    prompt: VecDeque<Pending>,
    bulk: VecDeque<Pending>,
    /// The channel is closed: stop once these are done.
    closed: bool,
}

impl Queues {
    fn is_empty(&self) -> bool {
        self.prompt.is_empty() && self.bulk.is_empty()
    }

    fn len(&self) -> usize {
        self.prompt.len() + self.bulk.len()
    }

    fn push(&mut self, p: Pending) {
        match p.class {
            Class::Prompt => self.prompt.push_back(p),
            Class::Bulk => self.bulk.push_back(p),
        }
    }

    /// Takes what waits on the channel, without blocking.
    fn fill(&mut self, rx: &mut mpsc::Receiver<Pending>) {
        while self.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => self.push(p),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.closed = true;
                    break;
                }
            }
        }
    }
}

fn run(
    conn: Connection,
    mut rx: mpsc::Receiver<Pending>,
    clock: Arc<dyn Clock>,
    durability: Durability,
) {
    let mut queues = Queues::default();
    let mut synchronous_full = durability == Durability::Full;
    loop {
        if queues.is_empty() {
            if queues.closed {
                break;
            }
            match rx.blocking_recv() {
                Some(first) => queues.push(first),
                None => break,
            }
        }
        queues.fill(&mut rx);
        let want_full = durability == Durability::Full
            && queues.prompt.iter().chain(&queues.bulk).any(|p| p.durable);
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
        let t0 = Instant::now();
        let delivers = run_batch(&conn, &mut queues, &mut rx, clock.now());
        let ran = t0.elapsed();
        let commit = match exec(&conn, "COMMIT") {
            Ok(()) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, "commit failed; the batch is rolled back");
                let _ = exec(&conn, "ROLLBACK");
                Err(format!("commit failed: {e}"))
            }
        };
        tracing::trace!(
            writes = delivers.len(),
            run_us = ran.as_micros() as u64,
            commit_us = (t0.elapsed() - ran).as_micros() as u64,
            "batch"
        );
        for d in delivers {
            d(commit.clone());
        }
    }
    if let Err((_, e)) = conn.close() {
        tracing::warn!(error = %e, "the database did not close cleanly");
    }
}

/// Opens the transaction and runs writes in it, each in its own savepoint:
/// every prompt write waiting, then bulk writes until none is left, the
/// batch's time is up, or a prompt write arrives.
fn run_batch(
    conn: &Connection,
    queues: &mut Queues,
    rx: &mut mpsc::Receiver<Pending>,
    now: Millis,
) -> Vec<Deliver> {
    let mut delivers = Vec::with_capacity(queues.len());
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "could not begin a write transaction");
        for p in queues.prompt.drain(..).chain(queues.bulk.drain(..)) {
            let (_, d) = (p.work)(None, now);
            delivers.push(d);
        }
        return delivers;
    }
    let began = Instant::now();
    let single = queues.len() == 1;
    loop {
        let next = match queues.prompt.pop_front() {
            Some(p) => p,
            None => {
                if began.elapsed() >= BULK_BUDGET {
                    break;
                }
                queues.fill(rx);
                if !queues.prompt.is_empty() && !delivers.is_empty() {
                    // A request waits: commit what ran, and run it next.
                    break;
                }
                match queues
                    .prompt
                    .pop_front()
                    .or_else(|| queues.bulk.pop_front())
                {
                    Some(p) => p,
                    None => break,
                }
            }
        };
        delivers.push(run_one(conn, next, single, now));
        if single {
            // It ran without a savepoint: nothing else may share its
            // transaction.
            break;
        }
    }
    delivers
}

/// One write inside the batch's transaction, undone alone if it fails.
fn run_one(conn: &Connection, p: Pending, single: bool, now: Millis) -> Deliver {
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
    let (ok, d) =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(Some(conn), now))) {
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
    d
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
        let ok = w.write(Class::Prompt, true, false, |c, _| insert(c, 1));
        let failed = w.write(Class::Prompt, true, false, |c, _| {
            insert(c, 2)?;
            Err::<(), _>(StoreError::Conflict("no".into()))
        });
        let panicked = w.write(Class::Prompt, true, false, |c, _| -> StoreResult<()> {
            insert(c, 3)?;
            panic!("a bug in a write")
        });
        let after = w.write(Class::Prompt, true, false, |c, _| insert(c, 4));
        let (ok, failed, panicked, after) = tokio::join!(ok, failed, panicked, after);
        assert!(ok.is_ok() && after.is_ok());
        assert!(matches!(failed, Err(StoreError::Conflict(_))));
        assert!(matches!(panicked, Err(StoreError::Unavailable(_))));
        let values = w
            .write(Class::Bulk, false, true, |c, _| {
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
        assert_eq!(w.write(Class::Bulk, false, true, |c, _| count(c)).await?, 2);
        drop(w);
        ended.await?;
        Ok(())
    }

    /// A request's write waits for the write running, not for the bulk
    /// writes queued before it.
    #[tokio::test]
    async fn a_prompt_write_goes_ahead_of_queued_bulk_writes() -> anyhow::Result<()> {
        use std::future::Future;
        use std::sync::Mutex;
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        conn.execute_batch("CREATE TABLE t (v INTEGER)")?;
        let (w, ended) = Writer::spawn(conn, Arc::new(SystemClock), Durability::Normal)?;
        let order: Arc<Mutex<Vec<&'static str>>> = Arc::default();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = oneshot::channel::<()>();
        let logged = |name: &'static str| {
            let order = order.clone();
            move |_: &Connection, _| -> StoreResult<()> {
                order.lock().unwrap().push(name);
                Ok(())
            }
        };
        let (o, w1) = (order.clone(), w.clone());
        let first = tokio::spawn(async move {
            w1.write(Class::Bulk, true, false, move |_, _| -> StoreResult<()> {
                o.lock().unwrap().push("bulk 1");
                let _ = started_tx.send(());
                // Held until the others are queued behind it.
                let _ = hold.recv_timeout(std::time::Duration::from_secs(30));
                Ok(())
            })
            .await
        });
        started.await?;
        // Queued in this order while the first runs: two bulk, one prompt.
        let mut queued = vec![
            Box::pin(w.write(Class::Bulk, true, false, logged("bulk 2"))),
            Box::pin(w.write(Class::Bulk, true, false, logged("bulk 3"))),
            Box::pin(w.write(Class::Prompt, true, false, logged("prompt"))),
        ];
        for f in &mut queued {
            // One poll sends it; the answer comes later.
            std::future::poll_fn(|cx| {
                let _ = f.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
        }
        release.send(())?;
        first.await??;
        for f in queued {
            f.await?;
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["bulk 1", "prompt", "bulk 2", "bulk 3"]
        );
        drop(w);
        ended.await?;
        Ok(())
    }
}
