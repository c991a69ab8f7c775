//! Workflow definitions on PostgreSQL.

use super::pg;
use super::registry::lock_tenant;
use super::tenants::{policy, within};
use crate::quota::Quotas;
use crate::store::workflow_rows::{self as sql, NewWorkflow, WorkflowRecord};
use crate::store::{Millis, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

/// Adds the next version of a workflow, within `max_task_versions`.
pub async fn insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    w: NewWorkflow,
    defaults: Quotas,
) -> StoreResult<WorkflowRecord> {
    // Locked: versions are numbered one after the other, never twice.
    lock_tenant(tx, &w.tenant).await?;
    let q = policy(tx, &w.tenant, &defaults).await?.quotas;
    let versions: i64 = sqlx::query_scalar(&sql::count_versions("$1"))
        .bind(&w.tenant)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    within("max_task_versions", q.max_task_versions, versions, 1)?;
    sqlx::query_as(&sql::insert(["$1", "$2", "$3", "$4"]))
        .bind(&w.tenant)
        .bind(&w.name)
        .bind(&w.spec)
        .bind(now)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)
}

pub async fn get(
    pool: &PgPool,
    tenant: &str,
    name: &str,
    version: Option<u32>,
) -> StoreResult<Option<WorkflowRecord>> {
    sqlx::query_as(&sql::get(["$1", "$2", "$3::int4"]))
        .bind(tenant)
        .bind(name)
        .bind(version.map(|v| i32::try_from(v).unwrap_or(i32::MAX)))
        .fetch_optional(pool)
        .await
        .map_err(pg)
}

pub async fn versions(pool: &PgPool, tenant: &str, name: &str) -> StoreResult<Vec<(u32, Millis)>> {
    let rows: Vec<(i32, i64)> = sqlx::query_as(&sql::versions(["$1", "$2"]))
        .bind(tenant)
        .bind(name)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(rows
        .into_iter()
        .map(|(v, at)| (u32::try_from(v).unwrap_or(0), at))
        .collect())
}

pub async fn list(pool: &PgPool, tenant: Option<&str>) -> StoreResult<Vec<WorkflowRecord>> {
    sqlx::query_as(&sql::list(tenant.is_some(), "$1"))
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(pg)
}
