//! The outbox's reads on SQLite: rows up to the readable mark (the last
//! row committed and synced, which the writer moves), so that no reader
//! sees an event a power cut could take back; and its pruning.

use super::db;
use crate::store::records::EventHeads;
use crate::store::StoreResult;
use sqlx::SqliteConnection;

/// The last row committed (readable or not yet), 0 when none was.
pub async fn last_written(conn: &mut SqliteConnection) -> StoreResult<i64> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
            .fetch_optional(conn)
            .await
            .map_err(db)?;
    Ok(last.unwrap_or(0))
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
