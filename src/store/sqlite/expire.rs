//! Expiry on SQLite: queued jobs past their `expire_after_ms` fail with
//! kind `expired`, a bounded number per write.

use super::tally::{Apply, Tally};
use super::wdb;
use crate::job::JobError;
use crate::store::ending_sql::{status_in, Dialect};
use crate::store::transition::Move;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection};

/// Fails up to `limit` expired jobs; answers how many.
pub fn expire(conn: &Connection, now: Millis, limit: u32) -> StoreResult<u64> {
    let mv = Move::expire();
    let error = serde_json::to_string(&JobError::expired()).map_err(|e| {
        crate::store::StoreError::Internal(format!("cannot write an error as JSON: {e}"))
    })?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "UPDATE jobs SET status = ?1, finished_at = ?2, error = ?3, available = 0, \
             urgent = 0 \
             WHERE rowid IN (SELECT rowid FROM jobs INDEXED BY jobs_expiry \
               WHERE status = 'queued' AND expire_after_ms IS NOT NULL \
                 AND run_at + expire_after_ms <= ?2 LIMIT ?4) AND {} \
             RETURNING id, tenant, task, queue, attempts",
            status_in(Dialect::Sqlite, mv.from)
        ))
        .map_err(wdb)?;
    let gone: Vec<(String, String, String, String, i64)> = stmt
        .query_map(params![mv.to.as_str(), now, error, limit], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(wdb)?;
    let mut tally = Tally::new(now);
    for (_, tenant, ..) in &gone {
        tally.moved(tenant, Some(mv.from[0]), Some(mv.to), 1);
    }
    tally.outbox.expired(&gone);
    tally.apply(conn)?;
    Ok(gone.len() as u64)
}
