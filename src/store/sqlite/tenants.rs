//! The SQL of tenants on SQLite: their settings (weight and quotas), the
//! policy a write applies to one (its settings over the server's defaults),
//! and its usage.

use super::wdb;
use crate::quota::{window_start, Quotas};
pub use crate::store::tenants::{policy_from, within, Policy, POLICY};
use crate::store::{Millis, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

/// What the store enforces for one tenant: its weight and its quotas, each
/// its own or the server's default.
pub fn policy(conn: &Connection, tenant: &str, defaults: &Quotas) -> StoreResult<Policy> {
    let row: Option<(Option<i64>, Option<String>)> = super::shared(conn, POLICY)?
        .query_row(params![tenant], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .map_err(wdb)?;
    policy_from(tenant, row, defaults)
}

pub fn queued(conn: &Connection, tenant: &str) -> StoreResult<i64> {
    conn.prepare_cached("SELECT queued + waiting FROM tenant_jobs WHERE tenant = ?1")
        .and_then(|mut s| s.query_row(params![tenant], |r| r.get(0)).optional())
        .map(|n: Option<i64>| n.unwrap_or(0))
        .map_err(wdb)
}

/// The tenant's running jobs and the fuel it used in the window `now` is in.
pub fn running_and_fuel(conn: &Connection, tenant: &str, now: Millis) -> StoreResult<(i64, i64)> {
    conn.prepare_cached(
        "SELECT (SELECT running FROM tenant_jobs WHERE tenant = ?1), \
                (SELECT fuel FROM tenant_usage WHERE tenant = ?1 AND window_start = ?2)",
    )
    .and_then(|mut s| {
        s.query_row(params![tenant, window_start(now)], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?.unwrap_or(0),
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            ))
        })
    })
    .map_err(wdb)
}
