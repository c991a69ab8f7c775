//! Components and task versions on PostgreSQL. Quota-checked
//! writes lock their tenant's row first, so that two uploads of one tenant
//! are checked one after the other.

use super::pg;
use super::tenants::{policy, within};
use crate::quota::Quotas;
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

const TASK_COLUMNS: &str = "tenant, name, version, digest, spec, created_at";

type TaskRow = (String, String, i32, String, String, i64);

fn task_from((tenant, name, version, digest, spec, created_at): TaskRow) -> TaskRecord {
    TaskRecord {
        tenant,
        name,
        version: u32::try_from(version).unwrap_or(0),
        digest,
        spec,
        created_at,
    }
}

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
    let known: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM components WHERE tenant = $1 AND digest = $2")
            .bind(&c.tenant)
            .bind(&c.digest)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
    if known.is_none() {
        let q = policy(tx, &c.tenant, &defaults).await?.quotas;
        let (count, bytes): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), COALESCE(SUM(size), 0)::int8 FROM components WHERE tenant = $1",
        )
        .bind(&c.tenant)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)?;
        crate::store::tenants::component_room(&q, count, bytes, c.bytes.len() as u64)?;
    }
    sqlx::query(
        "INSERT INTO blobs (digest, bytes) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING",
    )
    .bind(&c.digest)
    .bind(&c.bytes)
    .execute(&mut **tx)
    .await
    .map_err(pg)?;
    let added = sqlx::query(
        "INSERT INTO components (tenant, digest, size, abi, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (tenant, digest) DO NOTHING",
    )
    .bind(&c.tenant)
    .bind(&c.digest)
    .bind(i64::try_from(c.bytes.len()).unwrap_or(i64::MAX))
    .bind(&c.abi)
    .bind(now)
    .execute(&mut **tx)
    .await
    .map_err(pg)?
    .rows_affected();
    let (size, abi, created_at): (i64, String, i64) = sqlx::query_as(
        "SELECT size, abi, created_at FROM components WHERE tenant = $1 AND digest = $2",
    )
    .bind(&c.tenant)
    .bind(&c.digest)
    .fetch_one(&mut **tx)
    .await
    .map_err(pg)?;
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

pub async fn component_get(
    pool: &PgPool,
    tenant: &str,
    digest: &str,
) -> StoreResult<Option<ComponentRecord>> {
    let row: Option<(i64, String, i64)> = sqlx::query_as(
        "SELECT size, abi, created_at FROM components WHERE tenant = $1 AND digest = $2",
    )
    .bind(tenant)
    .bind(digest)
    .fetch_optional(pool)
    .await
    .map_err(pg)?;
    Ok(row.map(|(size, abi, created_at)| ComponentRecord {
        digest: digest.to_owned(),
        size: u64::try_from(size).unwrap_or(0),
        abi,
        created_at,
    }))
}

pub async fn component_bytes(pool: &PgPool, digest: &str) -> StoreResult<Option<Vec<u8>>> {
    sqlx::query_scalar("SELECT bytes FROM blobs WHERE digest = $1")
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
    let row: TaskRow = sqlx::query_as(&format!(
        "INSERT INTO tasks (tenant, name, version, digest, spec, created_at) \
         VALUES ($1, $2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks \
                          WHERE tenant = $1 AND name = $2), $3, $4, $5) \
         RETURNING {TASK_COLUMNS}"
    ))
    .bind(&t.tenant)
    .bind(&t.name)
    .bind(&t.digest)
    .bind(&t.spec)
    .bind(now)
    .fetch_one(&mut **tx)
    .await
    .map_err(pg)?;
    Ok(task_from(row))
}

pub async fn task_get(
    pool: &PgPool,
    tenant: &str,
    name: &str,
    version: Option<u32>,
) -> StoreResult<Option<TaskRecord>> {
    let row: Option<TaskRow> = sqlx::query_as(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 \
         AND ($3::int4 IS NULL OR version = $3) ORDER BY version DESC LIMIT 1"
    ))
    .bind(tenant)
    .bind(name)
    .bind(version.map(|v| i32::try_from(v).unwrap_or(i32::MAX)))
    .fetch_optional(pool)
    .await
    .map_err(pg)?;
    Ok(row.map(task_from))
}

pub async fn task_versions(
    pool: &PgPool,
    tenant: &str,
    name: &str,
) -> StoreResult<Vec<TaskRecord>> {
    let rows: Vec<TaskRow> = sqlx::query_as(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 ORDER BY version"
    ))
    .bind(tenant)
    .bind(name)
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    Ok(rows.into_iter().map(task_from).collect())
}

pub async fn task_list(pool: &PgPool, tenant: &str) -> StoreResult<Vec<TaskRecord>> {
    let rows: Vec<TaskRow> = sqlx::query_as(&format!(
        "SELECT DISTINCT ON (name) {TASK_COLUMNS} FROM tasks WHERE tenant = $1 \
         ORDER BY name, version DESC"
    ))
    .bind(tenant)
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    Ok(rows.into_iter().map(task_from).collect())
}
