//! A job's stages on SQLite: read on a reader; started with the job's
//! insert and changed with its attempts' ends, on the writer.

use super::jobs::{get, reread};
use super::tally::Apply;
use super::wdb;
use crate::job::JobStatus;
use crate::store::dialect::Dialect;
use crate::store::job_sql;
use crate::store::outbox::{self, Outbox};
use crate::store::records::{CancelOutcome, CancelStages};
use crate::store::step_rows::{self as sql, StepWrite, WorkflowStart};
use crate::store::tally::Tally;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection};

/// Starts the workflow job `w` names, if its insert made it: `false` when
/// the insert answered a job that was there already.
pub fn start(
    conn: &Connection,
    now: Millis,
    w: &WorkflowStart,
    outbox: &mut Outbox,
) -> StoreResult<bool> {
    let Some(first) = w.steps.first() else {
        return Err(StoreError::Internal("a workflow job with no steps".into()));
    };
    let n = conn
        .prepare_cached(&sql::start(["?1", "?2", "?3", "?4", "?5", "?6"]))
        .and_then(|mut s| {
            s.execute(params![
                w.workflow,
                w.version,
                first.task.name,
                first.task.version,
                first.task.digest,
                w.id
            ])
        })
        .map_err(wdb)?;
    if n == 0 {
        return Ok(false);
    }
    let mut insert = conn
        .prepare_cached(&sql::insert([
            "?1", "?2", "?3", "?4", "?5", "?6", "?7", "?8", "?9", "?10", "?11",
        ]))
        .map_err(wdb)?;
    for s in &w.steps {
        let active = s.seq == first.seq;
        insert
            .execute(params![
                w.id,
                s.seq,
                s.kind.as_str(),
                s.name,
                s.task.name,
                s.task.version,
                s.task.digest,
                s.max_attempts,
                s.config_json(),
                s.status.as_str(),
                active.then_some(now),
            ])
            .map_err(wdb)?;
    }
    outbox.steps(w.about(), &[first.activate()], now);
    Ok(true)
}

/// Writes the stages an attempt's end changed.
pub fn write(conn: &Connection, now: Millis, id: &str, steps: &[StepWrite]) -> StoreResult<()> {
    if steps.is_empty() {
        return Ok(());
    }
    let mut update = conn
        .prepare_cached(&sql::update([
            "?1", "?2", "?3", "?4", "?5", "?6", "?7", "?8",
        ]))
        .map_err(wdb)?;
    for w in steps {
        let (started, finished) = w.times(now);
        if let Some(r) = &w.row {
            conn.prepare_cached(&sql::upsert([
                "?1", "?2", "?3", "?4", "?5", "?6", "?7", "?8", "?9", "?10", "?11", "?12", "?13",
                "?14", "?15",
            ]))
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    r.seq,
                    r.kind.as_str(),
                    r.name,
                    r.task.name,
                    r.task.version,
                    r.task.digest,
                    r.max_attempts,
                    r.config_json(),
                    w.status.as_str(),
                    w.attempts.unwrap_or(0),
                    w.output,
                    w.error_json(),
                    started,
                    finished
                ])
            })
            .map_err(wdb)?;
            continue;
        }
        update
            .execute(params![
                w.status.as_str(),
                w.attempts,
                w.output,
                w.error_json(),
                started,
                finished,
                id,
                w.seq
            ])
            .map_err(wdb)?;
    }
    Ok(())
}

/// A cancel of a workflow job (`Write::JobCancelStages`): one queued or
/// waiting settles its stages and hands over to its `on_cancel` chain, if
/// it has one, or ends cancelled; any other is cancelled as any job is.
pub fn cancel(conn: &mut Connection, now: Millis, c: &CancelStages) -> StoreResult<CancelOutcome> {
    let job = get(conn, &c.tenant, &c.id)?.ok_or(StoreError::NotFound)?;
    let waiting = matches!(job.status, JobStatus::Queued | JobStatus::Waiting);
    let Some((task, input, max)) = c.on_cancel.as_ref().filter(|_| waiting) else {
        let tx = &mut super::exec::WriterExec { conn };
        let out = super::exec::block(crate::store::job_control::cancel(tx, now, &c.tenant, &c.id))?;
        if matches!(out, CancelOutcome::Cancelled(_)) {
            write(conn, now, &c.id, &c.steps)?;
            let mut tally = Tally::new(now);
            tally.outbox.steps(outbox::about(&job), &c.steps, now);
            tally.apply(conn)?;
        }
        return Ok(out);
    };
    conn.prepare_cached(&job_sql::hand_over(Dialect::Sqlite))
        .and_then(|mut s| {
            s.execute(params![
                now,
                task.name,
                task.version,
                task.digest,
                input,
                max,
                c.id,
                c.tenant
            ])
        })
        .map_err(wdb)?;
    write(conn, now, &c.id, &c.steps)?;
    let mut tally = Tally::new(now);
    tally.handed_over(&job, &c.steps);
    tally.apply(conn)?;
    Ok(CancelOutcome::Handed(reread(conn, &c.tenant, &c.id)?))
}
