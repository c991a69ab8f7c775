//! Group commit: one OS thread owns the SQLite write connection and drains
//! a channel of writes into one transaction per batch, answering each caller
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
//! Every batch commits without a sync (`synchronous=NORMAL`). Under
//! `Durability::Full`, a batch's durable writes are answered by the
//! syncing thread (`syncer`) once it has synced the WAL, while this thread
//! goes on with the next batch; non-durable writes (claims, heartbeats:
//! losing one to a power cut only makes a job run again) are answered at
//! once. A write may hand part of its result on at once too (`early`): an
//! enqueue's claimed jobs start while the sync that acknowledges the
//! enqueue runs; nothing they write can be durable before it.

use super::syncer::{self, Answer, Syncer};
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

/// How a batch ended, for the callers of its writes.
#[derive(Debug, Clone)]
enum Fate {
    /// Committed (and, for a durable write under `Durability::Full`, synced).
    Done,
    /// The commit failed: nothing of the batch was written.
    Failed(String),
    /// Not written, or committed but never made durable: the store can no
    /// longer promise anything.
    Unavailable(String),
}

/// Hands a write's result to its caller once the batch's fate is known.
type Deliver = Box<dyn FnOnce(Fate) + Send>;

/// Runs on the writer's thread right after its batch's COMMIT, before the
/// sync: what a write hands on early. It must not block.
type Early = Box<dyn FnOnce() + Send>;

/// What a write left: whether it succeeded, what it hands on at COMMIT,
/// and its answer.
struct Ran {
    ok: bool,
    early: Option<Early>,
    deliver: Deliver,
}

/// One write: runs against the connection inside the batch's transaction,
/// says whether it succeeded, and keeps its answer until COMMIT.
/// Given no connection (the transaction could not begin), it fails unrun.
type Work = Box<dyn FnOnce(Option<&Connection>, Millis) -> Ran + Send>;

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
    /// It hands something on at COMMIT (`Writer::write_early`).
    hands_early: bool,
    work: Work,
}

impl Pending {
    /// Its caller hears of it only after the next sync: committed now or
    /// when the sync under way ends, it is answered at the same moment.
    fn waits_for_sync(&self) -> bool {
        self.durable && !self.hands_early
    }
}

/// The sending side; cloned by every caller.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Pending>,
}

impl Writer {
    /// Starts the writer thread on `conn`. It ends when every `Writer` is
    /// dropped, after committing what it has; the handle says when.
    /// The connection must be in WAL mode with `synchronous=NORMAL`:
    /// under `Durability::Full` the WAL is synced by a thread of the
    /// writer's own (`syncer`), not inside each COMMIT.
    pub fn spawn(
        conn: Connection,
        clock: Arc<dyn Clock>,
        durability: Durability,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let sync = match durability {
            Durability::Full => Some(syncer::wal_sync(conn.path().unwrap_or_default())),
            Durability::Normal => None,
        };
        Self::spawn_with(conn, clock, sync)
    }

