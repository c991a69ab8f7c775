//! Redrive on PostgreSQL: failed jobs back to the queue for a new series
//! of attempts, each under its own savepoint.

use super::db::Tx;
use super::jobs::{get_in, reread};
use super::tally;
use super::tenants::{policy, queued_now, within};
use super::{pg, violated, Violation};
use crate::quota::Quotas;
use crate::store::dialect::Dialect;
use crate::store::outbox;
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::transition::Move;
use crate::store::{attempt_sql, job_sql};
use crate::store::{Millis, StoreError, StoreResult};

/// Re-drives failed jobs, each under its own savepoint: one refused leaves
/// the others.
pub async fn redrive(
    tx: &mut Tx,
    now: Millis,
    tenant: &str,
    jobs: Vec<Redrive>,
    defaults: Quotas,
) -> StoreResult<Vec<StoreResult<JobRecord>>> {
    let limit = policy(tx, tenant, &defaults).await?.quotas.max_queued;
    let mut queued = queued_now(tx, tenant).await?;
    let mut out = Vec::with_capacity(jobs.len());
    for r in jobs {
        sqlx::query("SAVEPOINT job")
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
        let res = match within("max_queued", limit, queued, 1) {
            Ok(()) => redrive_one(tx, now, tenant, &r).await,
            Err(e) => Err(e),
        };
        let end = if res.is_ok() {
            queued += 1;
            "RELEASE job"
        } else {
            "ROLLBACK TO job"
        };
        sqlx::query(end).execute(&mut **tx).await.map_err(pg)?;
        out.push(res);
    }
    Ok(out)
}

async fn redrive_one(
    tx: &mut Tx,
    now: Millis,
    tenant: &str,
    r: &Redrive,
) -> StoreResult<JobRecord> {
    let job = get_in(tx, tenant, &r.id)
        .await?
        .ok_or(StoreError::NotFound)?;
    let mv = Move::redrive();
    if !mv.from.contains(&job.status) {
        return Err(StoreError::Conflict(format!(
            "job {} is {}; only a failed job can be retried",
            r.id, job.status
        )));
    }
    let task = r.task.as_ref().unwrap_or(&job.task);
    let stage = r.stage.as_deref();
    sqlx::query(&attempt_sql::KEEP_LAST)
        .bind(&r.id)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let n = sqlx::query(&job_sql::redrive(Dialect::Postgres, mv.from))
    .bind(mv.to.as_str())
    .bind(now)
    .bind(&task.name)
    .bind(i32::try_from(task.version).unwrap_or(i32::MAX))
    .bind(&task.digest)
    .bind(i32::try_from(r.attempts).unwrap_or(i32::MAX))
    .bind(&r.id)
    .bind(tenant)
    .bind(stage.map(|s| &s.0.name))
    .bind(stage.map(|s| i32::try_from(s.0.version).unwrap_or(i32::MAX)))
    .bind(stage.map(|s| &s.0.digest))
    .bind(stage.map(|s| &s.1))
    .bind(&r.cache_key)
    .execute(&mut **tx)
    .await
    .map_err(|e| match violated(&e) {
        Some((Violation::Unique, _)) => StoreError::Conflict(format!(
            "job {} has a unique_key another unfinished job holds; it can be retried once that one ends",
            r.id
        )),
        _ => pg(e),
    })?
    .rows_affected();
    if n == 1 {
        let mut tally = Tally::new(now);
        tally.moved(tenant, Some(job.status), Some(mv.to), 1);
        tally.outbox.redriven(&job, &task.name, now);
        if let Some(s) = stage {
            super::steps::write(tx, now, &r.id, &s.2).await?;
            tally.outbox.steps(outbox::about(&job), &s.2, now);
        } else {
            // A job of one task starts its new series on its own task: the
            // rows of its last series' fallbacks go.
            sqlx::query("DELETE FROM job_steps WHERE job_id = $1")
                .bind(&r.id)
                .execute(&mut **tx)
                .await
                .map_err(pg)?;
        }
        tally::apply(tx, tally).await?;
    }
    reread(tx, tenant, &r.id).await
}
