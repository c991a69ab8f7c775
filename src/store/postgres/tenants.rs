//! Tenants on PostgreSQL: their settings, the quota checks that read them,
//! and their usage.

use super::pg;
use crate::quota::{window_start, Quotas};
use crate::store::records::*;
use crate::store::tenants::{last_window, usage_from, UsageRow, TENANT_COLUMNS, USAGE_COLUMNS};
pub use crate::store::tenants::{policy_from, tenant_from, within, Policy, TenantRow};
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Transaction};

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
    let row: Option<TenantRow> = sqlx::query_as(crate::store::tenants::TENANT_GET)
        .bind(name)
        .fetch_optional(pool)
        .await
        .map_err(pg)?;
    row.map(tenant_from).transpose()
}

pub async fn tenant_list(pool: &PgPool) -> StoreResult<Vec<Tenant>> {
    let rows: Vec<TenantRow> = sqlx::query_as(crate::store::tenants::TENANT_LIST)
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
             RETURNING {TENANT_COLUMNS}, (xmax = 0)"
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
    let row: Option<(Option<i64>, Option<String>)> = sqlx::query_as(crate::store::tenants::POLICY)
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await
        .map_err(pg)?;
    policy_from(tenant, row, defaults)
}

/// The tenant's queued and waiting jobs, as committed now. Unlocked: two
/// enqueues of one tenant at once may both pass `max_queued` by one, so a
/// tenant may overshoot it by as many enqueues as it has in flight
/// (bounded by the processes' pools); no enqueue waits for another's.
pub async fn queued_now(tx: &mut Transaction<'static, Postgres>, tenant: &str) -> StoreResult<i64> {
    sqlx::query_scalar(
        "SELECT coalesce(sum(queued + waiting), 0)::int8 FROM tenant_jobs WHERE tenant = $1",
    )
    .bind(tenant)
    .fetch_one(&mut **tx)
    .await
    .map_err(pg)
}

/// Holds `what` of `tenant` until the transaction ends: writes that must
/// see each other (enqueues of one idempotency key or one superseding
/// concurrency key, new rows counted against one of its caps) come one
/// after the other.
pub async fn hold(
    tx: &mut Transaction<'static, Postgres>,
    tenant: &str,
    what: &str,
) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 1))")
        .bind(tenant)
        .bind(what)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    Ok(())
}

/// A claim's view of each tenant: its settings, its running jobs and the
/// fuel it used in the current window, in one statement for them all
/// (two a tenant cost a claim over many tenants hundreds of round trips).
pub async fn claim_views(
    tx: &mut Transaction<'static, Postgres>,
    tenants: &[String],
    now: Millis,
    defaults: &Quotas,
) -> StoreResult<Vec<(String, Policy, i64, i64)>> {
    type Row = (
        String,
        Option<i64>,
        Option<String>,
        Option<i64>,
        Option<i64>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT t.name, s.weight::int8, s.quotas, \
           (SELECT sum(running)::int8 FROM tenant_jobs WHERE tenant = t.name), \
           (SELECT sum(fuel)::int8 FROM tenant_usage WHERE tenant = t.name AND window_start = $2) \
         FROM unnest($1::text[]) WITH ORDINALITY AS t(name, ord) \
         LEFT JOIN tenants s ON s.name = t.name ORDER BY t.ord",
    )
    .bind(tenants)
    .bind(window_start(now))
    .fetch_all(&mut **tx)
    .await
    .map_err(pg)?;
    rows.into_iter()
        .map(|(name, weight, quotas, running, fuel)| {
            let policy = policy_from(&name, Some((weight, quotas)), defaults)?;
            Ok((name, policy, running.unwrap_or(0), fuel.unwrap_or(0)))
        })
        .collect()
}

pub async fn tenant_usage(pool: &PgPool, tenant: &str, now: Millis) -> StoreResult<TenantUsage> {
    let jobs: Option<(i64, i64, i64)> = sqlx::query_as(
        "SELECT sum(queued)::int8, sum(running)::int8, sum(waiting)::int8 \
             FROM tenant_jobs WHERE tenant = $1 HAVING count(*) > 0",
    )
    .bind(tenant)
    .fetch_optional(pool)
    .await
    .map_err(pg)?;
    let windows: Vec<UsageRow> = sqlx::query_as(&format!(
        "SELECT {USAGE_COLUMNS} FROM (SELECT window_start, sum(fuel)::int8 AS fuel, \
         sum(wall_ms)::int8 AS wall_ms, sum(attempts)::int8 AS attempts, \
         sum(completed)::int8 AS completed, sum(failed)::int8 AS failed, \
         sum(cancelled)::int8 AS cancelled, sum(http_requests)::int8 AS http_requests, \
         sum(http_bytes)::int8 AS http_bytes, sum(cache_hits)::int8 AS cache_hits, \
         sum(fuel_saved)::int8 AS fuel_saved FROM tenant_usage \
         WHERE tenant = $1 AND window_start IN ($2, $3) GROUP BY window_start) w"
    ))
    .bind(tenant)
    .bind(window_start(now))
    .bind(last_window(now))
    .fetch_all(pool)
    .await
    .map_err(pg)?;
    Ok(usage_from(jobs, &windows, now))
}
