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
//! while a batch runs is run next, after which the batch commits, so it
//! waits for one write and one commit, not for a whole batch. The runners'
//! writes (claims, completions, heartbeats) are `Bulk`: while no prompt
//! write waits they share one transaction for up to `BULK_BUDGET`, so
//! commits, and the pages each writes to the WAL, are few per job. A batch
//! after one that ran only requests' writes runs a bulk write too, so that
//! a stream of requests cannot stop the runners. Callers keep each write
//! small.
//!
//! A batch of only non-durable writes (claims, heartbeats: losing one to a
//! power cut only makes a job run again) commits with `synchronous=NORMAL`;
//! the next durable commit syncs the WAL, and those frames with it. When
//! both kinds of bulk write wait, the non-durable ones go first in a batch
//! of their own, so that a claim does not wait for completions' sync; the
//! next batch takes the rest.

use crate::store::{Clock, Durability, Millis, StoreError, StoreResult};
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
    work: Work,
}

/// The sending side; cloned by every caller.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Pending>,
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
    pub async fn write<T, F>(&self, class: Class, durable: bool, f: F) -> StoreResult<T>
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
    // A batch left durable writes waiting: the next one takes them.
    let mut owed_full = false;
    // The last batch ran only requests' writes.
    let mut owe_bulk = false;
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
        let durable_waits = queues.prompt.iter().chain(&queues.bulk).any(|p| p.durable);
        // Claims and heartbeats go first, in a batch of their own that needs
        // no sync, rather than wait for the sync of the completions queued
        // beside them; the completions go in the next batch.
        let light_first = !owed_full
            && !queues.prompt.iter().any(|p| p.durable)
            && queues.bulk.iter().any(|p| !p.durable);
        let want_full = durability == Durability::Full && durable_waits && !light_first;
        owed_full = durability == Durability::Full && durable_waits && light_first;
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
        let durable_ok = durability == Durability::Normal || synchronous_full;
        let (delivers, ran_bulk) = run_batch(
            &conn,
            &mut queues,
            &mut rx,
            clock.now(),
            durable_ok,
            owe_bulk,
        );
        owe_bulk = !ran_bulk;
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
/// every prompt write waiting, then bulk writes until none is left or the
/// batch's time is up. A prompt write that arrives meanwhile runs next, in
/// the same transaction, which then commits: its caller waits for one
/// commit, not for the batch's and then its own. Without `durable_ok`
/// (the batch commits without the sync the database was asked for), durable
/// writes wait for the next batch. With `owe_bulk` (the last batch ran only
/// requests' writes) it runs a bulk write after them if one waits, so that
/// a stream of requests cannot stop every runner's claims and completions.
/// Answers whether it ran a bulk write.
fn run_batch(
    conn: &Connection,
    queues: &mut Queues,
    rx: &mut mpsc::Receiver<Pending>,
    now: Millis,
    durable_ok: bool,
    owe_bulk: bool,
) -> (Vec<Deliver>, bool) {
    let mut delivers = Vec::with_capacity(queues.len());
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "could not begin a write transaction");
        for p in queues.prompt.drain(..).chain(queues.bulk.drain(..)) {
            let (_, d) = (p.work)(None, now);
            delivers.push(d);
        }
        return (delivers, true);
    }
    let until = Instant::now() + BULK_BUDGET;
    let single = queues.len() == 1;
    let mut prompted = false;
    let mut ran_bulk = false;
    loop {
        if queues.prompt.is_empty() && !prompted {
            if Instant::now() >= until {
                break;
            }
            queues.fill(rx);
        }
        let next = match queues.prompt.front() {
            // It waits for the next batch, which syncs.
            Some(p) if p.durable && !durable_ok => break,
            Some(_) => queues.prompt.pop_front(),
            // A request's write ran: commit now, for its caller waits. (Even
            // 250 µs more of bulk writes doubled a request's wait under a
            // flood, in `bench tenants`.)
            None if prompted && (ran_bulk || !owe_bulk) => break,
            None if durable_ok => queues.bulk.pop_front(),
            None => match queues.bulk.iter().position(|p| !p.durable) {
                Some(i) => queues.bulk.remove(i),
                None => break,
            },
        };
        let Some(next) = next else { break };
        prompted |= next.class == Class::Prompt;
        ran_bulk |= next.class == Class::Bulk;
        delivers.push(run_one(conn, next, single, now));
        if single {
            // It ran without a savepoint: nothing else may share its
            // transaction.
            break;
        }
    }
    (delivers, ran_bulk)
}

