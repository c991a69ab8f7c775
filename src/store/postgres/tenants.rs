//! Tenants on PostgreSQL: their settings, the quota checks that read them,
//! and their usage.

use super::pg;
use crate::quota::{window_start, Quotas};
pub use crate::store::tenants::{policy_from, within, Policy};
use crate::store::{Millis, StoreResult};
use sqlx::{Postgres, Transaction};

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
