//! Components and task versions on SQLite (the writes; they run on the
//! writer's connection), within the tenant's quotas.

use super::tenants::{policy, within};
use super::{shared, wdb};
use crate::quota::Quotas;
use crate::store::records::*;
use crate::store::registry_rows::*;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

pub fn component_insert(
    conn: &Connection,
    now: Millis,
    c: NewComponent,
    defaults: &Quotas,
) -> StoreResult<(ComponentRecord, bool)> {
    let known: Option<i64> = shared(conn, KNOWN)?
        .query_row(params![c.tenant, c.digest], |r| r.get(0))
        .optional()
        .map_err(wdb)?;
    if known.is_none() {
        let q = policy(conn, &c.tenant, defaults)?.quotas;
        let (count, bytes): (i64, i64) = shared(conn, USAGE)?
            .query_row(params![c.tenant], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(wdb)?;
        crate::store::tenants::component_room(&q, count, bytes, c.bytes.len() as u64)?;
    }
    shared(conn, INSERT_BLOB)?
        .execute(params![c.digest, c.bytes])
        .map_err(wdb)?;
    let size = c.bytes.len() as i64;
    let added = shared(conn, INSERT_COMPONENT)?
        .execute(params![c.tenant, c.digest, size, c.abi, now])
        .map_err(wdb)?;
    let row = shared(conn, COMPONENT)?
        .query_row(params![c.tenant, c.digest], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(wdb)?;
    Ok((component(c.digest, row), added == 1))
}

pub fn task_insert(
    conn: &Connection,
    now: Millis,
    t: NewTask,
    defaults: &Quotas,
) -> StoreResult<TaskRecord> {
    let q = policy(conn, &t.tenant, defaults)?.quotas;
    let versions: i64 = conn
        .query_row(
            &crate::store::workflow_rows::count_versions("?1"),
            params![t.tenant],
            |r| r.get(0),
        )
        .map_err(wdb)?;
    within("max_task_versions", q.max_task_versions, versions, 1)?;
    let known = shared(conn, &DEFINE_CHECK)?
        .query_row(params![t.tenant, t.name], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(wdb)?;
    may_define(&t.name, known, t.rollout.is_some())?;
    let percent = t.rollout.map(i64::from);
    let started = t.rollout.map(|_| now);
    let row = shared(conn, &INSERT_TASK)?
        .query_row(
            params![t.tenant, t.name, t.digest, t.spec, now, percent, started],
            task_row,
        )
        .map_err(wdb)?;
    Ok(task(row))
}

/// Changes the rollout of a task's staged version; `NotFound` when none
/// is staged.
pub fn task_rollout(
    conn: &Connection,
    now: Millis,
    tenant: &str,
    name: &str,
    change: RolloutChange,
) -> StoreResult<TaskRecord> {
    let (sql, bind) = rollout_change(change, now);
    let mut stmt = shared(conn, &sql)?;
    let row = match bind {
        Some(v) => stmt.query_row(params![v, tenant, name], task_row),
        None => stmt.query_row(params![tenant, name], task_row),
    }
    .optional()
    .map_err(wdb)?;
    row.map(task).ok_or(crate::store::StoreError::NotFound)
}

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
    ))
}
