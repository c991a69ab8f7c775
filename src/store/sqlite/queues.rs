//! Paused queues on SQLite: a paused queue's queued jobs are parked
//! (`available = 2`), out of both claim indexes, so that claims never read
//! them; resuming puts them back. Parking and unparking go in chunks, one
//! write each, so that a queue of a million jobs never holds the writer
//! for long; what a chunked pause misses (a job queued again between its
//! chunks) the claim parks when it meets it (`claim::tenant_rows`).

use super::wdb;
use crate::store::{queue_rows, Millis, StoreResult};
use rusqlite::{params, Connection};

/// Most jobs parked or unparked in one write.
pub const CHUNK: i64 = 2000;

/// Marks the queue paused; `false` when it was already.
pub fn pause(conn: &Connection, now: Millis, tenant: &str, queue: &str) -> StoreResult<bool> {
    let n = super::shared(conn, queue_rows::PAUSE)?
        .execute(params![tenant, queue, now])
        .map_err(wdb)?;
    Ok(n == 1)
}

/// Marks the queue not paused; `false` when it was not.
pub fn resume(conn: &Connection, tenant: &str, queue: &str) -> StoreResult<bool> {
    let n = super::shared(conn, queue_rows::RESUME)?
        .execute(params![tenant, queue])
        .map_err(wdb)?;
    Ok(n == 1)
}

/// Parks up to `CHUNK` of the queue's queued jobs while it is paused (a
/// resume in between stops it); answers how many. Claimable ones are read
/// in the claim's index, scheduled ones in the scheduler's.
pub fn park(conn: &Connection, tenant: &str, queue: &str) -> StoreResult<usize> {
    let mut parked = 0;
    for (index, available) in [("jobs_available", 1), ("jobs_scheduled", 0)] {
        let want = CHUNK - parked as i64;
        if want <= 0 {
            break;
        }
        parked += conn
            .prepare_cached(&format!(
                "UPDATE jobs SET available = 2 WHERE rowid IN ( \
                   SELECT rowid FROM jobs INDEXED BY {index} \
                   WHERE status = 'queued' AND available = {available} AND tenant = ?1 \
                     AND queue = ?2 LIMIT ?3) \
                 AND EXISTS (SELECT 1 FROM paused_queues WHERE tenant = ?1 AND queue = ?2)"
            ))
            .and_then(|mut s| s.execute(params![tenant, queue, want]))
            .map_err(wdb)?;
    }
    Ok(parked)
}

/// Unparks up to `CHUNK` of the queue's parked jobs unless it was paused
/// again; answers how many. Those due are claimable at once.
pub fn unpark(conn: &Connection, now: Millis, tenant: &str, queue: &str) -> StoreResult<usize> {
    conn.prepare_cached(
        "UPDATE jobs SET available = CASE WHEN run_at <= ?3 THEN 1 ELSE 0 END \
         WHERE rowid IN (SELECT rowid FROM jobs INDEXED BY jobs_parked \
           WHERE tenant = ?1 AND queue = ?2 AND status = 'queued' AND available = 2 LIMIT ?4) \
         AND NOT EXISTS (SELECT 1 FROM paused_queues WHERE tenant = ?1 AND queue = ?2)",
    )
    .and_then(|mut s| s.execute(params![tenant, queue, now, CHUNK]))
    .map_err(wdb)
}

/// A tenant's paused queues, by name.
pub fn paused(conn: &Connection, tenant: &str) -> StoreResult<Vec<String>> {
    super::shared(conn, queue_rows::PAUSED)?
        .query_map([tenant], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(wdb)
}

/// Unparks up to `CHUNK` parked jobs whose queue is not paused (a resume
/// cut short by a crash left them); answers how many. Reads every parked
/// job, so it is run now and then, not per claim.
pub fn tidy(conn: &Connection, now: Millis) -> StoreResult<usize> {
    conn.prepare_cached(
        "UPDATE jobs SET available = CASE WHEN run_at <= ?1 THEN 1 ELSE 0 END \
         WHERE rowid IN (SELECT rowid FROM jobs j INDEXED BY jobs_parked \
           WHERE status = 'queued' AND available = 2 AND NOT EXISTS ( \
             SELECT 1 FROM paused_queues p WHERE p.tenant = j.tenant AND p.queue = j.queue) \
           LIMIT ?2)",
    )
    .and_then(|mut s| s.execute(params![now, CHUNK]))
    .map_err(wdb)
}
