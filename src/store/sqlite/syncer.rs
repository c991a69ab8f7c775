//! Makes committed batches durable on a thread of its own: the writer
//! commits without a sync (`synchronous=NORMAL`) and goes on to its next
//! batch, while this thread syncs the WAL and only then answers the
//! batch's durable writes.
//!
//! With `synchronous=FULL` SQLite syncs the WAL inside every COMMIT, so
//! the one writer thread stood still for each sync (4–14 ms under a
//! flood, when the disk is busy with the checkpoint's copy), and every
//! request behind it waited for another batch's sync before its own write
//! could run. Here a request waits for its own batch's sync only, and
//! syncs of batches that commit while one runs are taken by the next one.
//! What reaches the disk is what `FULL` writes (SQLite's `NORMAL` differs
//! from it by exactly this one sync after each commit), so an answered
//! durable write is as durable as before. What changes is that a commit
//! is visible to readers, and to the writer's later batches, from the
//! moment it is written, a sync before it is durable (DESIGN §9).

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Makes what was written so far durable.
pub(super) type SyncFn = Box<dyn FnMut() -> std::io::Result<()> + Send>;

/// Answers a batch's durable writes once they are durable: `Ok`, or why
/// they may not be.
pub(super) type Answer = Box<dyn FnOnce(Result<(), String>) + Send>;

/// The syncing thread; dropping it answers what it holds and waits for it.
pub(super) struct Syncer {
    tx: Option<mpsc::Sender<Vec<Answer>>>,
    thread: Option<JoinHandle<()>>,
    /// Set once a sync failed: what was written since may be lost on a
    /// power cut, and nothing written after can be promised durable, so
    /// the writer refuses every write from then on (as PostgreSQL stops
    /// on a failed fsync: retrying one proves nothing).
    broken: Arc<Mutex<Option<String>>>,
    /// A sync is under way.
    busy: Arc<AtomicBool>,
    /// How many syncs have ended.
    synced: tokio::sync::watch::Sender<u64>,
}

impl Syncer {
    pub(super) fn spawn(sync: SyncFn) -> std::io::Result<Syncer> {
        let (tx, rx) = mpsc::channel();
        let broken = Arc::new(Mutex::new(None));
        let busy = Arc::new(AtomicBool::new(false));
        let (synced, _) = tokio::sync::watch::channel(0);
        let state = Shared {
            broken: broken.clone(),
            busy: busy.clone(),
            synced: synced.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("taskbox-sync".into())
            .spawn(move || run(sync, rx, state))?;
        Ok(Syncer {
            tx: Some(tx),
            thread: Some(thread),
            broken,
            busy,
            synced,
        })
    }

    /// While a sync is under way: what says when it has ended. Durable
    /// writes committed now would wait for the sync after it anyway.
    pub(super) fn syncing(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        // Subscribed first: a sync that ends after the check still counts.
        let ended = self.synced.subscribe();
        self.busy.load(Ordering::SeqCst).then_some(ended)
    }

    /// Answers `answers` after the next sync, begun after this call.
    pub(super) fn after_sync(&self, answers: Vec<Answer>) {
        if answers.is_empty() {
            return;
        }
        if let Some(tx) = &self.tx {
            if let Err(mpsc::SendError(answers)) = tx.send(answers) {
                for a in answers {
                    a(Err("the WAL's syncing thread stopped".into()));
                }
            }
        }
    }

    /// Why no write can be promised durable any more, if a sync failed.
    pub(super) fn broken(&self) -> Option<String> {
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the syncing thread shares with the writer's.
struct Shared {
    broken: Arc<Mutex<Option<String>>>,
    busy: Arc<AtomicBool>,
    synced: tokio::sync::watch::Sender<u64>,
}

fn run(mut sync: SyncFn, rx: mpsc::Receiver<Vec<Answer>>, shared: Shared) {
    while let Ok(mut group) = rx.recv() {
        shared.busy.store(true, Ordering::SeqCst);
        // Every batch committed by now is covered by one sync.
        while let Ok(more) = rx.try_recv() {
            group.extend(more);
        }
        let already = shared
            .broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let outcome = match already {
            Some(why) => Err(why),
            None => sync().map_err(|e| {
                let why = format!("the WAL could not be synced to disk ({e}); restart the server once the disk is sound");
                tracing::error!("{why}");
                *shared.broken.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
                why
            }),
        };
        shared.busy.store(false, Ordering::SeqCst);
        shared.synced.send_modify(|n| *n += 1);
        for a in group {
            a(outcome.clone());
        }
    }
}

/// Syncs the WAL file of the database at `db_path` (SQLite names it
/// `<db>-wal`), through a handle of its own, reopened if the file was
/// replaced (SQLite removes it only when the last connection closes).
pub(super) fn wal_sync(db_path: &str) -> SyncFn {
    let path = PathBuf::from(format!("{db_path}-wal"));
    let mut open: Option<(File, FileId)> = None;
    Box::new(move || {
        let id = file_id(&std::fs::metadata(&path)?);
        let file = match open.take() {
            Some((f, was)) if was == id => f,
            _ => {
                let f = File::options().write(true).open(&path)?;
                // A new file's name is durable once its directory is.
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    File::open(dir)?.sync_all()?;
                }
                f
            }
        };
        file.sync_data()?;
        open = Some((file, id));
        Ok(())
    })
}

#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}
/// Without inode numbers, no two look alike: every sync reopens the file.
#[cfg(not(unix))]
type FileId = u64;
#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> FileId {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sync that fails breaks the syncer for good: its batch and every
    /// later one are answered with the reason.
    #[test]
    fn a_failed_sync_is_final() -> anyhow::Result<()> {
        let calls = Arc::new(Mutex::new(0));
        let c = calls.clone();
        let syncer = Syncer::spawn(Box::new(move || {
            let mut n = c.lock().unwrap();
            *n += 1;
            if *n == 2 {
                Err(std::io::Error::other("EIO"))
            } else {
                Ok(())
            }
        }))?;
        let (tx, rx) = mpsc::channel();
        for i in 0..3 {
            let tx = tx.clone();
            syncer.after_sync(vec![Box::new(move |r| {
                let _ = tx.send((i, r));
            })]);
            // One batch a sync: wait for this one's answer before the next.
            let (j, r) = rx.recv_timeout(std::time::Duration::from_secs(30))?;
            assert_eq!(j, i);
            match i {
                0 => assert!(r.is_ok()),
                _ => assert!(r.is_err_and(|e| e.contains("EIO")), "batch {i}"),
            }
        }
        assert!(syncer.broken().is_some());
        assert_eq!(
            *calls.lock().unwrap(),
            2,
            "no sync is tried once one failed"
        );
        Ok(())
    }

    #[test]
    fn the_wal_is_synced_through_its_own_handle() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("s.db").display().to_string();
        let conn = rusqlite::Connection::open(&db)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (v INTEGER)",
        )?;
        let mut sync = wal_sync(&db);
        sync()?;
        sync()?;
        drop(conn);
        // The last connection removed the WAL: nothing to sync is an error.
        assert!(sync().is_err());
        Ok(())
    }
}
