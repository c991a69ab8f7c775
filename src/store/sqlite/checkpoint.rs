//! Copies the WAL back into the database file on a thread of its own, so
//! that the writer never does it inside a commit.
//!
//! SQLite's automatic checkpoint runs in the connection that commits: every
//! thousand pages or so, one commit of the writer's also copied those
//! pages into the database file and synced it, and every request waiting
//! for the writer waited for that too (3–15 ms under load, many times a
//! second). A passive checkpoint from another connection takes no lock the
//! writer needs, so the writer only ever syncs the WAL. Its own automatic
//! checkpoint stays, set far higher, for the case where this thread
//! falls behind.

use crate::store::Durability;
use rusqlite::Connection;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the WAL is copied back.
const EVERY: Duration = Duration::from_millis(100);
/// WAL pages after which the writer checkpoints by itself: only when this
/// thread cannot keep up (64 MiB of 4 KiB pages).
pub(super) const WRITER_FALLBACK_PAGES: u32 = 16_384;

/// The checkpointing thread; dropping it stops the thread and waits for it.
pub(super) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on a connection of its own to `path`.
    pub(super) fn spawn(path: &str, durability: Durability) -> std::io::Result<Checkpointer> {
        let conn = open(path, durability).map_err(std::io::Error::other)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("taskbox-checkpoint".into())
            .spawn(move || run(conn, stopped))?;
        Ok(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn open(path: &str, durability: Durability) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    // It only waits when another checkpoint runs (the writer's fallback).
    conn.busy_timeout(Duration::from_millis(100))?;
    // The copy is synced as the writer's commits are.
    let synchronous = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {synchronous}; PRAGMA wal_autocheckpoint = 0;"
    ))?;
    Ok(conn)
}

fn run(conn: Connection, stopped: mpsc::Receiver<()>) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EVERY) {
        // (busy, pages in the WAL, pages copied): a busy answer only means
        // the next round copies more.
        let r = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
            ))
        });
        match r {
            Ok((_, wal, copied)) => tracing::trace!(wal, copied, "checkpoint"),
            Err(e) => tracing::warn!(error = %e, "checkpoint failed; the next one tries again"),
        }
    }
    if let Err((_, e)) = conn.close() {
        tracing::warn!(error = %e, "the checkpoint connection did not close cleanly");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's commits stay in the WAL (it never checkpoints here);
    /// the thread copies them into the database file.
    #[test]
    fn the_wal_is_copied_back_by_the_thread() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("c.db").display().to_string();
        let writer = Connection::open(&path)?;
        writer.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; \
             CREATE TABLE t (v BLOB); \
             INSERT INTO t SELECT zeroblob(4000) FROM \
               (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) \
                SELECT i FROM n);",
        )?;
        let file_pages = || std::fs::metadata(&path).map_or(0, |m| m.len() / 4096);
        assert!(file_pages() < 10, "the writer checkpointed by itself");
        let _c = Checkpointer::spawn(&path, Durability::Normal)?;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while file_pages() < 200 {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread did not copy the WAL back ({} pages in the file)",
                file_pages()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}
