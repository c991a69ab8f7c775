//! What an operator asks of one job, for both backends: cancel it, queue
//! a waiting one again, run a queued one now. Each moves the job by the
//! transition table (`transition::Move`), guarded by the status it moves
//! from, and counts and reports the move in the same transaction.

use super::dialect::Dialect;
use super::exec::{args, Commit, Exec};
use super::job_sql;
use super::outbox;
use super::records::{CancelOutcome, JobRecord, NewInput};
use super::rows::JobRow;
use super::tally::Tally;
use super::transition::Move;
use super::{JobStore, Millis, StoreError, StoreResult};
use crate::events::EventType;
use crate::job::JobStatus;

/// Where other processes hear that a running job should stop.
pub const CANCEL_CHANNEL: &str = "taskbox_cancel";

/// A job as this transaction sees it; `lock` holds its row until the end
/// (PostgreSQL; SQLite's one writer holds every row).
pub async fn get(
    tx: &mut dyn Exec,
    tenant: &str,
    id: &str,
    lock: bool,
) -> StoreResult<Option<JobRecord>> {
    let sql = job_sql::get(tx.dialect(), lock);
    let row: Option<JobRow> = tx.optional(&sql, args![id, tenant]).await?;
    row.map(JobRecord::try_from).transpose()
}

pub(crate) async fn reread(tx: &mut dyn Exec, tenant: &str, id: &str) -> StoreResult<JobRecord> {
    get(tx, tenant, id, false)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Puts a queued job ($2) first in line, due by `$1`. A parked job (its
/// queue is paused) stays parked, first in line.
fn run_now_sql(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "UPDATE jobs SET urgent = 1, available = CASE available WHEN 2 THEN 2 ELSE 1 END, \
             run_at = MIN(run_at, $1) WHERE id = $2 AND status = 'queued'"
        }
        Dialect::Postgres | Dialect::PostgresMany => {
            "UPDATE jobs SET urgent = TRUE, run_at = LEAST(run_at, $1) \
             WHERE id = $2 AND status = 'queued'"
        }
    }
}

impl dyn JobStore {
    /// Cancels a queued or waiting job now, or asks a running one to stop.
    pub async fn job_cancel(&self, tenant: &str, id: &str) -> StoreResult<CancelOutcome> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move { cancel(tx, now, &tenant, &id).await })
        })
        .await
    }

    /// Queues a waiting job again, with a new input if one is given (and
    /// its result cache key on it).
    pub async fn job_resume(
        &self,
        tenant: &str,
        id: &str,
        input: Option<NewInput>,
    ) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        let job = self
            .write(Commit::PROMPT, move |tx, now| {
                Box::pin(async move { resume(tx, now, &tenant, &id, input).await })
            })
            .await?;
        self.jobs_changed();
        Ok(job)
    }

    /// Puts a queued job first in its tenant's line, due now (run now); a
    /// runner claims it like any other.
    pub async fn job_run_now(&self, tenant: &str, id: &str) -> StoreResult<JobRecord> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        let job = self
            .write(Commit::QUICK, move |tx, now| {
                Box::pin(async move { run_now(tx, now, &tenant, &id).await })
            })
            .await?;
        self.jobs_changed();
        Ok(job)
    }
}

pub(crate) async fn cancel(
    tx: &mut dyn Exec,
    now: Millis,
    tenant: &str,
    id: &str,
) -> StoreResult<CancelOutcome> {
    let job = get(tx, tenant, id, true)
        .await?
        .ok_or(StoreError::NotFound)?;
    let mv = Move::cancel();
    match job.status {
        from if mv.from.contains(&from) => {
            let sql = job_sql::finish_if(tx.dialect(), mv.from);
            tx.execute(&sql, args![mv.to.as_str(), now, id]).await?;
            let mut tally = Tally::new(now);
            tally.moved(tenant, Some(job.status), Some(mv.to), 1);
            tally
                .outbox
                .push(EventType::Cancelled, outbox::about(&job), None);
            tx.tally(tally).await?;
            Ok(CancelOutcome::Cancelled(reread(tx, tenant, id).await?))
        }
        JobStatus::Running => {
            tx.execute(&job_sql::request_cancel(tx.dialect()), args![id])
                .await?;
            // The runner holding it may be in another process: tell it now,
            // not at its next heartbeat (sent when this commits).
            tx.notify(CANCEL_CHANNEL, id).await?;
            Ok(CancelOutcome::Requested(reread(tx, tenant, id).await?))
        }
        _ => Ok(CancelOutcome::AlreadyEnded(job)),
    }
}

