//! A job's stages on SQLite: read on a reader; started with the job's
//! insert and changed with its attempts' ends, on the writer.

use super::{db, wdb};
use crate::store::outbox::Outbox;
use crate::store::step_rows::{self as sql, StepColumns, StepRecord, StepWrite, WorkflowStart};
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection};
use sqlx::SqliteConnection;

pub async fn list(conn: &mut SqliteConnection, id: &str) -> StoreResult<Vec<StepRecord>> {
    let rows: Vec<StepColumns> = sqlx::query_as(&sql::list("?1"))
        .bind(id)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    rows.into_iter()
        .map(|r| StepRecord::try_from(r).map_err(StoreError::Internal))
        .collect()
}

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
