//! What every backend decides the same way about tenants, from the rows it
//! reads: a tenant's record, its policy (weight and quotas, the server's
//! defaults where unset), whether a quota admits more, its usage, and
//! whether a claim may give it jobs.

use super::exec::{args, Commit, Exec};
use super::fair::Contender;
use super::records::TenantSettings;
use super::records::{
    ClaimedJob, FuelWindow, JobGauges, Tenant, TenantCaps, TenantUsage, UsageLine, UsageWindow,
};
use super::{Millis, StoreError, StoreResult};
use crate::quota::{window_start, Exceeded, Quotas, DEFAULT_WEIGHT, WINDOW_MS};
use std::collections::HashMap;

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

fn quotas_col(tenant: &str, text: Option<String>) -> StoreResult<Quotas> {
    text.map_or(Ok(Quotas::default()), |q| {
        serde_json::from_str(&q).map_err(|e| {
            StoreError::Internal(format!("unreadable quotas of tenant {tenant:?}: {e}"))
        })
    })
}

pub fn tenant_from((name, created_at, weight, quotas): TenantRow) -> StoreResult<Tenant> {
    Ok(Tenant {
        quotas: quotas_col(&name, quotas)?,
        weight: weight.and_then(|w| u32::try_from(w).ok()),
        name,
        created_at,
    })
}

/// A tenant's weight (as a 64-bit integer) and quotas ($1 its name).
pub const POLICY: &str = "SELECT CAST(weight AS BIGINT), quotas FROM tenants WHERE name = $1";

/// A tenant's weight and quotas, the server's defaults where unset.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub weight: u32,
    pub quotas: Quotas,
}

/// The policy of `tenant` from its row's `weight` and `quotas` (none: a
/// tenant without a row gets the defaults).
pub fn policy_from(
    tenant: &str,
    row: Option<(Option<i64>, Option<String>)>,
    defaults: &Quotas,
) -> StoreResult<Policy> {
    let (weight, quotas) = row.unwrap_or((None, None));
    Ok(Policy {
        weight: weight
            .and_then(|w| u32::try_from(w).ok())
            .filter(|w| *w > 0)
            .unwrap_or(DEFAULT_WEIGHT),
        quotas: quotas_col(tenant, quotas)?.or(defaults),
    })
}

/// Refuses `adding` more of something of which `used` are taken, past `limit`.
pub fn within(quota: &'static str, limit: Option<u64>, used: i64, adding: i64) -> StoreResult<()> {
    match limit {
        Some(limit) if used.saturating_add(adding) > i64::try_from(limit).unwrap_or(i64::MAX) => {
            Err(StoreError::QuotaExceeded(Exceeded { quota, limit }))
        }
        _ => Ok(()),
    }
}

/// Whether a tenant holding `count` components of `bytes` in all may add
/// one of `size` bytes: the rule an upload is held to before it is
/// compiled (`JobStore::component_room`) and when it is stored.
pub fn component_room(q: &Quotas, count: i64, bytes: i64, size: u64) -> StoreResult<()> {
    within("max_components", q.max_components, count, 1)?;
    within(
        "max_component_bytes",
        q.max_component_bytes,
        bytes,
        i64::try_from(size).unwrap_or(i64::MAX),
    )
}

/// What a claim read of a tenant: its name, policy, jobs running and fuel
/// used in the window.
pub type TenantView = (String, Policy, i64, i64);

/// The claim's contenders from what it read of the tenants (each by
/// [`contender`]), the budgets to stamp their jobs with, and whether a
/// tenant was left out for want of room or fuel. Every backend's claim
/// makes them here.
pub fn contenders(
    views: impl IntoIterator<Item = TenantView>,
    caps: &TenantCaps,
    now: Millis,
) -> (Vec<Contender>, Budgets, bool) {
    let (mut contenders, mut budgets, mut left_out) = (Vec::new(), Budgets::default(), false);
    for (tenant, policy, running, fuel_used) in views {
        let cap = caps.of(&tenant);
        match contender(tenant, &policy, (running, fuel_used), cap, now) {
            Some((c, fuel)) => {
                budgets.insert(&c, fuel);
                contenders.push(c);
            }
            None => left_out = true,
        }
    }
    (contenders, budgets, left_out)
}

/// A tenant as a claim sees it: its room under `max_running` and under
/// the claim's cap for it (`TenantCaps`), and its fuel in the window, or
/// `None` when it may be given no job now.
pub fn contender(
    tenant: String,
    policy: &Policy,
    (running, fuel_used): (i64, i64),
    cap: u64,
    now: Millis,
) -> Option<(Contender, Option<FuelWindow>)> {
    let room = policy
        .quotas
        .max_running
        .map_or(u64::MAX, |m| {
            m.saturating_sub(u64::try_from(running).unwrap_or(0))
        })
        .min(cap);
    let fuel = policy.quotas.fuel_per_minute.map(|budget| FuelWindow {
        start: window_start(now),
        budget,
        used: u64::try_from(fuel_used).unwrap_or(0),
    });
    if room == 0 || fuel.is_some_and(|f| f.used >= f.budget) {
        return None;
    }
    Some((
        Contender {
            tenant,
            weight: policy.weight,
            room,
            ran_out: false,
        },
        fuel,
    ))
}

