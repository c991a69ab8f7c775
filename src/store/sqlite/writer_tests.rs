//! Tests of the writer: batching, order, failures, and when answers come.

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
async fn a_failed_write_hands_nothing_on_and_a_failed_sync_stops_the_writer() -> anyhow::Result<()>
{
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
