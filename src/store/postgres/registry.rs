//! Components and task versions on PostgreSQL. Quota-checked
//! writes lock their tenant's row first, so that two uploads of one tenant
//! are checked one after the other.

use super::pg;
use super::tenants::{policy, within};
use crate::quota::Quotas;
use crate::store::records::*;
use crate::store::registry_rows::*;
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

/// Locks the tenant's row for the transaction; `NotFound` if it has none.
pub(super) async fn lock_tenant(
    tx: &mut Transaction<'static, Postgres>,
    tenant: &str,
) -> StoreResult<()> {
    let found: Option<i32> = sqlx::query_scalar("SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE")
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    found.map(|_| ()).ok_or(StoreError::NotFound)
}

pub async fn component_insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    c: NewComponent,
    defaults: Quotas,
) -> StoreResult<(ComponentRecord, bool)> {
    lock_tenant(tx, &c.tenant).await?;
    let known: Option<i32> = sqlx::query_scalar(KNOWN)
        .bind(&c.tenant)
        .bind(&c.digest)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    if known.is_none() {
        let q = policy(tx, &c.tenant, &defaults).await?.quotas;
        let (count, bytes): (i64, i64) = sqlx::query_as(USAGE)
            .bind(&c.tenant)
            .fetch_one(&mut **tx)
            .await
            .map_err(pg)?;
        crate::store::tenants::component_room(&q, count, bytes, c.bytes.len() as u64)?;
    }
    sqlx::query(INSERT_BLOB)
        .bind(&c.digest)
        .bind(&c.bytes)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    let added = sqlx::query(INSERT_COMPONENT)
        .bind(&c.tenant)
        .bind(&c.digest)
        .bind(i64::try_from(c.bytes.len()).unwrap_or(i64::MAX))
        .bind(&c.abi)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(pg)?
        .rows_affected();
    let row = sqlx::query_as(COMPONENT)
        .bind(&c.tenant)
        .bind(&c.digest)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    Ok((component(c.digest, row), added == 1))
}

pub async fn component_get(
    pool: &PgPool,
    tenant: &str,
    digest: &str,
) -> StoreResult<Option<ComponentRecord>> {
    let row = sqlx::query_as(COMPONENT)
        .bind(tenant)
        .bind(digest)
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.map(|r| component(digest.to_owned(), r)))
}

pub async fn component_bytes(pool: &PgPool, digest: &str) -> StoreResult<Option<Vec<u8>>> {
    sqlx::query_scalar(BYTES)
        .bind(digest)
        .fetch_optional(pool)
        .await
        .map_err(pg)
}

pub async fn task_insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    t: NewTask,
    defaults: Quotas,
) -> StoreResult<TaskRecord> {
    // Locked: versions are numbered one after the other, never twice.
    lock_tenant(tx, &t.tenant).await?;
    let q = policy(tx, &t.tenant, &defaults).await?.quotas;
    let versions: i64 = sqlx::query_scalar(&crate::store::workflow_rows::count_versions("$1"))
        .bind(&t.tenant)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    within("max_task_versions", q.max_task_versions, versions, 1)?;
    let known: (Option<i64>, i64) = sqlx::query_as(DEFINE_CHECK.as_str())
        .bind(&t.tenant)
        .bind(&t.name)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    may_define(&t.name, known, t.rollout.is_some())?;
    let row: TaskRow = sqlx::query_as(INSERT_TASK.as_str())
        .bind(&t.tenant)
        .bind(&t.name)
        .bind(&t.digest)
        .bind(&t.spec)
        .bind(now)
        .bind(t.rollout.map(i64::from))
        .bind(t.rollout.map(|_| now))
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(task(row))
}

/// Changes the rollout of a task's staged version; `NotFound` when none
/// is staged. The tenant's row is locked, as a define's is, so that a
/// define and a change of the same task are one after the other.
pub async fn task_rollout(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    tenant: &str,
    name: &str,
    change: RolloutChange,
) -> StoreResult<TaskRecord> {
    lock_tenant(tx, tenant).await?;
    let (sql, bind) = rollout_change(change, now);
    let mut q = sqlx::query_as::<_, TaskRow>(&sql);
    if let Some(v) = bind {
        q = q.bind(v);
    }
    let q = q.bind(tenant).bind(name);
    let row = q.fetch_optional(&mut **tx).await.map_err(pg)?;
    row.map(task).ok_or(StoreError::NotFound)
}

pub async fn task_get(
    pool: &PgPool,
    tenant: &str,
    name: &str,
    version: Option<u32>,
) -> StoreResult<Option<TaskRecord>> {
    let row: Option<TaskRow> = sqlx::query_as(TASK.as_str())
        .bind(tenant)
        .bind(name)
        .bind(version.map(i64::from))
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    Ok(row.map(task))
}

pub async fn task_versions(
    pool: &PgPool,
    tenant: &str,
    name: &str,
) -> StoreResult<Vec<TaskRecord>> {
    let rows: Vec<TaskRow> = sqlx::query_as(VERSIONS.as_str())
        .bind(tenant)
        .bind(name)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(rows.into_iter().map(task).collect())
}

pub async fn task_list(pool: &PgPool, tenant: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
    let rows: Vec<TaskRow> = sqlx::query_as(&crate::store::registry_rows::list(tenant.is_some()))
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(pg)?;
    Ok(rows.into_iter().map(task).collect())
}
