//! Retention on SQLite: ended jobs past their age deleted with their
//! attempts, a short write at a time, and components no task uses.

use super::{db, wdb};
use crate::store::prune_sql::prunable;
use crate::store::{Millis, PruneParams, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

/// The step's jobs in id order, each with whether it may go; read on a
/// reader's connection, so that the writer only deletes.
pub async fn candidates(
    conn: &mut sqlx::SqliteConnection,
    p: &PruneParams,
) -> StoreResult<Vec<(String, bool)>> {
    sqlx::query_as(&format!(
        "SELECT id, {} FROM jobs WHERE id > ?1 AND id < ?2 ORDER BY id LIMIT ?3",
        prunable("?4", "?5")
    ))
    .bind(&p.after_id)
    .bind(&p.below_id)
    .bind(i64::from(p.scan))
    .bind(p.completed_before)
    .bind(p.failed_before)
    .fetch_all(conn)
    .await
    .map_err(db)
}

/// Deletes the given jobs that are still prunable (a redrive may have
/// queued one again since it was read), and their attempts; answers how
/// many of each (an attempt the job's row kept counts as one). A workflow job's stages and its calls go with it.
pub fn delete(
    conn: &Connection,
    ids: &[String],
    completed_before: Option<Millis>,
    failed_before: Option<Millis>,
) -> StoreResult<(u64, u64)> {
    let mut job = conn
        .prepare_cached(&format!(
            "DELETE FROM jobs WHERE id = ?1 AND {} RETURNING last_attempt IS NOT NULL",
            prunable("?2", "?3")
        ))
        .map_err(wdb)?;
    let mut attempts = conn
        .prepare_cached("DELETE FROM attempts WHERE job_id = ?1")
        .map_err(wdb)?;
    let mut steps = conn
        .prepare_cached("DELETE FROM job_steps WHERE job_id = ?1")
        .map_err(wdb)?;
    let mut calls = conn
        .prepare_cached("DELETE FROM job_calls WHERE job_id = ?1")
        .map_err(wdb)?;
    let (mut jobs, mut rows) = (0, 0);
    for id in ids {
        // Whether the job's row kept its last attempt: one more gone.
        let kept: Option<bool> = job
            .query_row(params![id, completed_before, failed_before], |r| r.get(0))
            .optional()
            .map_err(wdb)?;
        if let Some(kept) = kept {
            jobs += 1;
            rows += u64::from(kept) + attempts.execute([id]).map_err(wdb)? as u64;
            steps.execute([id]).map_err(wdb)?;
            calls.execute([id]).map_err(wdb)?;
        }
    }
    Ok((jobs, rows))
}
