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
use tokio::sync::{mpsc, oneshot, watch};

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
type Work = Box<dyn FnOnce(Option<&mut Connection>, Millis) -> Ran + Send>;

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
    #[cfg(test)]
    pub fn spawn(
        conn: Connection,
        clock: Arc<dyn Clock>,
        durability: Durability,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        Self::spawn_marked(conn, clock, durability, watch::channel(0).0)
    }

    /// As `spawn`, moving `readable` to the last event row (`gseq`) that is
    /// committed and, under `Durability::Full`, synced: what readers of
    /// the outbox may read.
    pub fn spawn_marked(
        conn: Connection,
        clock: Arc<dyn Clock>,
        durability: Durability,
        readable: watch::Sender<i64>,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let sync = match durability {
            Durability::Full => Some(syncer::wal_sync(conn.path().unwrap_or_default())),
            Durability::Normal => None,
        };
        Self::spawn_inner(conn, clock, sync, readable)
    }

    /// As `spawn`, with `sync` making what was committed durable before
    /// durable writes are answered (`None`: they are answered at COMMIT).
    #[cfg(test)]
    fn spawn_with(
        conn: Connection,
        clock: Arc<dyn Clock>,
        sync: Option<syncer::SyncFn>,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        Self::spawn_inner(conn, clock, sync, watch::channel(0).0)
    }

    fn spawn_inner(
        conn: Connection,
        clock: Arc<dyn Clock>,
        sync: Option<syncer::SyncFn>,
        readable: watch::Sender<i64>,
    ) -> std::io::Result<(Writer, oneshot::Receiver<()>)> {
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let (ended_tx, ended) = oneshot::channel();
        let syncer = sync.map(Syncer::spawn).transpose()?;
        std::thread::Builder::new()
            .name("taskbox-writer".into())
            .spawn(move || {
                run(conn, rx, clock, syncer.as_ref(), &readable);
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
        F: FnOnce(&mut Connection, Millis) -> StoreResult<T> + Send + 'static,
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
        F: FnOnce(&mut Connection, Millis) -> StoreResult<(T, E)> + Send + 'static,
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

/// The last event row written (its `gseq`), 0 when none ever was.
pub(super) fn last_event_row(conn: &Connection) -> rusqlite::Result<i64> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'events'")?
        .query_row([], |r| r.get::<_, i64>(0))
        .optional()
        .map(Option::unwrap_or_default)
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
    mut conn: Connection,
    mut rx: mpsc::Receiver<Pending>,
    clock: Arc<dyn Clock>,
    syncer: Option<&Syncer>,
    readable: &watch::Sender<i64>,
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
        let (ran, ran_bulk) = run_batch(&mut conn, &mut queues, &mut rx, clock.now(), owe_bulk);
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
        crate::metrics::get().committed("sqlite", "writer", ran.len(), t0.elapsed());
        tracing::trace!(
            writes = ran.len(),
            run_us,
            commit_us = t0.elapsed().as_micros() as u64 - run_us,
            "batch"
        );
        let mut after_sync: Vec<Answer> = Vec::new();
        // Event rows become readable once durable: after the sync, as the
        // writes that made them are answered.
        if super::tally::take_wrote_events() && committed.is_ok() {
            match last_event_row(&conn) {
                Ok(gseq) => {
                    let readable = readable.clone();
                    let mark = move || {
                        readable.send_if_modified(|r| {
                            let moved = gseq > *r;
                            *r = (*r).max(gseq);
                            moved
                        });
                    };
                    match syncer {
                        Some(_) => after_sync.push(Box::new(move |synced: Result<(), String>| {
                            if synced.is_ok() {
                                mark()
                            }
                        })),
                        None => mark(),
                    }
                }
                Err(e) => tracing::error!(error = %e, "cannot read the last event row"),
            }
        }
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
    conn: &mut Connection,
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
fn run_one(conn: &mut Connection, p: Pending, single: bool, now: Millis) -> Ran {
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
#[path = "writer_tests.rs"]
mod tests;
