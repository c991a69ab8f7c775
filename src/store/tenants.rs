//! Tenants' rows for both backends: a tenant's record, its policy's row,
//! its usage, and their transactions. What a policy admits and how usage
//! adds up are decided in the core (`taskbox_core::tenancy`, `usage`).

use super::exec::{args, Commit, Exec};
use super::records::TenantSettings;
use super::records::{Tenant, TenantUsage};
use super::{Millis, StoreError, StoreResult};
use crate::quota::{window_start, Quotas};
pub use taskbox_core::tenancy::*;
pub use taskbox_core::usage::*;

/// Holds `what` of `tenant` until the transaction ends: writes that must
/// see each other (enqueues of one idempotency key or one superseding
/// concurrency key, new rows counted against one of its caps) come one
/// after the other. Nothing to do where one writer runs every write.
pub async fn hold(tx: &mut dyn Exec, tenant: &str, what: &str) -> StoreResult<()> {
    if tx.dialect().runs_writes_together() {
        let sql = "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 1))";
        tx.execute(sql, args![tenant, what]).await?;
    }
    Ok(())
}

/// Locks the tenant's row until the transaction ends, so that writes
/// that number or count its rows (task and workflow versions) come one
/// after the other; `NotFound` when there is no such tenant.
pub async fn lock(tx: &mut dyn Exec, tenant: &str) -> StoreResult<()> {
    let sql = format!(
        "SELECT 1 FROM tenants WHERE name = $1{}",
        tx.dialect().for_update()
    );
    let found: Option<i64> = tx.scalar(&sql, args![tenant]).await?;
    found.map(|_| ()).ok_or(StoreError::NotFound)
}

/// The columns of a tenant, in `TenantRow`'s order.
macro_rules! tenant_columns {
    () => {
        "name, created_at, CAST(weight AS BIGINT) AS weight, quotas"
    };
}

/// The columns of a tenant, in `TenantRow`'s order.
pub const TENANT_COLUMNS: &str = tenant_columns!();

/// One tenant ($1 its name).
pub const TENANT_GET: &str = concat!(
    "SELECT ",
    tenant_columns!(),
    " FROM tenants WHERE name = $1"
);

/// Every tenant, by name.
pub const TENANT_LIST: &str = concat!("SELECT ", tenant_columns!(), " FROM tenants ORDER BY name");

/// name, created_at, weight, quotas (JSON).
pub type TenantRow = (String, i64, Option<i64>, Option<String>);

pub fn tenant_from((name, created_at, weight, quotas): TenantRow) -> StoreResult<Tenant> {
    Ok(Tenant {
        quotas: quotas_col(&name, quotas)?,
        weight: weight.and_then(|w| u32::try_from(w).ok()),
        name,
        created_at,
    })
}

/// The columns of `UsageRow`.
pub const USAGE_COLUMNS: &str = "window_start, fuel, wall_ms, attempts, completed, failed, \
    cancelled, http_requests, http_bytes, cache_hits, fuel_saved";

/// A tenant's weight (as a 64-bit integer) and quotas ($1 its name).
pub const POLICY: &str = "SELECT CAST(weight AS BIGINT), quotas FROM tenants WHERE name = $1";

/// A tenant made with no settings, unless one of that name exists.
const TENANT_INSERT: &str =
    "INSERT INTO tenants (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";

/// A tenant's jobs now: PostgreSQL keeps its counters in stripes.
const JOBS_NOW: &str = "SELECT CAST(sum(queued) AS BIGINT), CAST(sum(running) AS BIGINT), \
     CAST(sum(waiting) AS BIGINT) FROM tenant_jobs WHERE tenant = $1 HAVING count(*) > 0";

/// A tenant's usage in two windows ($2, $3), summed over its stripes.
const WINDOWS: &str = "SELECT window_start, CAST(sum(fuel) AS BIGINT), \
     CAST(sum(wall_ms) AS BIGINT), CAST(sum(attempts) AS BIGINT), \
     CAST(sum(completed) AS BIGINT), CAST(sum(failed) AS BIGINT), \
     CAST(sum(cancelled) AS BIGINT), CAST(sum(http_requests) AS BIGINT), \
     CAST(sum(http_bytes) AS BIGINT), CAST(sum(cache_hits) AS BIGINT), \
     CAST(sum(fuel_saved) AS BIGINT) FROM tenant_usage \
     WHERE tenant = $1 AND window_start IN ($2, $3) GROUP BY window_start";

impl dyn super::JobStore {
    pub async fn tenant_insert(&self, name: &str) -> StoreResult<Tenant> {
        let name = name.to_owned();
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                if tx.execute(TENANT_INSERT, args![&name, now]).await? == 0 {
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
            })
        })
        .await
    }

    pub async fn tenant_get(&self, name: &str) -> StoreResult<Option<Tenant>> {
        let row: Option<TenantRow> = self.read().await?.optional(TENANT_GET, args![name]).await?;
        row.map(tenant_from).transpose()
    }

    /// Sets a tenant's weight and quotas (replacing what was set), creating
    /// the tenant if it is new; `created` says which.
    pub async fn tenant_put(&self, t: TenantSettings) -> StoreResult<(Tenant, bool)> {
        self.write(Commit::PROMPT, move |tx, now| Box::pin(put(tx, now, t)))
            .await
    }

    /// Every tenant, by name.
    pub async fn tenant_list(&self) -> StoreResult<Vec<Tenant>> {
        let rows: Vec<TenantRow> = self.read().await?.all(TENANT_LIST, &[]).await?;
        rows.into_iter().map(tenant_from).collect()
    }

    /// A tenant's jobs now and its usage in the current and the last window.
    pub async fn tenant_usage(&self, tenant: &str) -> StoreResult<TenantUsage> {
        let now = self.now();
        let mut c = self.read().await?;
        let jobs: Option<(i64, i64, i64)> = c.optional(JOBS_NOW, args![tenant]).await?;
        let a = args![tenant, window_start(now), last_window(now)];
        let windows: Vec<UsageRow> = c.all(WINDOWS, a).await?;
        Ok(usage_from(jobs, &windows, now))
    }
}

async fn put(tx: &mut dyn Exec, now: Millis, t: TenantSettings) -> StoreResult<(Tenant, bool)> {
    let quotas = (t.quotas != Quotas::default())
        .then(|| serde_json::to_string(&t.quotas))
        .transpose()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let weight = t
        .weight
        .map(|w| i64::from(i32::try_from(w).unwrap_or(i32::MAX)));
    let added = tx.execute(TENANT_INSERT, args![&t.name, now]).await?;
    let sql = format!(
        "UPDATE tenants SET weight = $1, quotas = $2 WHERE name = $3 RETURNING {TENANT_COLUMNS}"
    );
    let row: Option<TenantRow> = tx.optional(&sql, args![weight, &quotas, &t.name]).await?;
    let row = row.ok_or(StoreError::NotFound)?;
    Ok((tenant_from(row)?, added == 1))
}

/// What the store enforces for one tenant: its weight and its quotas, each
/// its own or the server's default.
pub async fn policy(tx: &mut dyn Exec, tenant: &str, defaults: &Quotas) -> StoreResult<Policy> {
    let row: Option<(Option<i64>, Option<String>)> = tx.optional(POLICY, args![tenant]).await?;
    policy_from(tenant, row, defaults)
}
