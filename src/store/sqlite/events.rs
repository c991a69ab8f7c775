//! The outbox's reads on SQLite: rows up to the readable mark (the last
//! row committed and synced, which the writer moves), so that no reader
//! sees an event a power cut could take back; and its pruning.

use super::{db, wdb};
use crate::store::records::{EventColumns, EventHeads, EventRow};
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection};
use sqlx::SqliteConnection;

fn rows(read: Vec<EventColumns>) -> Vec<EventRow> {
    read.into_iter().map(EventRow::from).collect()
}

/// The last row committed (readable or not yet), 0 when none was.
pub async fn last_written(conn: &mut SqliteConnection) -> StoreResult<i64> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
            .fetch_optional(conn)
            .await
            .map_err(db)?;
    Ok(last.unwrap_or(0))
}

pub async fn read(
    conn: &mut SqliteConnection,
    readable: i64,
    after: i64,
    limit: u32,
) -> StoreResult<Vec<EventRow>> {
    let read: Vec<EventColumns> = sqlx::query_as(
        "SELECT gseq, tenant, seq, n, at, body FROM events \
         WHERE gseq > ?1 AND gseq <= ?2 ORDER BY gseq LIMIT ?3",
    )
    .bind(after)
    .bind(readable)
    .bind(limit)
    .fetch_all(conn)
    .await
    .map_err(db)?;
    Ok(rows(read))
}

pub async fn read_tenant(
    conn: &mut SqliteConnection,
    readable: i64,
    tenant: &str,
    after: u64,
    limit: u32,
) -> StoreResult<Vec<EventRow>> {
    let read: Vec<EventColumns> = sqlx::query_as(
        "SELECT gseq, tenant, seq, n, at, body FROM events \
         WHERE tenant = ?1 AND seq > ?2 AND gseq <= ?3 ORDER BY seq LIMIT ?4",
    )
    .bind(tenant)
    .bind(i64::try_from(after).unwrap_or(i64::MAX))
    .bind(readable)
    .bind(limit)
    .fetch_all(conn)
    .await
    .map_err(db)?;
    Ok(rows(read))
}

pub async fn heads(
    conn: &mut SqliteConnection,
    readable: i64,
    tenant: Option<&str>,
) -> StoreResult<EventHeads> {
    let Some(tenant) = tenant else {
        return Ok(EventHeads {
            gseq: readable,
            ..EventHeads::default()
        });
    };
    // The last readable event; when none is (all pruned, or none durable
    // yet), the one before the tenant's first row, or its head once every
    // row is gone.
    let (seq, first): (i64, Option<i64>) = sqlx::query_as(
        "SELECT coalesce( \
           (SELECT max(seq) FROM events WHERE tenant = ?1 AND gseq <= ?2), \
           (SELECT min(seq - n) FROM events WHERE tenant = ?1), \
           (SELECT seq FROM event_heads WHERE tenant = ?1), 0), \
         (SELECT min(seq - n + 1) FROM events WHERE tenant = ?1)",
    )
    .bind(tenant)
    .bind(readable)
    .fetch_one(conn)
    .await
    .map_err(db)?;
    let seq = u64::try_from(seq).unwrap_or(0);
    Ok(EventHeads {
        gseq: readable,
        seq,
        first: first.and_then(|f| u64::try_from(f).ok()).unwrap_or(seq + 1),
    })
}

/// Deletes up to `limit` of the oldest rows, those recorded before `before`.
pub fn prune(conn: &Connection, before: Millis, limit: u32) -> StoreResult<u64> {
    let n = conn
        .prepare_cached(
            "DELETE FROM events WHERE gseq IN \
             (SELECT gseq FROM events ORDER BY gseq LIMIT ?1) AND at < ?2",
        )
        .and_then(|mut s| s.execute(params![limit, before]))
        .map_err(wdb)?;
    Ok(n as u64)
}
