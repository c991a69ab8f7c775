//! A job's stages on PostgreSQL: read from the pool; started with the
//! job's insert and changed with its attempts' ends, in their transaction.

use super::db::Tx;
use super::{pg, tally};
use crate::job::JobStatus;
use crate::store::dialect::Dialect;
use crate::store::job_sql;
use crate::store::outbox::{self, Outbox};
use crate::store::records::{CancelOutcome, CancelStages};
use crate::store::step_rows::{self as sql, StepWrite, WorkflowStart};
use crate::store::tally::Tally;
use crate::store::{Millis, StoreError, StoreResult};

fn int4(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// Starts the workflow job `w` names, if its insert made it: `false` when
/// the insert answered a job that was there already.
pub async fn start(
    tx: &mut Tx,
    now: Millis,
    w: &WorkflowStart,
    outbox: &mut Outbox,
) -> StoreResult<bool> {
    let Some(first) = w.steps.first() else {
        return Err(StoreError::Internal("a workflow job with no steps".into()));
    };
    let n = sqlx::query(&sql::start([
        "$1", "$2::int4", "$3", "$4::int4", "$5", "$6",
    ]))
    .bind(&w.workflow)
    .bind(int4(w.version))
    .bind(&first.task.name)
    .bind(int4(first.task.version))
    .bind(&first.task.digest)
    .bind(&w.id)
    .execute(&mut **tx)
    .await
    .map_err(pg)?
    .rows_affected();
    if n == 0 {
        return Ok(false);
    }
    let cols =
        |f: fn(&crate::store::StepRecord) -> i32| w.steps.iter().map(f).collect::<Vec<i32>>();
    let texts =
        |f: fn(&crate::store::StepRecord) -> String| w.steps.iter().map(f).collect::<Vec<String>>();
    let started: Vec<Option<i64>> = w
        .steps
        .iter()
        .map(|s| (s.seq == first.seq).then_some(now))
        .collect();
    sqlx::query(
        "INSERT INTO job_steps (job_id, seq, kind, name, task, task_version, digest, \
         max_attempts, config, status, started_at) \
         SELECT $1, * FROM unnest($2::int4[], $3::text[], $4::text[], $5::text[], $6::int4[], \
         $7::text[], $8::int4[], $9::text[], $10::text[], $11::int8[])",
    )
    .bind(&w.id)
    .bind(cols(|s| int4(s.seq)))
    .bind(texts(|s| s.kind.as_str().to_owned()))
    .bind(texts(|s| s.name.clone()))
    .bind(texts(|s| s.task.name.clone()))
    .bind(cols(|s| int4(s.task.version)))
    .bind(texts(|s| s.task.digest.clone()))
    .bind(cols(|s| int4(s.max_attempts)))
    .bind(texts(|s| s.config_json()))
    .bind(texts(|s| s.status.as_str().to_owned()))
    .bind(started)
    .execute(&mut **tx)
    .await
    .map_err(pg)?;
    outbox.steps(w.about(), &[first.activate()], now);
    Ok(true)
}

/// Writes the stages an attempt's end changed.
pub async fn write(tx: &mut Tx, now: Millis, id: &str, steps: &[StepWrite]) -> StoreResult<()> {
    for w in steps {
        let (started, finished) = w.times(now);
        if let Some(r) = &w.row {
            sqlx::query(&sql::upsert([
                "$1",
                "$2::int4",
                "$3",
                "$4",
                "$5",
                "$6::int4",
                "$7",
                "$8::int4",
                "$9",
                "$10",
                "$11::int4",
                "$12",
                "$13",
                "$14::int8",
                "$15::int8",
            ]))
            .bind(id)
            .bind(int4(r.seq))
            .bind(r.kind.as_str())
            .bind(&r.name)
            .bind(&r.task.name)
            .bind(int4(r.task.version))
            .bind(&r.task.digest)
            .bind(int4(r.max_attempts))
            .bind(r.config_json())
            .bind(w.status.as_str())
            .bind(int4(w.attempts.unwrap_or(0)))
            .bind(&w.output)
            .bind(w.error_json())
            .bind(started)
            .bind(finished)
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
            continue;
        }
        sqlx::query(&sql::update([
            "$1", "$2::int4", "$3", "$4", "$5::int8", "$6::int8", "$7", "$8::int4",
        ]))
        .bind(w.status.as_str())
        .bind(w.attempts.map(int4))
        .bind(&w.output)
        .bind(w.error_json())
        .bind(started)
        .bind(finished)
        .bind(id)
        .bind(int4(w.seq))
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    }
    Ok(())
}

/// The job's cancel, as any job's.
async fn cancel_job(tx: &mut Tx, now: Millis, c: &CancelStages) -> StoreResult<CancelOutcome> {
    let mut ex = super::exec::PgExec(&mut *tx);
    crate::store::job_control::cancel(&mut ex, now, &c.tenant, &c.id).await
}

/// A cancel of a workflow job (`Write::JobCancelStages`): one queued or
/// waiting settles its stages and hands over to its `on_cancel` chain, if
/// it has one, or ends cancelled; any other is cancelled as any job is.
pub async fn cancel(tx: &mut Tx, now: Millis, c: &CancelStages) -> StoreResult<CancelOutcome> {
    let Some((task, input, max)) = c.on_cancel.as_ref() else {
        let out = cancel_job(tx, now, c).await?;
        if let CancelOutcome::Cancelled(j) = &out {
            write(tx, now, &c.id, &c.steps).await?;
            let mut tally = Tally::new(now);
            tally.outbox.steps(outbox::about(j), &c.steps, now);
            tally::apply(tx, tally).await?;
        }
        return Ok(out);
    };
    // Locked, as a plain cancel locks it: a runner's claim of it waits.
    let job = super::jobs::get_for_update(tx, &c.tenant, &c.id).await?;
    if !matches!(job.status, JobStatus::Queued | JobStatus::Waiting) {
        return cancel_job(tx, now, c).await;
    }
    sqlx::query(&job_sql::hand_over(Dialect::Postgres))
        .bind(now)
        .bind(&task.name)
        .bind(int4(task.version))
        .bind(&task.digest)
        .bind(input)
        .bind(int4(*max))
        .bind(&c.id)
        .bind(&c.tenant)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    write(tx, now, &c.id, &c.steps).await?;
    let mut tally = Tally::new(now);
    tally.handed_over(&job, &c.steps);
    tally::apply(tx, tally).await?;
    Ok(CancelOutcome::Handed(
        super::jobs::reread(tx, &c.tenant, &c.id).await?,
    ))
}
