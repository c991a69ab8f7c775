//! Tenants on PostgreSQL: their settings, the quota checks that read them,
//! and their usage.

use super::pg;
use crate::quota::{window_start, Quotas};
use crate::store::records::*;
use crate::store::tenants::{last_window, usage_from, UsageRow, USAGE_COLUMNS};
pub use crate::store::tenants::{policy_from, tenant_from, within, Policy, TenantRow};
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

/// `TENANT_COLUMNS` with `weight` cast to the 64-bit integer `TenantRow` reads.
const TENANT_SELECT: &str = "name, created_at, weight::int8 AS weight, quotas";

pub async fn tenant_insert(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    name: String,
) -> StoreResult<Tenant> {
    let added = sqlx::query(
        "INSERT INTO tenants (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(&name)
    .bind(now)
    .execute(&mut **tx)
    .await
    .map_err(pg)?
    .rows_affected();
    if added == 0 {
        return Err(StoreError::Conflict(format!(
            "tenant {name:?} exists already"
        )));
    }
    Ok(Tenant {
        name,
        created_at: now,
        weight: None,
        quotas: Quotas::default(),
    })
}

pub async fn tenant_get(pool: &PgPool, name: &str) -> StoreResult<Option<Tenant>> {
    let row: Option<TenantRow> = sqlx::query_as(&format!(
        "SELECT {TENANT_SELECT} FROM tenants WHERE name = $1"
    ))
    .bind(name)
    .fetch_optional(pool)
    .await
    .map_err(pg)?;
    row.map(tenant_from).transpose()
}

pub async fn tenant_list(pool: &PgPool) -> StoreResult<Vec<Tenant>> {
    let rows: Vec<TenantRow> = sqlx::query_as(&format!(
        "SELECT {TENANT_SELECT} FROM tenants ORDER BY name"
    ))
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    rows.into_iter().map(tenant_from).collect()
}

pub async fn tenant_put(
    tx: &mut Transaction<'static, Postgres>,
    now: Millis,
    t: TenantSettings,
) -> StoreResult<(Tenant, bool)> {
    let quotas = (t.quotas != Quotas::default())
        .then(|| serde_json::to_string(&t.quotas))
        .transpose()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let weight = t.weight.map(|w| i32::try_from(w).unwrap_or(i32::MAX));
    // xmax = 0: the row was inserted by this statement, not updated.
    let (row, created): (TenantRow, bool) =
        sqlx::query_as::<_, (String, i64, Option<i64>, Option<String>, bool)>(&format!(
            "INSERT INTO tenants (name, created_at, weight, quotas) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (name) DO UPDATE SET weight = excluded.weight, quotas = excluded.quotas \
             RETURNING {TENANT_SELECT}, (xmax = 0)"
        ))
        .bind(&t.name)
        .bind(now)
        .bind(weight)
        .bind(quotas)
        .fetch_one(&mut **tx)
        .await
        .map(|(n, c, w, q, created)| ((n, c, w, q), created))
        .map_err(pg)?;
    Ok((tenant_from(row)?, created))
}

pub async fn policy(
    tx: &mut Transaction<'static, Postgres>,
    tenant: &str,
    defaults: &Quotas,
) -> StoreResult<Policy> {
    let row: Option<(Option<i64>, Option<String>)> =
        sqlx::query_as("SELECT weight::int8, quotas FROM tenants WHERE name = $1")
            .bind(tenant)
            .fetch_optional(&mut **tx)
            .await
            .map_err(pg)?;
    policy_from(tenant, row, defaults)
}

/// The tenant's queued and waiting jobs, its gauges' row locked until the
/// transaction ends: two enqueues of one tenant check `max_queued` one
/// after the other, never both against the same count.
pub async fn queued_locked(
    tx: &mut Transaction<'static, Postgres>,
    tenant: &str,
) -> StoreResult<i64> {
    sqlx::query("INSERT INTO tenant_jobs (tenant) VALUES ($1) ON CONFLICT (tenant) DO NOTHING")
        .bind(tenant)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    sqlx::query_scalar("SELECT queued + waiting FROM tenant_jobs WHERE tenant = $1 FOR UPDATE")
        .bind(tenant)
        .fetch_one(&mut **tx)
        .await
        .map_err(pg)
}

/// The tenant's running jobs and the fuel it used in the current window.
pub async fn running_and_fuel(
    tx: &mut Transaction<'static, Postgres>,
    tenant: &str,
    now: Millis,
) -> StoreResult<(i64, i64)> {
    let (running, fuel): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT (SELECT running FROM tenant_jobs WHERE tenant = $1), \
                (SELECT fuel FROM tenant_usage WHERE tenant = $1 AND window_start = $2)",
    )
    .bind(tenant)
    .bind(window_start(now))
    .fetch_one(&mut **tx)
    .await
    .map_err(pg)?;
    Ok((running.unwrap_or(0), fuel.unwrap_or(0)))
}

pub async fn tenant_usage(pool: &PgPool, tenant: &str, now: Millis) -> StoreResult<TenantUsage> {
    let jobs: Option<(i64, i64, i64)> =
        sqlx::query_as("SELECT queued, running, waiting FROM tenant_jobs WHERE tenant = $1")
            .bind(tenant)
            .fetch_optional(pool)
            .await
            .map_err(pg)?;
    let windows: Vec<UsageRow> = sqlx::query_as(&format!(
        "SELECT {USAGE_COLUMNS} FROM tenant_usage WHERE tenant = $1 AND window_start IN ($2, $3)"
    ))
    .bind(tenant)
    .bind(window_start(now))
    .bind(last_window(now))
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    Ok(usage_from(jobs, &windows, now))
}
