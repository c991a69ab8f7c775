//! The SQL of components and task versions on SQLite (the writes; they
//! run on the writer's connection), within the tenant's quotas.

use super::rows::TaskRow;
use super::tenants::{policy, within};
use super::wdb;
use crate::quota::Quotas;
use crate::store::records::*;
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

pub fn component_insert(
    conn: &Connection,
    now: Millis,
    c: NewComponent,
    defaults: &Quotas,
) -> StoreResult<(ComponentRecord, bool)> {
    let known: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM components WHERE tenant = ?1 AND digest = ?2",
            params![c.tenant, c.digest],
            |r| r.get(0),
        )
        .optional()
        .map_err(wdb)?;
    if known.is_none() {
        let q = policy(conn, &c.tenant, defaults)?.quotas;
        let (count, bytes): (i64, i64) = conn
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM components WHERE tenant = ?1",
                params![c.tenant],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(wdb)?;
        crate::store::tenants::component_room(&q, count, bytes, c.bytes.len() as u64)?;
    }
    conn.execute(
        "INSERT OR IGNORE INTO blobs (digest, bytes) VALUES (?1, ?2)",
        params![c.digest, c.bytes],
    )
    .map_err(wdb)?;
    let added = conn
        .execute(
            "INSERT OR IGNORE INTO components (tenant, digest, size, abi, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![c.tenant, c.digest, c.bytes.len() as i64, c.abi, now],
        )
        .map_err(wdb)?;
    let (size, abi, created_at): (i64, String, i64) = conn
        .query_row(
            "SELECT size, abi, created_at FROM components WHERE tenant = ?1 AND digest = ?2",
            params![c.tenant, c.digest],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(wdb)?;
    Ok((
        ComponentRecord {
            digest: c.digest,
            size: u64::try_from(size).unwrap_or(0),
            abi,
            created_at,
        },
        added == 1,
    ))
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
    let row = conn
        .query_row(
            "INSERT INTO tasks (tenant, name, version, digest, spec, created_at) \
             VALUES (?1, ?2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks WHERE tenant = ?1 AND name = ?2), ?3, ?4, ?5) \
             RETURNING tenant, name, version, digest, spec, created_at",
            params![t.tenant, t.name, t.digest, t.spec, now],
            TaskRow::read,
        )
        .map_err(wdb)?;
    Ok(row.into())
}
