//! Writes a write's per-tenant counts (`store::tally`) on PostgreSQL, in
//! its transaction, tenant by tenant in name order, each into the shard of
//! the connection (`SHARD`: migration 0002 says why).

use super::pg;
use crate::store::tally::Tally;
use crate::store::StoreResult;
use sqlx::{Postgres, Transaction};

/// The shard a connection adds to: the same for a whole transaction, so
/// that it never holds two shards of one tenant.
pub const SHARD: &str = "(pg_backend_pid() % 16)::int2";

pub async fn apply(tx: &mut Transaction<'static, Postgres>, tally: Tally) -> StoreResult<()> {
    for (tenant, g) in tally.gauges() {
        sqlx::query(&format!(
            "INSERT INTO tenant_jobs (tenant, shard, queued, running, waiting) \
             VALUES ($1, {SHARD}, $2, $3, $4) \
             ON CONFLICT (tenant, shard) DO UPDATE SET queued = tenant_jobs.queued + excluded.queued, \
             running = tenant_jobs.running + excluded.running, \
             waiting = tenant_jobs.waiting + excluded.waiting"
        ))
        .bind(tenant)
        .bind(g.queued)
        .bind(g.running)
        .bind(g.waiting)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    }
    let window = tally.window();
    for (tenant, s) in tally.spent() {
        sqlx::query(&format!(
            "INSERT INTO tenant_usage (tenant, window_start, shard, fuel, wall_ms, attempts, \
             completed, failed, cancelled) VALUES ($1, $2, {SHARD}, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (tenant, window_start, shard) DO UPDATE SET \
             fuel = tenant_usage.fuel + excluded.fuel, \
             wall_ms = tenant_usage.wall_ms + excluded.wall_ms, \
             attempts = tenant_usage.attempts + excluded.attempts, \
             completed = tenant_usage.completed + excluded.completed, \
             failed = tenant_usage.failed + excluded.failed, \
             cancelled = tenant_usage.cancelled + excluded.cancelled"
        ))
        .bind(tenant)
        .bind(window)
        .bind(s.fuel)
        .bind(s.wall_ms)
        .bind(s.attempts)
        .bind(s.completed)
        .bind(s.failed)
        .bind(s.cancelled)
        .execute(&mut **tx)
        .await
        .map_err(pg)?;
    }
    Ok(())
}