    /// As `spawn`, with `sync` making what was committed durable before
    /// durable writes are answered (`None`: they are answered at COMMIT).
    fn spawn_with(
        conn: Connection,
        clock: Arc<dyn Clock>,
        sync: Option<syncer::SyncFn>,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let (ended_tx, ended) = oneshot::channel();
        let syncer = sync.map(Syncer::spawn).transpose()?;
        std::thread::Builder::new()
            .name("taskbox-writer".into())
            .spawn(move || {
                run(conn, rx, clock, syncer.as_ref());
                // Every durable answer is given before the writer says it ended.
                drop(syncer);
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
        self.write_early(
            class,
            durable,
            move |c, now| f(c, now).map(|t| (t, ())),
            None::<fn(())>,
        )
        .await
    }

    /// As `write`, where `f` also yields a part that `early` (if given) is
    /// given on the writer's thread as soon as the batch has committed,
    /// before the sync that makes it durable (and never if the write or
    /// the commit failed). `early` must not block: the next batch waits
    /// for it.
    pub async fn write_early<T, E, F, G>(
        &self,
        class: Class,
        durable: bool,
        f: F,
        early: Option<G>,
    ) -> StoreResult<T>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&Connection, Millis) -> StoreResult<(T, E)> + Send + 'static,
        G: FnOnce(E) + Send + 'static,
    {
        let hands_early = early.is_some();
        let (reply, answer) = oneshot::channel::<StoreResult<T>>();
        let work: Work = Box::new(move |conn, now| {
            let (result, handed) = match conn.map(|conn| f(conn, now)) {
                Some(Ok((t, e))) => (Ok(t), Some(e)),
                Some(Err(e)) => (Err(e), None),
                None => (
                    Err(StoreError::Unavailable(
                        "the database could not begin a transaction".into(),
                    )),
                    None,
                ),
            };
            let ok = result.is_ok();
            let deliver: Deliver = Box::new(move |fate: Fate| {
                let _ = reply.send(match fate {
                    Fate::Done => result,
                    Fate::Failed(e) => Err(StoreError::Internal(e)),
                    Fate::Unavailable(e) => Err(StoreError::Unavailable(e)),
                });
            });
            Ran {
                ok,
                early: handed
                    .zip(early)
                    .map(|(e, early)| Box::new(move || early(e)) as Early),
                deliver,
            }
        });
        self.tx
            .send(Pending {
                class,
                durable,
                hands_early,
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

    /// Every write waiting is answered only after the next sync.
    fn all_wait_for_sync(&self) -> bool {
        self.prompt
            .iter()
            .chain(&self.bulk)
            .all(Pending::waits_for_sync)
    }

    /// Takes writes as they come until `ended` changes (the sync under
    /// way ended), one comes whose caller hears of it at COMMIT (a claim,
    /// an enqueue's claim), the batch is full, or `BULK_BUDGET` is up.
    async fn wait_for(
        &mut self,
        rx: &mut mpsc::Receiver<Pending>,
        ended: &mut tokio::sync::watch::Receiver<u64>,
    ) {
        let until = tokio::time::Instant::now() + BULK_BUDGET;
        while self.all_wait_for_sync() && self.len() < MAX_BATCH && !self.closed {
            tokio::select! {
                biased;
                p = rx.recv() => match p {
                    Some(p) => self.push(p),
                    None => self.closed = true,
                },
                _ = ended.changed() => break,
                () = tokio::time::sleep_until(until) => break,
            }
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
    syncer: Option<&Syncer>,
) {
    let mut queues = Queues::default();
    // The last batch ran only requests' writes.
    let mut owe_bulk = false;
    // Waits on the channel and the syncer at once.
    let waits = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            tracing::warn!(error = %e, "the writer cannot wait for syncs; it commits as writes come");
            None
        }
    };
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
        // While a sync runs, writes whose callers hear of them only after
        // a sync (completions, enqueues that claim nothing) are answered at
        // the same moment whether committed now or when it ends, so the
        // batch waits for its end (or for a write whose caller hears at
        // COMMIT), and takes what came meanwhile. Without this, the writer
        // commits a few writes at a time, each job writes its pages to the
        // WAL again, and the syncs come back to back.
        if let (Some(mut ended), Some(rt)) = (syncer.and_then(Syncer::syncing), &waits) {
            if queues.all_wait_for_sync() {
                rt.block_on(queues.wait_for(&mut rx, &mut ended));
            }
        }
        if let Some(why) = syncer.and_then(Syncer::broken) {
            let now = clock.now();
            for p in queues.prompt.drain(..).chain(queues.bulk.drain(..)) {
                ((p.work)(None, now).deliver)(Fate::Unavailable(why.clone()));
            }
            continue;
        }
        let t0 = Instant::now();
        let (ran, ran_bulk) = run_batch(&conn, &mut queues, &mut rx, clock.now(), owe_bulk);
        owe_bulk = !ran_bulk;
        let run_us = t0.elapsed().as_micros() as u64;
        let committed = match exec(&conn, "COMMIT") {
            Ok(()) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, "commit failed; the batch is rolled back");
                let _ = exec(&conn, "ROLLBACK");
                Err(format!("commit failed: {e}"))
            }
        };
        tracing::trace!(
            writes = ran.len(),
            run_us,
            commit_us = t0.elapsed().as_micros() as u64 - run_us,
            "batch"
        );
        let mut after_sync: Vec<Answer> = Vec::new();
        for (durable, r) in ran {
            match &committed {
                Err(e) => (r.deliver)(Fate::Failed(e.clone())),
                Ok(()) => {
                    if let Some(early) = r.early {
                        // Like a write, a hand-off that panics must not take
                        // the writer down.
                        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(early)).is_err() {
                            tracing::error!("a write's early hand-off panicked");
                        }
                    }
                    match syncer {
                        // An error promises nothing: it needs no sync.
                        Some(_) if durable && r.ok => {
                            let deliver = r.deliver;
                            after_sync.push(Box::new(move |synced: Result<(), String>| {
                                deliver(synced.map_or_else(Fate::Unavailable, |()| Fate::Done))
                            }));
                        }
                        _ => (r.deliver)(Fate::Done),
                    }
                }
            }
        }
        if let Some(s) = syncer {
            s.after_sync(after_sync);
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
/// commit, not for the batch's and then its own. With `owe_bulk` (the
/// last batch ran only requests' writes) it runs a bulk write after them
/// if one waits, so that a stream of requests cannot stop every runner's
/// claims and completions. Answers what ran (each with whether it is
/// durable) and whether a bulk write did.
fn run_batch(
    conn: &Connection,
    queues: &mut Queues,
    rx: &mut mpsc::Receiver<Pending>,
    now: Millis,
    owe_bulk: bool,
) -> (Vec<(bool, Ran)>, bool) {
    let mut ran = Vec::with_capacity(queues.len());
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "could not begin a write transaction");
        for p in queues.prompt.drain(..).chain(queues.bulk.drain(..)) {
            ran.push((p.durable, (p.work)(None, now)));
        }
        return (ran, true);
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
        let next = match queues.prompt.pop_front() {
            Some(p) => p,
            // A request's write ran: commit now, for its caller waits. (Even
            // 250 µs more of bulk writes doubled a request's wait under a
            // flood, in `bench tenants`.)
            None if prompted && (ran_bulk || !owe_bulk) => break,
            None => match queues.bulk.pop_front() {
                Some(p) => p,
                None => break,
            },
        };
        prompted |= next.class == Class::Prompt;
        ran_bulk |= next.class == Class::Bulk;
        ran.push((next.durable, run_one(conn, next, single, now)));
        if single {
            // It ran without a savepoint: nothing else may share its
            // transaction.
            break;
        }
    }
    (ran, ran_bulk)
}

/// One write inside the batch's transaction, undone alone if it fails.
fn run_one(conn: &Connection, p: Pending, single: bool, now: Millis) -> Ran {
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
    let mut ran =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(Some(conn), now))) {
            Ok(ran) => ran,
            Err(_) => {
                tracing::error!("a write panicked; it is rolled back");
                Ran {
                    ok: false,
                    early: None,
                    deliver: Box::new(|_| {}),
                }
            }
        };
    if !ran.ok {
        // Nothing of it stands: nothing to hand on.
        ran.early = None;
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
    ran
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

    /// No write waits for another's sync in the writer (syncs are the
    /// syncing thread's): claims (not durable) queued among completions
    /// (durable) keep their order, whatever the durability.
    #[tokio::test]
    async fn writes_keep_their_order_whatever_the_durability() -> anyhow::Result<()> {
        let queued = [
            (Class::Bulk, true, "done 1"),
            (Class::Bulk, false, "claim 1"),
            (Class::Bulk, true, "done 2"),
            (Class::Bulk, false, "claim 2"),
        ];
        let request = (Class::Prompt, true, "request");
        for durability in [Durability::Full, Durability::Normal] {
            assert_eq!(
                order_of(durability, request, &queued).await?,
                ["request", "done 1", "claim 1", "done 2", "claim 2"]
            );
        }
        Ok(())
    }

    /// A sync held until released: `release` lets the next sync through.
    fn held_sync() -> (syncer::SyncFn, std::sync::mpsc::Sender<()>) {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let sync: syncer::SyncFn = Box::new(move || {
            held.recv_timeout(std::time::Duration::from_secs(30))
                .map_err(std::io::Error::other)
        });
        (sync, release)
    }

    /// A durable write is answered after the sync, a non-durable one and
    /// an early hand-off at COMMIT, while the sync still runs.
    #[tokio::test]
    async fn durable_answers_wait_for_the_sync_and_early_parts_do_not() -> anyhow::Result<()> {
        use futures_util::FutureExt;
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER)")?;
        let (sync, release) = held_sync();
        let (w, ended) = Writer::spawn_with(conn, Arc::new(SystemClock), Some(sync))?;
        let (early_tx, early_rx) = oneshot::channel();
        let mut durable = Box::pin(w.write_early(
            Class::Prompt,
            true,
            |c, _| insert(c, 1).map(|()| ("answer", "early")),
            Some(move |e| {
                let _ = early_tx.send(e);
            }),
        ));
        assert!(durable.as_mut().now_or_never().is_none());
        assert_eq!(early_rx.await?, "early");
        // A later batch commits and is answered while the first one's
        // sync is still held.
        assert_eq!(w.write(Class::Bulk, false, |c, _| count(c)).await?, 1);
        assert!(
            durable.as_mut().now_or_never().is_none(),
            "answered before its sync"
        );
        release.send(())?;
        assert_eq!(durable.await?, "answer");
        drop((w, release));
        ended.await?;
        Ok(())
    }

    /// A write that fails hands nothing on early; a failed sync fails its
    /// durable writes and every write after it, with `Unavailable`.
    #[tokio::test]
    async fn a_failed_write_hands_nothing_on_and_a_failed_sync_stops_the_writer(
    ) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open(dir.path().join("w.db"))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER)")?;
        let mut syncs = 0;
        let sync: syncer::SyncFn = Box::new(move || {
            syncs += 1;
            if syncs == 1 {
                Ok(())
            } else {
                Err(std::io::Error::other("EIO"))
            }
        });
        let (w, ended) = Writer::spawn_with(conn, Arc::new(SystemClock), Some(sync))?;
        let handed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let h = handed.clone();
        let failed = w
            .write_early(
                Class::Prompt,
                true,
                |c, _| {
                    insert(c, 1)?;
                    Err::<((), ()), _>(StoreError::Conflict("no".into()))
                },
                Some(move |()| h.store(true, std::sync::atomic::Ordering::SeqCst)),
            )
            .await;
        assert!(matches!(failed, Err(StoreError::Conflict(_))));
        assert!(!handed.load(std::sync::atomic::Ordering::SeqCst));
        // The first sync passes (that write was undone, but its batch
        // synced all the same); the second fails.
        w.write(Class::Prompt, true, |c, _| insert(c, 2)).await?;
        let unsynced = w.write(Class::Prompt, true, |c, _| insert(c, 3)).await;
        assert!(matches!(unsynced, Err(StoreError::Unavailable(e)) if e.contains("EIO")));
        let after = w.write(Class::Bulk, false, |c, _| count(c)).await;
        assert!(matches!(after, Err(StoreError::Unavailable(e)) if e.contains("EIO")));
        drop(w);
        ended.await?;
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
            Ran {
                ok: true,
                early: None,
                deliver: Box::new(|_| {}),
            }
        });
        let pending = Pending {
            class,
            durable: false,
            hands_early: false,
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
