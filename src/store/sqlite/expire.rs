//! Expiry on SQLite: queued jobs past their `expire_after_ms` fail with
//! kind `expired`, each with its task's `on_fail` job.

use super::jobs::{insert_one, Tenants};
use super::tally::{Apply, Tally};
use super::wdb;
use crate::job::JobError;
use crate::store::ending_sql::{status_in, Dialect};
use crate::store::records::Expire;
use crate::store::transition::Move;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

/// The queued jobs past their time, by the expiry index (?1 now, ?2 limit).
pub const EXPIRING: &str = "SELECT id, tenant, task, task_version, queue, attempts \
     FROM jobs INDEXED BY jobs_expiry \
     WHERE status = 'queued' AND expire_after_ms IS NOT NULL \
       AND run_at + expire_after_ms <= ?1 LIMIT ?2";

/// Fails each of `jobs` still queued past its time, with its `on_fail`
/// job; answers how many.
pub fn expire(conn: &Connection, now: Millis, jobs: Vec<Expire>) -> StoreResult<u64> {
    let mv = Move::expire();
    let error = serde_json::to_string(&JobError::expired()).map_err(|e| {
        crate::store::StoreError::Internal(format!("cannot write an error as JSON: {e}"))
    })?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "UPDATE jobs SET status = ?1, finished_at = ?2, error = ?3, available = 0, \
             urgent = 0 \
             WHERE id = ?4 AND status = 'queued' AND expire_after_ms IS NOT NULL \
               AND run_at + expire_after_ms <= ?2 AND {} \
             RETURNING id, tenant, task, queue, attempts",
            status_in(Dialect::Sqlite, mv.from)
        ))
        .map_err(wdb)?;
    let mut gone = Vec::with_capacity(jobs.len());
    let mut on_fail = Vec::new();
    for job in jobs {
        let row: Option<(String, String, String, String, i64)> = stmt
            .query_row(params![mv.to.as_str(), now, error, job.id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()
            .map_err(wdb)?;
        if let Some(row) = row {
            gone.push(row);
            on_fail.extend(job.on_fail);
        }
    }
    let mut tally = Tally::new(now);
    for (_, tenant, ..) in &gone {
        tally.moved(tenant, Some(mv.from[0]), Some(mv.to), 1);
    }
    tally.outbox.expired(&gone);
    let (mut tenants, none) = (Tenants::default(), Tally::new(now));
    for cb in on_fail {
        insert_one(conn, now, cb, None, &mut tally, &mut tenants, &none)?;
    }
    tally.apply(conn)?;
    Ok(gone.len() as u64)
}
