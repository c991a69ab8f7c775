//! Redrive, written once for both backends: failed jobs back to the queue
//! for a new series of attempts, each under its own savepoint and its
//! tenant's `max_queued`.

use super::attempt_sql;
use super::exec::{args, Commit, DbError, Exec};
use super::insert::Room;
use super::job_control::{get, reread};
use super::job_sql;
use super::outbox;
use super::records::{JobRecord, Redrive};
use super::stages;
use super::tally::Tally;
use super::transition::Move;
use super::{JobStore, Millis, StoreError, StoreResult};
use crate::quota::Quotas;

/// Most jobs a request's redrive writes as one prompt write (SQLite's
/// group commit); more are a bulk write, which cuts ahead of nothing.
const PROMPT_JOBS: usize = 64;

/// Re-drives failed jobs, each under its own savepoint: one refused
/// leaves the others.
pub async fn run(
    tx: &mut dyn Exec,
    now: Millis,
    tenant: &str,
    jobs: Vec<Redrive>,
    defaults: &Quotas,
) -> StoreResult<Vec<StoreResult<JobRecord>>> {
    let mut tally = Tally::new(now);
    let mut room = Room::new(defaults);
    let mut out = Vec::with_capacity(jobs.len());
    for r in jobs {
        tx.execute("SAVEPOINT job", &[]).await?;
        let mut own = Tally::new(now);
        let res = match room.admit(tx, tenant, &[&tally]).await {
            Ok(()) => one(tx, now, tenant, &r, &mut own).await,
            Err(e) => Err(e),
        };
        if res.is_ok() {
            tally.absorb(own);
        } else {
            tx.execute("ROLLBACK TO SAVEPOINT job", &[]).await?;
        }
        tx.execute("RELEASE SAVEPOINT job", &[]).await?;
        out.push(res);
    }
    tx.tally(tally).await?;
    Ok(out)
}

async fn one(
    tx: &mut dyn Exec,
    now: Millis,
    tenant: &str,
    r: &Redrive,
    tally: &mut Tally,
) -> StoreResult<JobRecord> {
    let job = get(tx, tenant, &r.id, false)
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
    tx.execute(&attempt_sql::KEEP_LAST, args![&r.id]).await?;
    let sql = job_sql::redrive(tx.dialect(), mv.from);
    let args = args![
        mv.to.as_str(),
        now,
        &task.name,
        task.version,
        &task.digest,
        r.attempts,
        &r.id,
        tenant,
        stage.map(|s| &s.0.name),
        stage.map(|s| s.0.version),
        stage.map(|s| &s.0.digest),
        stage.map(|s| &s.1),
        &r.cache_key
    ];
    let n = tx.execute(&sql, args).await.map_err(|e| match e {
        DbError::Unique(_) => StoreError::Conflict(format!(
            "job {} has a unique_key another unfinished job holds; it can be retried once that one ends",
            r.id
        )),
        e => e.into(),
    })?;
    if n == 1 {
        tally.moved(tenant, Some(job.status), Some(mv.to), 1);
        tally.outbox.redriven(&job, &task.name, now);
        if let Some(s) = stage {
            stages::write(tx, now, &r.id, &s.2).await?;
            tally.outbox.steps(outbox::about(&job), &s.2, now);
        } else {
            // A job of one task starts its new series on its own task: the
            // rows of its last series' fallbacks go.
            tx.execute("DELETE FROM job_steps WHERE job_id = $1", args![&r.id])
                .await?;
        }
    }
    reread(tx, tenant, &r.id).await
}

impl dyn JobStore {
    /// Re-drives failed jobs of a tenant's, each under its own guard: back
    /// to the queue, due now, for a new series of attempts after those
    /// made (`max_attempts` = attempts + `Redrive::attempts`), with the
    /// error, output, deadline's clock and fallback of the last series
    /// cleared, within the tenant's `max_queued`. A job that is not failed
    /// answers `Conflict`, one that is not the tenant's `NotFound`; a
    /// unique key another unfinished job holds, `Conflict`.
    pub async fn job_redrive(
        &self,
        tenant: &str,
        jobs: Vec<Redrive>,
    ) -> StoreResult<Vec<StoreResult<JobRecord>>> {
        let how = if jobs.len() <= PROMPT_JOBS {
            Commit::PROMPT
        } else {
            Commit::BULK
        };
        let (tenant, defaults) = (tenant.to_owned(), self.defaults());
        let out = self
            .write(how, move |tx, now| {
                Box::pin(async move { run(tx, now, &tenant, jobs, &defaults).await })
            })
            .await?;
        self.jobs_changed();
        Ok(out)
    }
}