/// What a claim read of each tenant it gave jobs to, told to each of
/// their jobs: the fuel window (the runner's ledger starts from it) and the
/// weight (the runner's dispatch shares its slots by it).
#[derive(Debug, Default)]
pub struct Budgets(HashMap<String, (Option<FuelWindow>, u32)>);

impl Budgets {
    pub fn insert(&mut self, c: &Contender, fuel: Option<FuelWindow>) {
        self.0.insert(c.tenant.clone(), (fuel, c.weight.max(1)));
    }

    /// Tells a claimed job what the claim read of its tenant.
    pub fn stamp(&self, job: &mut ClaimedJob) {
        if let Some(&(fuel, weight)) = self.0.get(&job.tenant) {
            job.fuel = fuel;
            job.weight = weight;
        }
    }
}

/// window_start, fuel, wall_ms, attempts, completed, failed, cancelled,
/// http_requests, http_bytes, cache_hits, fuel_saved.
pub type UsageRow = (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64);

/// The columns of `UsageRow`.
pub const USAGE_COLUMNS: &str = "window_start, fuel, wall_ms, attempts, completed, failed, \
    cancelled, http_requests, http_bytes, cache_hits, fuel_saved";

/// A row of `usage_sql::attempts`: tenant, bucket, task, version, attempts,
/// fuel, wall ms, MiB·ms, requests, bytes.
pub type AttemptUsageRow = (String, i64, String, i64, i64, i64, i64, f64, i64, i64);

/// A row of `usage_sql::cache_hits`: tenant, bucket, task, version, hits,
/// fuel saved.
pub type CacheHitRow = (String, i64, String, i64, i64, i64);

type LineKey = (String, i64, String, i64);

/// The line of a tenant's task version in a bucket, made when missing.
fn line_of(
    lines: &mut std::collections::BTreeMap<LineKey, UsageLine>,
    (tenant, bucket, task, version): LineKey,
) -> &mut UsageLine {
    lines
        .entry((tenant.clone(), bucket, task.clone(), version))
        .or_insert_with(|| UsageLine {
            tenant,
            bucket_start: bucket,
            task,
            version: u32::try_from(version).unwrap_or(0),
            ..UsageLine::default()
        })
}

/// The export's lines from both statements' rows, one per tenant, bucket,
/// task and version, in that order.
pub fn usage_lines(attempts: Vec<AttemptUsageRow>, hits: Vec<CacheHitRow>) -> Vec<UsageLine> {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    let mut lines = std::collections::BTreeMap::new();
    for (tenant, bucket, task, version, count, fuel, wall, mem, req, bytes) in attempts {
        let l = line_of(&mut lines, (tenant, bucket, task, version));
        l.attempts += n(count);
        l.fuel += n(fuel);
        l.wall_ms += n(wall);
        l.memory_mib_ms += mem;
        l.http_requests += n(req);
        l.http_bytes += n(bytes);
    }
    for (tenant, bucket, task, version, count, saved) in hits {
        let l = line_of(&mut lines, (tenant, bucket, task, version));
        l.cache_hits += n(count);
        l.fuel_saved += n(saved);
    }
    lines.into_values().collect()
}

/// The start of the window before the current one, which `usage_from`
/// also wants.
pub fn last_window(now: Millis) -> Millis {
    window_start(now) - WINDOW_MS
}

/// A tenant's usage from its gauges (queued, running, waiting) and the rows
/// of its current and last windows.
pub fn usage_from(jobs: Option<(i64, i64, i64)>, windows: &[UsageRow], now: Millis) -> TenantUsage {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    let window = |start: Millis| {
        windows.iter().find(|w| w.0 == start).map_or(
            UsageWindow {
                start,
                ..UsageWindow::default()
            },
            |w| UsageWindow {
                start,
                fuel: n(w.1),
                wall_ms: n(w.2),
                attempts: n(w.3),
                completed: n(w.4),
                failed: n(w.5),
                cancelled: n(w.6),
                http_requests: n(w.7),
                http_bytes: n(w.8),
                cache_hits: n(w.9),
                fuel_saved: n(w.10),
            },
        )
    };
    TenantUsage {
        jobs: jobs.map_or(JobGauges::default(), |(q, r, w)| JobGauges {
            queued: n(q),
            running: n(r),
            waiting: n(w),
        }),
        current: window(window_start(now)),
        last: window(last_window(now)),
    }
}

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
