//! Attempts' ends on SQLite: each job's move (`store::ending_sql`) fenced
//! by its lease token, its attempt (on the job's row or one of its own,
//! `store::ending`), its callbacks and workflow stages, and what it cost
//! its tenant, in the writer's batch.

use super::jobs::{insert_one, Tenants};
use super::tally::{Apply, Tally};
use super::wdb;
use super::writer::exec;
use crate::job::JobStatus;
use crate::store::attempt_sql;
use crate::store::call_rows;
use crate::store::ending::Ending;
use crate::store::ending_sql::{ending, Arg, Dialect};
use crate::store::records::*;
use crate::store::rows::to_json;
use crate::store::step_rows::landing;
use crate::store::transition::Move;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};

/// Writes each attempt's end, fenced by its lease token, the attempt rows
/// of those written, and what each attempt cost its tenant. If the batch
/// fails as a whole, each is written again on its own, so one attempt that
/// cannot be recorded does not take the others with it.
pub fn finalize(
    conn: &Connection,
    now: Millis,
    batch: Vec<Finalize>,
) -> StoreResult<Vec<Finalized>> {
    let step = |sql: &str| exec(conn, sql).map_err(wdb);
    step("SAVEPOINT finalize")?;
    let all = (|| {
        let mut tally = Tally::new(now);
        let mut out = Vec::with_capacity(batch.len());
        for f in &batch {
            out.push(finalize_item(conn, now, f, &mut tally, true)?);
        }
        tally.apply(conn)?;
        Ok::<_, StoreError>(out)
    })();
    match all {
        Ok(out) => {
            step("RELEASE finalize")?;
            Ok(out)
        }
        Err(e) => {
            step("ROLLBACK TO finalize")?;
            step("RELEASE finalize")?;
            tracing::warn!(error = %e, jobs = batch.len(), "a finalize batch failed; writing its jobs one by one");
            batch.iter().map(|f| finalize_alone(conn, now, f)).collect()
        }
    }
}

/// One attempt's end in a savepoint of its own: as it is, else without
/// its log; if even that fails, nothing is written (the lease runs out and
/// the rescuer decides the attempt).
fn finalize_alone(conn: &Connection, now: Millis, f: &Finalize) -> StoreResult<Finalized> {
    let step = |sql: &str| exec(conn, sql).map_err(wdb);
    for with_log in [true, false] {
        step("SAVEPOINT one")?;
        let mut tally = Tally::new(now);
        let r = finalize_item(conn, now, f, &mut tally, with_log)
            .and_then(|r| tally.apply(conn).map(|()| r));
        match r {
            Ok(r) => {
                step("RELEASE one")?;
                return Ok(r);
            }
            Err(e) => {
                step("ROLLBACK TO one")?;
                step("RELEASE one")?;
                tracing::warn!(job = %f.id, with_log, error = %e, "an attempt's end could not be written");
            }
        }
    }
    Ok(Finalized::Fenced)
}

pub(super) fn finalize_item(
    conn: &Connection,
    now: Millis,
    f: &Finalize,
    tally: &mut Tally,
    with_log: bool,
) -> StoreResult<Finalized> {
    if let Some(u) = &f.usage {
        tally.charge(&f.tenant, u);
    }
    let end = Ending::of(f, with_log)?;
    let mv = end.job_move();
    let Some(status) = bind_ending(conn, now, f, &mv)? else {
        return Ok(Finalized::Fenced);
    };
    if !f.steps.is_empty() {
        super::steps::write(conn, now, &f.id, &landing(&f.steps, status))?;
    }
    tally.landed(f, status);
    if let Some(cb) = f.callbacks.as_ref().and_then(|c| c.landing(status)) {
        let (mut tenants, none) = (Tenants::default(), Tally::new(now));
        insert_one(conn, now, cb.clone(), None, tally, &mut tenants, &none)?;
        super::calls::insert(conn, &call_rows::callback(&f.id, status, cb, now))?;
    }
    if let Some((a, log)) = end.attempt_row(&mv) {
        insert_attempt(conn, &f.id, a, log)?;
    }
    Ok(Finalized::Done(status))
}

fn insert_attempt(
    conn: &Connection,
    job_id: &str,
    a: &AttemptRecord,
    log: Option<&str>,
) -> StoreResult<()> {
    super::shared(conn, &attempt_sql::INSERT)?
        .execute(params![
            job_id,
            a.attempt,
            a.task.name,
            a.task.version,
            a.task.digest,
            a.started_at,
            a.finished_at,
            a.outcome,
            a.error.as_ref().map(to_json),
            i64::try_from(a.fuel_used).unwrap_or(i64::MAX),
            i64::try_from(a.peak_memory_bytes).unwrap_or(i64::MAX),
            log,
            a.network.as_ref().map(to_json),
        ])
        .map_err(wdb)?;
    Ok(())
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Arg::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Arg::Owned(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Arg::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            Arg::Bool(b) => ToSqlOutput::Owned(Value::Integer(i64::from(*b))),
            Arg::OptText(None) => ToSqlOutput::Owned(Value::Null),
            Arg::OptText(Some(t)) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

/// Writes an attempt's end as its move says (`store::ending_sql`): the
/// job's new status, or `None` when the lease or its status fenced it out.
fn bind_ending(
    conn: &Connection,
    now: Millis,
    f: &Finalize,
    mv: &Move<'_>,
) -> StoreResult<Option<JobStatus>> {
    let (sql, args) = ending(mv, Dialect::Sqlite, now, &f.id, &f.lease_token);
    let mut stmt = conn.prepare_cached(&sql).map_err(wdb)?;
    let params = rusqlite::params_from_iter(args.iter());
    if !mv.cancel_wins {
        let n = stmt.execute(params).map_err(wdb)?;
        return Ok((n == 1).then_some(mv.to));
    }
    let status: Option<String> = stmt
        .query_row(params, |r| r.get(0))
        .optional()
        .map_err(wdb)?;
    status
        .map(|s| s.parse::<JobStatus>().map_err(StoreError::Internal))
        .transpose()
}