/// One write inside the batch's transaction, undone alone if it fails.
fn run_one(conn: &Connection, p: Pending, single: bool, now: Millis) -> Deliver {
    // A batch of one needs no savepoint: a failed write rolls back the
    // whole transaction, which holds nothing else.
    let savepoint = !single;
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
    if !ok {
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
        let ok = w.write(Class::Prompt, true, |c, _| insert(c, 1));
        let failed = w.write(Class::Prompt, true, |c, _| {
            insert(c, 2)?;
            Err::<(), _>(StoreError::Conflict("no".into()))
        });
        let panicked = w.write(Class::Prompt, true, |c, _| -> StoreResult<()> {
            insert(c, 3)?;
            panic!("a bug in a write")
        });
        let after = w.write(Class::Prompt, true, |c, _| insert(c, 4));
        let (ok, failed, panicked, after) = tokio::join!(ok, failed, panicked, after);
        assert!(ok.is_ok() && after.is_ok());
        assert!(matches!(failed, Err(StoreError::Conflict(_))));
        assert!(matches!(panicked, Err(StoreError::Unavailable(_))));
        let values = w
            .write(Class::Bulk, false, |c, _| {
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
        assert_eq!(w.write(Class::Bulk, false, |c, _| count(c)).await?, 2);
        drop(w);
        ended.await?;
        Ok(())
    }

    /// The order in which writes ran: `first` is sent, and while it runs
    /// the rest are queued in their order; each is (class, durable, name).
    async fn order_of(
        durability: Durability,
        first: (Class, bool, &'static str),
        rest: &[(Class, bool, &'static str)],
    ) -> anyhow::Result<Vec<&'static str>> {
        use std::future::Future;
        use std::sync::Mutex;
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER)")?;
        let (w, ended) = Writer::spawn(conn, Arc::new(SystemClock), durability)?;
        let order: Arc<Mutex<Vec<&'static str>>> = Arc::default();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = oneshot::channel::<()>();
        let (o, w1) = (order.clone(), w.clone());
        let running = tokio::spawn(async move {
            w1.write(first.0, first.1, move |_, _| -> StoreResult<()> {
                o.lock().unwrap().push(first.2);
                let _ = started_tx.send(());
                // Held until the others are queued behind it.
                let _ = hold.recv_timeout(std::time::Duration::from_secs(30));
                Ok(())
            })
            .await
        });
        started.await?;
        let mut queued: Vec<_> = rest
            .iter()
            .map(|&(class, durable, name)| {
                let order = order.clone();
                Box::pin(w.write(class, durable, move |_, _| -> StoreResult<()> {
                    order.lock().unwrap().push(name);
                    Ok(())
                }))
            })
            .collect();
        for f in &mut queued {
            // One poll sends it; the answer comes later.
            std::future::poll_fn(|cx| {
                let _ = f.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
        }
        release.send(())?;
        running.await??;
        for f in queued {
            f.await?;
        }
        drop(w);
        ended.await?;
        let order = order.lock().unwrap().clone();
        Ok(order)
    }

    /// A request's write waits for the write running, not for the bulk
    /// writes queued before it.
    #[tokio::test]
    async fn a_prompt_write_goes_ahead_of_queued_bulk_writes() -> anyhow::Result<()> {
        let order = order_of(
            Durability::Normal,
            (Class::Bulk, true, "bulk 1"),
            &[
                (Class::Bulk, true, "bulk 2"),
                (Class::Bulk, true, "bulk 3"),
                (Class::Prompt, true, "prompt"),
            ],
        )
        .await?;
        assert_eq!(order, ["bulk 1", "prompt", "bulk 2", "bulk 3"]);
        Ok(())
    }

    /// Under `synchronous=FULL`, claims (not durable) queued among
    /// completions (durable) go first, in a batch that needs no sync; where
    /// every commit is the same, writes keep their order.
    #[tokio::test]
    async fn claims_go_ahead_of_completions_only_where_syncs_differ() -> anyhow::Result<()> {
        let queued = [
            (Class::Bulk, true, "done 1"),
            (Class::Bulk, false, "claim 1"),
            (Class::Bulk, true, "done 2"),
            (Class::Bulk, false, "claim 2"),
        ];
        // A request's write first: its batch commits as soon as it ran, so
        // the others make the batches after it.
        let request = (Class::Prompt, true, "request");
        assert_eq!(
            order_of(Durability::Full, request, &queued).await?,
            ["request", "claim 1", "claim 2", "done 1", "done 2"]
        );
        assert_eq!(
            order_of(Durability::Normal, request, &queued).await?,
            ["request", "done 1", "claim 1", "done 2", "claim 2"]
        );
        Ok(())
    }

    /// Sends a write that reports its name when it runs and then sends the
    /// next of `chain`, at once, from the writer's thread: each write of the
    /// chain is waiting before the batch that ran the one before commits.
    fn send_chain(
        w: &Writer,
        class: Class,
        chain: &'static [&'static str],
        ran: std::sync::mpsc::Sender<&'static str>,
    ) {
        let Some((&name, rest)) = chain.split_first() else {
            return;
        };
        let next = w.clone();
        let work: Work = Box::new(move |_, _| {
            let _ = ran.send(name);
            send_chain(&next, class, rest, ran);
            (true, Box::new(|_| {}) as Deliver)
        });
        let pending = Pending {
            class,
            durable: false,
            work,
        };
        assert!(w.tx.try_send(pending).is_ok(), "the channel has room");
    }

    /// Requests that keep coming, each sent before the batch of the one
    /// before commits, still leave the runners a write between them.
    #[tokio::test]
    async fn a_stream_of_requests_leaves_room_for_bulk_writes() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        let (w, ended) = Writer::spawn(conn, Arc::new(SystemClock), Durability::Normal)?;
        let (ran, order) = std::sync::mpsc::channel();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = oneshot::channel::<()>();
        let (r, w1) = (ran.clone(), w.clone());
        let first = tokio::spawn(async move {
            w1.write(Class::Prompt, false, move |_, _| -> StoreResult<()> {
                let _ = r.send("request 0");
                let _ = started_tx.send(());
                let _ = hold.recv_timeout(std::time::Duration::from_secs(30));
                Ok(())
            })
            .await
        });
        started.await?;
        send_chain(&w, Class::Bulk, &["bulk"], ran.clone());
        const REQUESTS: &[&str] = &["request 1", "request 2", "request 3", "request 4"];
        send_chain(&w, Class::Prompt, REQUESTS, ran);
        release.send(())?;
        first.await??;
        let order: Vec<&str> = (0..6)
            .map(|_| order.recv_timeout(std::time::Duration::from_secs(30)))
            .collect::<Result<_, _>>()?;
        assert_eq!(
            order,
            [
                "request 0",
                "request 1",
                "bulk",
                "request 2",
                "request 3",
                "request 4"
            ]
        );
        drop(w);
        ended.await?;
        Ok(())
    }
}
