//! Workflow definitions on SQLite: a new version on the writer, reads on a
//! reader.

use super::tenants::{policy, within};
use super::{db, wdb};
use crate::quota::Quotas;
use crate::store::workflow_rows::{self as sql, NewWorkflow, WorkflowRecord};
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection};
use sqlx::SqliteConnection;

/// Adds the next version of a workflow, within `max_task_versions`.
pub fn insert(
    conn: &Connection,
    now: Millis,
    w: NewWorkflow,
    defaults: &Quotas,
) -> StoreResult<WorkflowRecord> {
    let q = policy(conn, &w.tenant, defaults)?.quotas;
    let versions: i64 = conn
        .query_row(&sql::count_versions("?1"), params![w.tenant], |r| r.get(0))
        .map_err(wdb)?;
    within("max_task_versions", q.max_task_versions, versions, 1)?;
    conn.query_row(
        &sql::insert(["?1", "?2", "?3", "?4"]),
        params![w.tenant, w.name, w.spec, now],
        |r| {
            Ok(WorkflowRecord {
                tenant: r.get(0)?,
                name: r.get(1)?,
                version: r.get(2)?,
                spec: r.get(3)?,
                created_at: r.get(4)?,
            })
        },
    )
    .map_err(wdb)
}

pub async fn get(
    conn: &mut SqliteConnection,
    tenant: &str,
    name: &str,
    version: Option<u32>,
) -> StoreResult<Option<WorkflowRecord>> {
    sqlx::query_as(&sql::get(["?1", "?2", "?3"]))
        .bind(tenant)
        .bind(name)
        .bind(version)
        .fetch_optional(conn)
        .await
        .map_err(db)
}

pub async fn versions(
    conn: &mut SqliteConnection,
    tenant: &str,
    name: &str,
) -> StoreResult<Vec<(u32, Millis)>> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(&sql::versions(["?1", "?2"]))
        .bind(tenant)
        .bind(name)
        .fetch_all(conn)
        .await
        .map_err(db)?;
    Ok(rows
        .into_iter()
        .map(|(v, at)| (u32::try_from(v).unwrap_or(0), at))
        .collect())
}

pub async fn list(
    conn: &mut SqliteConnection,
    tenant: Option<&str>,
) -> StoreResult<Vec<WorkflowRecord>> {
    sqlx::query_as(&sql::list(tenant.is_some(), "?1"))
        .bind(tenant)
        .fetch_all(conn)
        .await
        .map_err(db)
}