pub(crate) async fn resume(
    tx: &mut dyn Exec,
    now: Millis,
    tenant: &str,
    id: &str,
    input: Option<NewInput>,
) -> StoreResult<JobRecord> {
    let job = get(tx, tenant, id, false)
        .await?
        .ok_or(StoreError::NotFound)?;
    let mv = Move::resume();
    if !mv.from.contains(&job.status) {
        return Err(StoreError::Conflict(format!(
            "job {id} is {}; only a waiting job can be resumed",
            job.status
        )));
    }
    // A job in its fallback gets the new input as the fallback's.
    let (input, key) = match &input {
        Some(i) => (Some(i.input.as_str()), i.cache_key.as_ref()),
        None => (None, None),
    };
    let sql = job_sql::resume(tx.dialect(), mv.from);
    let a = args![mv.to.as_str(), now, input, id, key];
    if tx.execute(&sql, a).await? == 1 {
        let mut tally = Tally::new(now);
        tally.moved(tenant, Some(job.status), Some(mv.to), 1);
        tally.outbox.push(
            EventType::Queued,
            outbox::about(&job),
            Some(&outbox::queued_again("resumed", now)),
        );
        tx.tally(tally).await?;
    }
    reread(tx, tenant, id).await
}

pub(crate) async fn run_now(
    tx: &mut dyn Exec,
    now: Millis,
    tenant: &str,
    id: &str,
) -> StoreResult<JobRecord> {
    let job = get(tx, tenant, id, false)
        .await?
        .ok_or(StoreError::NotFound)?;
    if job.status != JobStatus::Queued {
        return Err(StoreError::Conflict(format!(
            "job {} is {}; only a queued job can be run now",
            job.id, job.status
        )));
    }
    if let Some(key) = &job.concurrency_key {
        let a = args![&job.tenant, key, &job.id];
        let busy: Option<String> = tx.scalar(job_sql::KEY_FULL, a).await?;
        if let Some(other) = busy {
            return Err(StoreError::Conflict(format!(
                "the concurrency key {key:?} runs as many jobs as its limit allows (job {other} among them); try again when one ends"
            )));
        }
    }
    tx.execute(run_now_sql(tx.dialect()), args![now, &job.id])
        .await?;
    reread(tx, tenant, id).await
}

impl dyn JobStore {
    /// Takes over the leases of running jobs whose lease expired (their
    /// runner died), without counting a new attempt: the caller decides the
    /// lost attempt like any failed one and finalizes it under the new
    /// lease, so the dead runner's token is fenced out. Rows another
    /// transaction holds are left for the next round.
    pub async fn job_rescue(&self, p: super::RescueParams) -> StoreResult<Vec<super::ClaimedJob>> {
        // Not durable: a take-over lost to a power cut is taken over again.
        self.write(Commit::LAZY, move |tx, now| {
            Box::pin(async move {
                let sql = job_sql::rescue(tx.dialect());
                let token = super::transition::random_token();
                let until = crate::time::after(now, p.lease_ms);
                let a = args![&p.owner, &token, until, p.all_running, now, p.limit];
                let rows: Vec<super::rows::ClaimRow> = tx.all(&sql, a).await?;
                Ok(rows.into_iter().map(super::ClaimedJob::from).collect())
            })
        })
        .await
    }
}
