//! A workflow job's stages, written once for both backends: started with
//! the job's insert, changed with its attempts' ends, settled by a cancel
//! that hands over to an `on_cancel` chain.

use super::exec::{args, Exec};
use super::job_control::{self, reread};
use super::job_sql;
use super::outbox::{self, Outbox};
use super::records::{CancelOutcome, CancelStages};
use super::records::{StepWrite, WorkflowStart};
use super::step_rows as sql;
use super::tally::Tally;
use super::{Millis, StoreError, StoreResult};
use crate::job::JobStatus;

/// Starts the workflow job `w` names, if its insert made it: `false` when
/// the insert answered a job that was there already. Its rows go in one
/// statement.
pub async fn start(
    tx: &mut dyn Exec,
    now: Millis,
    w: &WorkflowStart,
    outbox: &mut Outbox,
) -> StoreResult<bool> {
    let d = tx.dialect();
    let Some(first) = w.steps.first() else {
        return Err(StoreError::Internal("a workflow job with no steps".into()));
    };
    let start = sql::start([
        &d.param(1),
        &d.int4(2),
        &d.param(3),
        &d.int4(4),
        &d.param(5),
        &d.param(6),
    ]);
    let args = args![
        &w.workflow,
        w.version,
        &first.task.name,
        first.task.version,
        &first.task.digest,
        &w.id
    ];
    if tx.execute(&start, args).await? == 0 {
        return Ok(false);
    }
    let rows: Vec<serde_json::Value> = w
        .steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "seq": s.seq, "kind": s.kind.as_str(), "name": s.name,
                "task": s.task.name, "task_version": s.task.version, "digest": s.task.digest,
                "max_attempts": s.max_attempts, "config": s.config_json(),
                "status": s.status.as_str(),
                "started_at": (s.seq == first.seq).then_some(now),
            })
        })
        .collect();
    let cols = [
        ("seq", "int4"),
        ("kind", "text"),
        ("name", "text"),
        ("task", "text"),
        ("task_version", "int4"),
        ("digest", "text"),
        ("max_attempts", "int4"),
        ("config", "text"),
        ("status", "text"),
        ("started_at", "int8"),
    ];
    let names: Vec<String> = cols.iter().map(|(c, _)| format!("s.{c}")).collect();
    let insert = format!(
        "INSERT INTO job_steps (job_id, {}) SELECT $1, {} FROM {} ORDER BY s.o",
        cols.map(|(c, _)| c).join(", "),
        names.join(", "),
        d.json_rows(2, "s", &cols)
    );
    let rows = serde_json::to_string(&rows).map_err(|e| StoreError::Internal(e.to_string()))?;
    tx.execute(&insert, args![&w.id, &rows]).await?;
    outbox.steps(super::step_rows::about(w), &[first.activate()], now);
    Ok(true)
}

/// Writes the stages an attempt's end changed.
pub async fn write(
    tx: &mut dyn Exec,
    now: Millis,
    id: &str,
    steps: &[StepWrite],
) -> StoreResult<()> {
    let d = tx.dialect();
    for w in steps {
        let (started, finished) = w.times(now);
        let error = w.error_json();
        if let Some(r) = &w.row {
            let upsert = sql::upsert([
                &d.param(1),
                &d.int4(2),
                &d.param(3),
                &d.param(4),
                &d.param(5),
                &d.int4(6),
                &d.param(7),
                &d.int4(8),
                &d.param(9),
                &d.param(10),
                &d.int4(11),
                &d.param(12),
                &d.param(13),
                &d.param(14),
                &d.param(15),
            ]);
            let config = r.config_json();
            let args = args![
                id,
                r.seq,
                r.kind.as_str(),
                &r.name,
                &r.task.name,
                r.task.version,
                &r.task.digest,
                r.max_attempts,
                &config,
                w.status.as_str(),
                w.attempts.unwrap_or(0),
                &w.output,
                &error,
                started,
                finished
            ];
            tx.execute(&upsert, args).await?;
            continue;
        }
        let update = sql::update([
            &d.param(1),
            &d.int4(2),
            &d.param(3),
            &d.param(4),
            &d.param(5),
            &d.param(6),
            &d.param(7),
            &d.int4(8),
        ]);
        let args = args![
            w.status.as_str(),
            w.attempts,
            &w.output,
            &error,
            started,
            finished,
            id,
            w.seq
        ];
        tx.execute(&update, args).await?;
    }
    Ok(())
}

/// A cancel of a workflow job (`Write::JobCancelStages`): one queued or
/// waiting settles its stages and hands over to its `on_cancel` chain, if
/// it has one, or ends cancelled; any other is cancelled as any job is.
pub async fn cancel(
    tx: &mut dyn Exec,
    now: Millis,
    c: &CancelStages,
) -> StoreResult<CancelOutcome> {
    let Some((task, input, max)) = c.on_cancel.as_ref() else {
        return cancel_job(tx, now, c).await;
    };
    // Locked, as a plain cancel locks it: a runner's claim of it waits.
    let job = job_control::get(tx, &c.tenant, &c.id, true)
        .await?
        .ok_or(StoreError::NotFound)?;
    if !matches!(job.status, JobStatus::Queued | JobStatus::Waiting) {
        return cancel_job(tx, now, c).await;
    }
    let sql = job_sql::hand_over(tx.dialect());
    let args = args![
        now,
        &task.name,
        task.version,
        &task.digest,
        input.as_str(),
        *max,
        &c.id,
        &c.tenant
    ];
    tx.execute(&sql, args).await?;
    write(tx, now, &c.id, &c.steps).await?;
    let mut tally = Tally::new(now);
    tally.handed_over(&job, &c.steps);
    tx.tally(tally).await?;
    Ok(CancelOutcome::Handed(reread(tx, &c.tenant, &c.id).await?))
}

/// The job's cancel, as any job's, its stages settled with it.
async fn cancel_job(
    tx: &mut dyn Exec,
    now: Millis,
    c: &CancelStages,
) -> StoreResult<CancelOutcome> {
    let out = job_control::cancel(tx, now, &c.tenant, &c.id).await?;
    if let CancelOutcome::Cancelled(j) = &out {
        write(tx, now, &c.id, &c.steps).await?;
        let mut tally = Tally::new(now);
        tally.outbox.steps(outbox::about(j), &c.steps, now);
        tx.tally(tally).await?;
    }
    Ok(out)
}
