//! Redrive on SQLite: failed jobs back to the queue for a new series of
//! attempts, on the writer's connection, each on its own.

use super::jobs::{get, reread, Tenants};
use super::tally::Apply;
use super::tenants::within;
use super::{constraint, wdb, Constraint};
use crate::quota::Quotas;
use crate::store::dialect::Dialect;
use crate::store::outbox;
use crate::store::records::*;
use crate::store::tally::Tally;
use crate::store::transition::Move;
use crate::store::{attempt_sql, job_sql};
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection};

/// Re-drives failed jobs, each on its own: one refused leaves the others.
pub fn redrive(
    conn: &Connection,
    now: Millis,
    tenant: &str,
    jobs: Vec<Redrive>,
    defaults: &Quotas,
) -> StoreResult<Vec<StoreResult<JobRecord>>> {
    let mut tally = Tally::new(now);
    let mut tenants = Tenants::default();
    let mut out = Vec::with_capacity(jobs.len());
    for r in jobs {
        out.push(redrive_one(
            conn,
            now,
            tenant,
            r,
            defaults,
            &mut tally,
            &mut tenants,
        ));
    }
    tally.apply(conn)?;
    Ok(out)
}

fn redrive_one(
    conn: &Connection,
    now: Millis,
    tenant: &str,
    r: Redrive,
    defaults: &Quotas,
    tally: &mut Tally,
    tenants: &mut Tenants,
) -> StoreResult<JobRecord> {
    let job = get(conn, tenant, &r.id)?.ok_or(StoreError::NotFound)?;
    let mv = Move::redrive();
    if !mv.from.contains(&job.status) {
        return Err(StoreError::Conflict(format!(
            "job {} is {}; only a failed job can be retried",
            r.id, job.status
        )));
    }
    let (quotas, queued) = tenants.of(conn, tenant, defaults)?;
    within(
        "max_queued",
        quotas.max_queued,
        queued + tally.pending_queued(tenant),
        1,
    )?;
    let task = r.task.as_ref().unwrap_or(&job.task);
    let stage = r.stage.as_deref();
    super::shared(conn, &attempt_sql::KEEP_LAST)?
        .execute([&r.id])
        .map_err(wdb)?;
    let n = conn
        .prepare_cached(&job_sql::redrive(Dialect::Sqlite, mv.from))
        .and_then(|mut s| {
            s.execute(params![
                mv.to.as_str(),
                now,
                task.name,
                task.version,
                task.digest,
                r.attempts,
                r.id,
                tenant,
                stage.map(|s| &s.0.name),
                stage.map(|s| s.0.version),
                stage.map(|s| &s.0.digest),
                stage.map(|s| &s.1),
                r.cache_key,
            ])
        })
        .map_err(|e| match constraint(&e) {
            Some(Constraint::Unique) => StoreError::Conflict(format!(
                "job {} has a unique_key another unfinished job holds; it can be retried once that one ends",
                r.id
            )),
            _ => wdb(e),
        })?;
    if n == 1 {
        tally.moved(tenant, Some(job.status), Some(mv.to), 1);
        tally.outbox.redriven(&job, &task.name, now);
        if let Some(s) = stage {
            super::steps::write(conn, now, &r.id, &s.2)?;
            tally.outbox.steps(outbox::about(&job), &s.2, now);
        } else {
            // A job of one task starts its new series on its own task: the
            // rows of its last series' fallbacks go.
            conn.prepare_cached("DELETE FROM job_steps WHERE job_id = ?1")
                .and_then(|mut s| s.execute([&r.id]))
                .map_err(wdb)?;
        }
    }
    reread(conn, tenant, &r.id)
}
