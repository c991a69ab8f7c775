//! Retention on PostgreSQL: ended jobs past their age deleted with their
//! attempts, one short statement at a time, and components no task uses.

use super::db::Db;
use super::pg;
use crate::store::prune_sql::prunable;
use crate::store::records::{PruneParams, Pruned};
use crate::store::StoreResult;

/// One step of a pass, in one statement: reads the next jobs by id,
/// deletes those past their age and their attempts (an attempt the job's
/// row kept counts as one). The deletes name their
/// rows by `= ANY(ARRAY(…))`: as joins, with a million rows and no fresh
/// statistics, they were planned as hash joins over a scan of the whole
/// table (100 ms a step, 2,500 jobs/s).
pub async fn prune(db: &Db, p: PruneParams) -> StoreResult<Pruned> {
    let (last_id, jobs, attempts): (Option<String>, i64, i64) = sqlx::query_as(&format!(
        "WITH seen AS (SELECT id, {} AS go FROM jobs \
           WHERE id > $1 AND id < $2 ORDER BY id LIMIT $3), \
         gone AS (DELETE FROM jobs WHERE id = ANY(ARRAY(SELECT id FROM seen WHERE go)) \
           RETURNING id, last_attempt IS NOT NULL AS kept), \
         att AS (DELETE FROM attempts WHERE job_id = ANY(ARRAY(SELECT id FROM gone)) \
           RETURNING 1), \
         stp AS (DELETE FROM job_steps WHERE job_id = ANY(ARRAY(SELECT id FROM gone))), \
         cls AS (DELETE FROM job_calls WHERE job_id = ANY(ARRAY(SELECT id FROM gone))) \
         SELECT (SELECT max(id) FROM seen), (SELECT count(*) FROM gone), \
           (SELECT count(*) FROM att) + (SELECT count(*) FROM gone WHERE kept)",
        prunable("$4", "$5")
    ))
    .bind(&p.after_id)
    .bind(&p.below_id)
    .bind(i64::from(p.scan))
    .bind(p.completed_before)
    .bind(p.failed_before)
    .fetch_one(&db.pool)
    .await
    .map_err(pg)?;
    Ok(Pruned {
        jobs: u64::try_from(jobs).unwrap_or(0),
        attempts: u64::try_from(attempts).unwrap_or(0),
        last_id,
    })
}
